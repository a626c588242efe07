#include "cluster.h"

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "folio/core/gzip.h"
#include "folio/core/hash.h"
#include "folio/core/json.h"

namespace folio::it {
namespace {
// Benchmarks set FOLIO_PIN_CPU to run the services under taskset on that CPU.
std::vector<std::string> Pinned(std::vector<std::string> argv) {
  const char* cpu = getenv("FOLIO_PIN_CPU");
  if (!cpu || !*cpu) return argv;
  argv.insert(argv.begin(), {"/usr/bin/taskset", "-c", cpu});
  return argv;
}
}  // namespace

Cluster::Cluster(std::vector<std::string> ingest_args)
    : nats_(std::make_unique<testing::NatsServer>()),
      ingest_port_(testing::FreePort()),
      edge_port_(testing::FreePort()),
      ingest_args_(std::move(ingest_args)) {
  StartIngest();
  StartEdge();
}

Cluster::Cluster(std::vector<std::string> ingest_args, bool start_services)
    : nats_(std::make_unique<testing::NatsServer>()),
      ingest_port_(testing::FreePort()),
      edge_port_(testing::FreePort()),
      ingest_args_(std::move(ingest_args)) {
  if (start_services) {
    StartIngest();
    StartEdge();
  }
}

Cluster::Cluster(std::string nats_urls, std::vector<std::string> bus_args)
    : nats_urls_(std::move(nats_urls)),
      bus_args_(std::move(bus_args)),
      ingest_port_(testing::FreePort()),
      edge_port_(testing::FreePort()) {}

Cluster::~Cluster() {
  search_.reset();
  edge2_.reset();
  edge_.reset();
  ingest_.reset();
  storage_.reset();
}

void Cluster::StartIngest() {
  std::vector<std::string> argv{testing::BinPath("folio-ingest"), "--listen",
                                "127.0.0.1:" + std::to_string(ingest_port_), "--nats", nats_url(), "--data",
                                dir() + "/ingest", "--token", kToken, "--site-name", "Test Site",
                                // One id across restarts: a restart after SIGKILL takes the lease back at
                                // once instead of after --lease-ttl (issue 23, services/ingest/leader.h).
                                "--instance", "it-ingest"};
  argv.insert(argv.end(), bus_args_.begin(), bus_args_.end());
  argv.insert(argv.end(), ingest_args_.begin(), ingest_args_.end());
  ingest_ = std::make_unique<testing::Process>(Pinned(argv), std::vector<std::string>{}, dir() + "/ingest.log");
  if (!testing::WaitForHttp(ingest_url() + "/livez", 200, 10000)) {
    fprintf(stderr, "ingest did not start:\n%s\n", Logs().c_str());
  }
}

int Cluster::StopIngest(int signum) {
  int status = ingest_ ? ingest_->Stop(signum) : -1;
  ingest_.reset();
  return status;
}

void Cluster::StartEdge() {
  std::vector<std::string> argv{testing::BinPath("folio-edge"), "--listen",
                                "127.0.0.1:" + std::to_string(edge_port_), "--nats", nats_url()};
  argv.insert(argv.end(), bus_args_.begin(), bus_args_.end());
  argv.insert(argv.end(), edge_args_.begin(), edge_args_.end());
  edge_ = std::make_unique<testing::Process>(Pinned(argv), std::vector<std::string>{}, dir() + "/edge.log");
  if (!testing::WaitForHttp(edge_url() + "/livez", 200, 10000)) {
    fprintf(stderr, "edge did not start:\n%s\n", Logs().c_str());
  }
}

void Cluster::StopEdge(int signum) {
  if (edge_) edge_->Stop(signum);
  edge_.reset();
}

void Cluster::StartEdge2() {
  std::vector<std::string> argv{testing::BinPath("folio-edge"), "--listen",
                                "127.0.0.1:" + std::to_string(edge2_port_), "--nats", nats_url()};
  argv.insert(argv.end(), bus_args_.begin(), bus_args_.end());
  argv.insert(argv.end(), edge_args_.begin(), edge_args_.end());
  edge2_ = std::make_unique<testing::Process>(Pinned(argv), std::vector<std::string>{}, dir() + "/edge2.log");
  if (!testing::WaitForHttp(edge2_url() + "/livez", 200, 10000)) {
    fprintf(stderr, "edge2 did not start:\n%s\n", Logs().c_str());
  }
}

void Cluster::StopEdge2(int signum) {
  if (edge2_) edge2_->Stop(signum);
  edge2_.reset();
}

void Cluster::StartSearch(std::vector<std::string> extra_args) {
  std::vector<std::string> argv{testing::BinPath("folio-search"), "--listen",
                                "127.0.0.1:" + std::to_string(search_port_), "--nats", nats_url(), "--data",
                                search_data_dir()};
  argv.insert(argv.end(), bus_args_.begin(), bus_args_.end());
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  search_ = std::make_unique<testing::Process>(Pinned(argv), std::vector<std::string>{}, dir() + "/search.log");
  if (!testing::WaitForHttp(search_url() + "/livez", 200, 10000)) {
    fprintf(stderr, "search did not start:\n%s\n", Logs().c_str());
  }
}

void Cluster::StopSearch(int signum) {
  if (search_) search_->Stop(signum);
  search_.reset();
}

void Cluster::StartStorage(std::vector<std::string> extra_args) {
  std::vector<std::string> argv{testing::BinPath("folio-storage"), "--listen",
                                "127.0.0.1:" + std::to_string(storage_port_), "--data", dir() + "/storage",
                                "--write-token", kStorageWriteToken, "--read-token", kStorageReadToken};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  storage_ = std::make_unique<testing::Process>(Pinned(argv), std::vector<std::string>{}, dir() + "/storage.log");
  if (!testing::WaitForHttp(storage_url() + "/livez", 200, 10000)) {
    fprintf(stderr, "storage did not start:\n%s\n", Logs().c_str());
  }
}

void Cluster::StopStorage(int signum) {
  if (storage_) storage_->Stop(signum);
  storage_.reset();
}

std::vector<std::string> Cluster::IngestStorageArgs() const {
  return {"--storage", storage_url(), "--storage-token", storage_write_token()};
}

std::vector<std::string> Cluster::EdgeStorageArgs() const {
  return {"--storage", storage_url(), "--storage-token", storage_read_token()};
}

http::ClientResponse Cluster::StorageDo(const std::string& method, const std::string& path, const std::string& body) {
  http::ClientRequest req;
  req.method = method;
  req.url = storage_url() + path;
  req.body = body;
  req.headers.emplace_back("Authorization", std::string("Bearer ") + kStorageWriteToken);
  auto r = http::Fetch(req);
  return r.ok() ? *r : http::ClientResponse{};
}

void Cluster::AddIngestArgs(std::vector<std::string> args) {
  ingest_args_.insert(ingest_args_.end(), args.begin(), args.end());
}

void Cluster::AddEdgeArgs(std::vector<std::string> args) {
  edge_args_.insert(edge_args_.end(), args.begin(), args.end());
}

http::ClientResponse Cluster::Push(const std::string& body, const std::string& token) {
  return IngestPost(*this, "/api/v1/push", body, "", token);
}

http::ClientResponse Cluster::Manifest(const std::string& token) {
  auto r = http::Get(ingest_url() + "/api/v1/manifest", {{"Authorization", "Bearer " + token}});
  return r.ok() ? *r : http::ClientResponse{};
}

http::ClientResponse Cluster::EdgeGet(const std::string& path,
                                      std::vector<std::pair<std::string, std::string>> headers,
                                      const std::string& method) {
  http::ClientRequest req;
  req.method = method;
  req.url = edge_url() + path;
  req.headers = std::move(headers);
  auto r = http::Fetch(req);
  return r.ok() ? *r : http::ClientResponse{};
}

http::ClientResponse Cluster::WaitForPage(const std::string& path, int status, const std::string& needle,
                                          int timeout_ms) {
  return WaitForPageOn(edge_url(), path, status, needle, timeout_ms);
}

http::ClientResponse Cluster::WaitForPageOn(const std::string& base, const std::string& path, int status,
                                            const std::string& needle, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  http::ClientResponse r;
  do {
    auto got = http::Get(base + path);
    r = got.ok() ? *got : http::ClientResponse{};
    if (r.status == status && (needle.empty() || r.body.find(needle) != std::string::npos)) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  } while (std::chrono::steady_clock::now() < deadline);
  return r;
}

http::ClientResponse Cluster::EdgeGetAt(const std::string& host, const std::string& path) {
  return EdgeGet(path, {{"Host", host}});
}

http::ClientResponse Cluster::WaitForPageAt(const std::string& host, const std::string& path, int status,
                                            const std::string& needle, int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  http::ClientResponse r;
  do {
    r = EdgeGetAt(host, path);
    if (r.status == status && (needle.empty() || r.body.find(needle) != std::string::npos)) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  } while (std::chrono::steady_clock::now() < deadline);
  return r;
}

int Cluster::RunIngest(const std::vector<std::string>& args, std::string* out, std::string* err,
                       const std::string& input) {
  std::string err_path = dir() + "/ingest-command.err";
  std::string cmd = input.empty() ? "" : "printf '%s\\n' '" + input + "' | ";
  cmd += testing::BinPath("folio-ingest");
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " --data '" + ingest_data_dir() + "' 2>'" + err_path + "'";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out->append(buf, n);
  int st = pclose(p);
  if (err) {
    std::ifstream in(err_path);
    std::stringstream ss;
    ss << in.rdbuf();
    *err = ss.str();
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int Cluster::RunCli(const std::vector<std::string>& args, std::string* out) {
  std::string cmd = testing::BinPath("folio");
  for (const auto& a : args) cmd += " '" + a + "'";
  return testing::RunShell(cmd, out);
}

std::string Cluster::Logs() const {
  std::string all;
  for (const char* name : {"ingest.log", "edge.log", "edge2.log", "search.log", "storage.log"}) {
    std::ifstream in(dir() + "/" + name);
    std::stringstream ss;
    ss << in.rdbuf();
    all += std::string("--- ") + name + "\n" + ss.str();
  }
  return all;
}

std::string PushBody(const std::vector<std::pair<std::string, std::string>>& notes,
                     const std::vector<std::string>& deletes) {
  JsonWriter w;
  w.BeginObject().Key("notes").BeginArray();
  for (const auto& [p, c] : notes) w.BeginObject().Key("path").String(p).Key("content").String(c).EndObject();
  w.EndArray().Key("delete").BeginArray();
  for (const auto& d : deletes) w.String(d);
  w.EndArray().EndObject();
  return w.Take();
}

std::string PushWithAttachment(const std::string& note, const std::string& path, const std::string& bytes) {
  return AttachmentsPushBody({{path, bytes}}, note, "# Pic\n\n![[" + path + "]]\n");
}

std::string AttachmentsPushBody(const std::vector<std::pair<std::string, std::string>>& files,
                                const std::string& note_path, const std::string& content) {
  JsonWriter w;
  w.BeginObject();
  if (!note_path.empty()) {
    w.Key("notes").BeginArray();
    w.BeginObject().Key("path").String(note_path).Key("content").String(content).EndObject();
    w.EndArray();
  }
  w.Key("attachments").BeginArray();
  for (const auto& [path, bytes] : files) {
    w.BeginObject().Key("path").String(path).Key("data").String(Base64Encode(bytes)).EndObject();
  }
  w.EndArray().EndObject();
  return w.Take();
}

std::string AssetPath(const std::string& bytes, const std::string& name) {
  return "/assets/" + Sha256Hex(bytes).substr(0, 16) + "/" + name;
}

http::ClientResponse IngestPost(const Cluster& c, const std::string& path, const std::string& body,
                                const std::string& key, const std::string& token) {
  http::ClientRequest req;
  req.method = "POST";
  req.url = c.ingest_url() + path;
  req.body = body;
  req.headers.emplace_back("Content-Type", "application/json");
  if (!token.empty()) req.headers.emplace_back("Authorization", "Bearer " + token);
  if (!key.empty()) req.headers.emplace_back("Idempotency-Key", key);
  auto r = http::Fetch(req);
  return r.ok() ? *r : http::ClientResponse{};
}

http::ClientResponse Stage(const Cluster& c, const std::string& stage, int batch, const std::string& body) {
  return IngestPost(c, "/api/v1/push?stage=" + stage + "&batch=" + std::to_string(batch), body);
}

http::ClientResponse CommitStage(const Cluster& c, const std::string& stage, const std::string& key,
                                 const std::string& body) {
  return IngestPost(c, "/api/v1/push/commit?stage=" + stage, body, key);
}

}  // namespace folio::it
