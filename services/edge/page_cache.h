// Worker: one serving thread of the edge: its own Loop, Server (sharing the
// port with the other workers through SO_REUSEPORT) and its own copy of the
// page table. The table maps decoded URL paths to shared immutable Pages.
// Readers never lock: updates reach each worker as tasks posted to its loop
// (Loop::Post) and are applied between requests on that worker's thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "folio/http/server.h"
#include "folio/metrics/metrics.h"
#include "page.h"

namespace folio::edge {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

using PageTable = std::unordered_map<std::string, std::shared_ptr<const Page>, StringHash, std::equal_to<>>;

inline constexpr std::string_view kNotFoundKey = "/_folio/404";

struct ServeCounters {
  metrics::Counter* ok;
  metrics::Counter* not_modified;
  metrics::Counter* not_found;
  metrics::Counter* other;
};

class Worker {
 public:
  Worker(ServeCounters counters, metrics::Registry* registry, metrics::ReadinessCheck ready);

  http::Loop& loop() { return loop_; }
  http::Server& server() { return *server_; }

  // Loop thread only (post these from elsewhere).
  void Put(const std::string& url, std::shared_ptr<const Page> page);
  void Erase(const std::string& url);
  size_t size() const { return pages_.size(); }

 private:
  void Serve(const http::Request& req, http::Responder r);

  http::Loop loop_;
  http::Router router_;
  std::unique_ptr<http::Server> server_;
  PageTable pages_;
  std::shared_ptr<const Page> builtin_404_;
  std::string scratch_;  // decoded path; reused across requests
  ServeCounters counters_;
};

}  // namespace folio::edge
