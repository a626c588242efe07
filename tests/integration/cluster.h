// Cluster: a whole folio deployment for one test: nats-server -js, one
// folio-ingest and one folio-edge on free loopback ports, data in a temp
// directory. Processes are stopped by the destructor. Logs go to
// <tmp>/ingest.log and <tmp>/edge.log and are printed when a check fails.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "folio/http/client.h"
#include "folio/testing/testing.h"

namespace folio::it {

inline constexpr const char* kToken = "test-token-123";
// folio-storage's tokens in tests (StartStorage passes them as flags).
inline constexpr const char* kStorageWriteToken = "storage-write-token-456";
inline constexpr const char* kStorageReadToken = "storage-read-token-789";

class Cluster {
 public:
  // ingest_args are appended to folio-ingest's command line.
  explicit Cluster(std::vector<std::string> ingest_args = {});
  // As above; with start_services false nothing runs but nats-server until
  // StartIngest()/StartEdge() (e.g. to run `folio-ingest site add` first).
  Cluster(std::vector<std::string> ingest_args, bool start_services);
  // On a NATS of the test's own (e.g. a testing::NatsCluster): no
  // nats-server is started here (nats() must not be called); ingest, the
  // edges and search get `--nats nats_urls` plus bus_args (e.g.
  // {"--nats-replicas", "3"}). Nothing runs until Start*().
  Cluster(std::string nats_urls, std::vector<std::string> bus_args);
  ~Cluster();

  void StartIngest();
  // Sends signum (if ingest still runs) and waits; the exit status as from
  // waitpid (also when it had died already), -1 if it was not running.
  int StopIngest(int signum = 15);
  void StartEdge();
  void StopEdge(int signum = 15);
  // A second folio-edge with the first one's arguments, its own port, and
  // <tmp>/edge2.log.
  void StartEdge2();
  void StopEdge2(int signum = 15);
  std::string edge2_url() const { return "http://127.0.0.1:" + std::to_string(edge2_port_); }

  std::string ingest_url() const { return "http://127.0.0.1:" + std::to_string(ingest_port_); }
  std::string edge_url() const { return "http://127.0.0.1:" + std::to_string(edge_port_); }
  testing::NatsServer& nats() { return *nats_; }
  const std::string& dir() const { return dir_.path(); }

  // POST /api/v1/push with the body as given (and the token unless empty).
  http::ClientResponse Push(const std::string& body, const std::string& token = kToken);
  http::ClientResponse Manifest(const std::string& token = kToken);
  // GET from the edge with optional headers.
  http::ClientResponse EdgeGet(const std::string& path,
                               std::vector<std::pair<std::string, std::string>> headers = {},
                               const std::string& method = "GET");
  // Polls the edge until `path` answers `status` and its body contains
  // `needle` (identity encoding). Returns the last response.
  http::ClientResponse WaitForPage(const std::string& path, int status, const std::string& needle = "",
                                   int timeout_ms = 10000);
  // WaitForPage on another server (edge2_url()): base is "http://host:port".
  static http::ClientResponse WaitForPageOn(const std::string& base, const std::string& path, int status,
                                            const std::string& needle = "", int timeout_ms = 10000);
  // GET `path` from the edge with this Host header.
  http::ClientResponse EdgeGetAt(const std::string& host, const std::string& path);
  // WaitForPage with a Host header.
  http::ClientResponse WaitForPageAt(const std::string& host, const std::string& path, int status,
                                     const std::string& needle = "", int timeout_ms = 10000);
  // Runs `folio push DIR` and returns its exit status; output in *out.
  int RunCli(const std::vector<std::string>& args, std::string* out);
  // Runs `folio-ingest ARGS --data <ingest data dir>` (e.g. {"site", "add",
  // ...}) and returns its exit status; stdout in *out, stderr in *err.
  // `input` (no single quote), if not empty, is its stdin, one line: a
  // password for `site reader add`, never in argv.
  int RunIngest(const std::vector<std::string>& args, std::string* out, std::string* err = nullptr,
                const std::string& input = "");
  std::string ingest_data_dir() const { return dir() + "/ingest"; }
  std::string Logs() const;
  pid_t ingest_pid() const { return ingest_ ? ingest_->pid() : -1; }
  pid_t edge_pid() const { return edge_ ? edge_->pid() : -1; }

  // folio-search (not started by the constructors): --data <dir>/search,
  // plus extra_args; waits for /livez.
  void StartSearch(std::vector<std::string> extra_args = {});
  void StopSearch(int signum = 15);
  std::string search_url() const { return "http://127.0.0.1:" + std::to_string(search_port_); }
  std::string search_data_dir() const { return dir() + "/search"; }
  pid_t search_pid() const { return search_ ? search_->pid() : -1; }

  // folio-storage (not started by the constructors): --data <dir>/storage,
  // --write-token / --read-token as below, plus extra_args; waits for
  // /livez. Its port stays the same across restarts.
  void StartStorage(std::vector<std::string> extra_args = {});
  void StopStorage(int signum = 15);
  std::string storage_url() const { return "http://127.0.0.1:" + std::to_string(storage_port_); }
  std::string storage_write_token() const { return kStorageWriteToken; }  // ingest's --storage-token
  std::string storage_read_token() const { return kStorageReadToken; }    // edges' --storage-token
  pid_t storage_pid() const { return storage_ ? storage_->pid() : -1; }
  // {"--storage", storage_url(), "--storage-token", <the write / read token>}
  // for AddIngestArgs / AddEdgeArgs.
  std::vector<std::string> IngestStorageArgs() const;
  std::vector<std::string> EdgeStorageArgs() const;
  // METHOD <storage>/path with the write token (as ingest would call it).
  http::ClientResponse StorageDo(const std::string& method, const std::string& path, const std::string& body = "");
  // Arguments appended to folio-ingest's / folio-edge's command line from the
  // next StartIngest() / StartEdge() on (e.g. {"--storage", storage_url()}).
  void AddIngestArgs(std::vector<std::string> args);
  void AddEdgeArgs(std::vector<std::string> args);

 private:
  std::string nats_url() const { return nats_ ? nats_->url() : nats_urls_; }

  std::unique_ptr<testing::NatsServer> nats_;
  std::string nats_urls_;                // without nats_
  std::vector<std::string> bus_args_;    // after --nats for ingest, edges, search
  int edge2_port_ = testing::FreePort();
  std::unique_ptr<testing::Process> edge2_;
  testing::TempDir dir_;
  int ingest_port_, edge_port_;
  std::vector<std::string> ingest_args_;
  std::unique_ptr<testing::Process> ingest_, edge_;
  int search_port_ = testing::FreePort();
  std::unique_ptr<testing::Process> search_;
  int storage_port_ = testing::FreePort();
  std::unique_ptr<testing::Process> storage_;
  std::vector<std::string> edge_args_;
};

// {"notes":[{"path":p,"content":c}...],"delete":[...]}
std::string PushBody(const std::vector<std::pair<std::string, std::string>>& notes,
                     const std::vector<std::string>& deletes = {});
// {"notes":[one note embedding `path`],"attachments":[{"path":path,"data":base64(bytes)}]}.
std::string PushWithAttachment(const std::string& note, const std::string& path, const std::string& bytes);
// {"notes":[note_path: `content`] (none when note_path is ""),"attachments":[{"path":p,"data":base64(bytes)}...]}
std::string AttachmentsPushBody(const std::vector<std::pair<std::string, std::string>>& files,
                                const std::string& note_path = "", const std::string& content = "");
// Where an edge serves an attachment: "/assets/<first 16 hex of its SHA-256>/<name>".
std::string AssetPath(const std::string& bytes, const std::string& name);

// POST ingest's `path` (e.g. "/api/v1/push?stage=s&batch=1") with the JSON
// body, the token unless empty, and an Idempotency-Key unless empty. A
// response with status 0 if there was none (ingest died, say).
http::ClientResponse IngestPost(const Cluster& c, const std::string& path, const std::string& body,
                                const std::string& key = "", const std::string& token = kToken);
// A staged batch (POST /api/v1/push?stage=STAGE&batch=N) and its commit.
http::ClientResponse Stage(const Cluster& c, const std::string& stage, int batch, const std::string& body);
http::ClientResponse CommitStage(const Cluster& c, const std::string& stage, const std::string& key = "",
                                 const std::string& body = "");

}  // namespace folio::it
