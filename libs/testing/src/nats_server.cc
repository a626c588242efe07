// NatsServer and WaitForHttp.
#include <filesystem>
#include <curl/curl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
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

// One GET; returns the HTTP status or 0 if nothing answered.
long GetStatus(const std::string& url) {
  CURL* h = curl_easy_init();
  if (h == nullptr) return 0;
  curl_easy_setopt(h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 1000L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, DiscardBody);
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

NatsServer::~NatsServer() { delete proc_; }

std::string NatsServer::url() const { return "nats://127.0.0.1:" + std::to_string(port_); }

void NatsServer::Start() {
  if (proc_) return;
  std::string log = dir_.path() + "/nats-server.log";
  proc_ = new Process({"nats-server", "-js", "-a", "127.0.0.1", "-p", std::to_string(port_),
                       "-m", std::to_string(monitor_port_), "-sd", dir_.path() + "/store"},
                      {}, log);
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

void NatsServer::Wipe() {
  std::error_code ec;
  std::filesystem::remove_all(dir_.path() + "/store", ec);
}

}  // namespace folio::testing
