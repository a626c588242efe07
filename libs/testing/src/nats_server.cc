// NatsServer and WaitForHttp.
#include <filesystem>
#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include "folio/testing/testing.h"

namespace folio::testing {

namespace {

size_t DiscardBody(char*, size_t size, size_t n, void*) { return size * n; }

void InitCurlOnce() {
  static const bool done = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  (void)done;
}

size_t AppendBody(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// One GET; returns the HTTP status or 0 if nothing answered. The body goes
// to *body unless null.
long GetStatus(const std::string& url, std::string* body = nullptr) {
  CURL* h = curl_easy_init();
  if (h == nullptr) return 0;
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, body != nullptr ? 5000L : 1000L);
  if (body != nullptr) {
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, AppendBody);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
  } else {
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, DiscardBody);
  }
  long status = 0;
  if (curl_easy_perform(h) == CURLE_OK) curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(h);
  return status;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

bool WaitForHttp(const std::string& url, int status, int timeout_ms) {
  InitCurlOnce();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (GetStatus(url) == status) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

NatsServer::NatsServer() : port_(FreePort()) {
  do {
    monitor_port_ = FreePort();
  } while (monitor_port_ == port_);
  Start();
}

NatsServer::NatsServer(NatsClusterNode node) : node_(std::move(node)), port_(FreePort()) {
  do {
    monitor_port_ = FreePort();
  } while (monitor_port_ == port_ || monitor_port_ == node_.cluster_port);
  Start();
}

NatsServer::~NatsServer() { delete proc_; }

std::string NatsServer::Monitor(const std::string& path_and_query) const {
  InitCurlOnce();
  std::string body;
  if (GetStatus("http://127.0.0.1:" + std::to_string(monitor_port_) + path_and_query, &body) != 200) return "";
  return body;
}

void NatsServer::Kill() {
  if (proc_) proc_->Kill();
  delete proc_;
  proc_ = nullptr;
}

std::string NatsServer::url() const { return "nats://127.0.0.1:" + std::to_string(port_); }

void NatsServer::Start() {
  if (proc_) return;
  std::string log = dir_.path() + "/nats-server.log";
  std::vector<std::string> argv{"nats-server", "-js", "-a", "127.0.0.1", "-p", std::to_string(port_),
                                "-m", std::to_string(monitor_port_), "-sd", dir_.path() + "/store"};
  if (!node_.cluster_name.empty()) {
    // JetStream clustering needs a server name and a cluster name.
    std::string routes;
    for (int p : node_.route_ports) {
      routes += (routes.empty() ? "" : ",") + std::string("nats://127.0.0.1:") + std::to_string(p);
    }
    argv.insert(argv.end(), {"--server_name", node_.server_name, "--cluster_name", node_.cluster_name,
                             "--cluster", "nats://127.0.0.1:" + std::to_string(node_.cluster_port),
                             "--routes", routes});
  }
  proc_ = new Process(argv, {}, log);
  // The port alone is not enough: JetStream answers only once it has
  // recovered its store, which /healthz reports.
  std::string health = "http://127.0.0.1:" + std::to_string(monitor_port_) +
                       "/healthz?js-enabled-only=true";
  if (!WaitForHttp(health, 200, 10000)) {
    std::cerr << "folio::testing: nats-server did not become ready on port " << port_
              << "; its log:\n" << ReadFile(log) << std::endl;
    std::abort();
  }
}

void NatsServer::Restart() {
  Stop();
  Start();
}

void NatsServer::Stop() {
  delete proc_;  // SIGTERM, then SIGKILL after 5 s
  proc_ = nullptr;
}

NatsCluster::NatsCluster(int nodes) {
  std::vector<int> cluster_ports;
  while (static_cast<int>(cluster_ports.size()) < nodes) cluster_ports.push_back(FreePort());
  for (int i = 0; i < nodes; ++i) {
    NatsClusterNode n;
    n.server_name = "n" + std::to_string(i);
    n.cluster_name = "folio-test";
    n.cluster_port = cluster_ports[static_cast<size_t>(i)];
    for (int j = 0; j < nodes; ++j) {
      if (j != i) n.route_ports.push_back(cluster_ports[static_cast<size_t>(j)]);
    }
    nodes_.push_back(std::make_unique<NatsServer>(std::move(n)));
  }
  if (!WaitHealthy(60000)) {
    std::cerr << "folio::testing: the NATS cluster did not elect a JetStream meta leader" << std::endl;
    std::abort();
  }
}

std::string NatsCluster::urls() const {
  std::string out;
  for (const auto& n : nodes_) out += (out.empty() ? "" : ",") + n->url();
  return out;
}

bool NatsCluster::WaitHealthy(int timeout_ms) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (auto& n : nodes_) {
    if (!n->running()) continue;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    std::string health = "http://127.0.0.1:" + std::to_string(n->monitor_port()) + "/healthz";
    if (!WaitForHttp(health, 200, static_cast<int>(std::max<int64_t>(left.count(), 1)))) return false;
  }
  return true;
}

void NatsServer::Wipe() {
  std::error_code ec;
  std::filesystem::remove_all(dir_.path() + "/store", ec);
}

}  // namespace folio::testing
