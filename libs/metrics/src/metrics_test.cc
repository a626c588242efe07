// libs/metrics against the real thing: the process metrics read from
// /proc/self, the request histogram fed from several threads, and
// OpsEndpoints on a real http::Server spoken to with the libcurl client.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "folio/http/client.h"
#include "folio/http/loop.h"
#include "folio/http/server.h"
#include "folio/core/disk_space.h"
#include "folio/metrics/disk.h"
#include "folio/metrics/metrics.h"
#include "folio/metrics/refresher.h"
#include "folio/testing/count_allocations.h"  // t_allocations: heap allocations per thread

using namespace folio;

namespace {

// The value of the sample line that starts with `series` followed by a
// space, or -1 if there is none.
double Sample(const std::string& text, const std::string& series) {
  size_t at = 0;
  while ((at = text.find(series + " ", at)) != std::string::npos) {
    if (at == 0 || text[at - 1] == '\n') return strtod(text.c_str() + at + series.size() + 1, nullptr);
    at += series.size();
  }
  return -1;
}

}  // namespace

TEST_CASE("process metrics: read from /proc/self at scrape time") {
  metrics::Registry registry;
  std::string before = registry.Serialize();
  CHECK(before.find("# TYPE process_cpu_seconds_total counter") != std::string::npos);
  double rss = Sample(before, "process_resident_memory_bytes");
  CHECK(rss > 1024 * 1024);
  CHECK(Sample(before, "process_virtual_memory_bytes") >= rss);
  double start = Sample(before, "process_start_time_seconds");
  double now = static_cast<double>(time(nullptr));
  CHECK(start > now - 3600);
  CHECK(start <= now + 1);
  rlimit rl{};
  REQUIRE(getrlimit(RLIMIT_NOFILE, &rl) == 0);
  CHECK(Sample(before, "process_max_fds") == static_cast<double>(rl.rlim_cur));
  // The memory limit: the cgroup's, never above the machine's memory, and
  // above what the process holds (it runs).
  double limit = Sample(before, "folio_memory_limit_bytes");
  CHECK(limit > rss);
  CHECK(limit <= static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE)));

  // Computed at scrape time: an opened descriptor and burnt CPU show.
  double fds = Sample(before, "process_open_fds");
  CHECK(fds >= 3);
  int extra = dup(0);
  REQUIRE(extra >= 0);
  double cpu0 = Sample(before, "process_cpu_seconds_total");
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  volatile uint64_t spin = 0;
  while (std::chrono::steady_clock::now() < until) spin = spin + 1;
  std::string after = registry.Serialize();
  close(extra);
  CHECK(Sample(after, "process_open_fds") == fds + 1);
  CHECK(Sample(after, "process_cpu_seconds_total") > cpu0);
}

TEST_CASE("request metrics: one series per route class and status, from many threads") {
  metrics::Registry registry;
  http::RequestObserver* o = registry.request_observer();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([o] {
      for (int i = 0; i < 1000; ++i) {
        o->OnRequestDone("page", 200, 0.0002);
        o->OnRequestDone(i % 2 ? "asset" : "page", 304, 0.00005);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int c = 0; c < metrics::RequestMetrics::kMaxClasses + 4; ++c) {
    o->OnRequestDone("class" + std::to_string(c), 500, 20);  // past kMaxClasses: "other"
  }
  std::string text = registry.Serialize();
  const std::string m = "folio_http_request_duration_seconds";
  CHECK(Sample(text, m + "_count{code=\"200\",route=\"page\"}") == 4000);
  CHECK(Sample(text, m + "_count{code=\"304\",route=\"page\"}") == 2000);
  CHECK(Sample(text, m + "_count{code=\"304\",route=\"asset\"}") == 2000);
  CHECK(Sample(text, m + "_bucket{code=\"200\",route=\"page\",le=\"0.0001\"}") == 0);
  CHECK(Sample(text, m + "_bucket{code=\"200\",route=\"page\",le=\"0.00025\"}") == 4000);
  CHECK(Sample(text, m + "_bucket{code=\"500\",route=\"class0\",le=\"+Inf\"}") == 1);
  // The table holds "other", "page", "asset" and 13 more: class0..class12;
  // the 7 classes past it count as "other".
  CHECK(Sample(text, m + "_count{code=\"500\",route=\"class12\"}") == 1);
  CHECK(Sample(text, m + "_count{code=\"500\",route=\"class13\"}") == -1);
  CHECK(Sample(text, m + "_count{code=\"500\",route=\"other\"}") == 7);
}

TEST_CASE("OpsEndpoints: a mounted router's requests land in the histogram by route class; folio_ready") {
  metrics::Registry registry;
  http::Loop loop;
  http::Router router;
  ServiceBasics basics;
  std::atomic<bool> ready{false};
  metrics::OpsEndpoints ops(&loop, &registry, [&ready] { return ready ? std::string() : "loading"; }, basics);
  ops.MountPublic(&router);
  router.Handle("GET", "/api/thing", [](const http::Request&, http::Responder r) {
    r.SendError(404, "not_found", "none");
  }, "api");
  http::Server server(&loop, &router);
  REQUIRE(server.Listen("127.0.0.1", 0).ok());
  std::thread thread([&] { loop.Run(); });
  std::string base = "http://127.0.0.1:" + std::to_string(server.port());
  CHECK(http::Get(base + "/api/thing")->status == 404);
  CHECK(http::Get(base + "/readyz")->status == 503);
  // folio_ready follows the readiness check at each scrape.
  CHECK(Sample(http::Get(base + "/metrics")->body, "folio_ready") == 0);
  ready = true;
  CHECK(Sample(http::Get(base + "/metrics")->body, "folio_ready") == 1);
  CHECK(http::Get(base + "/nope")->status == 404);
  // A request is reported once its answer is written; a later scrape sees it.
  std::string text;
  for (int i = 0; i < 200; ++i) {
    auto r = http::Get(base + "/metrics");
    REQUIRE(r.ok());
    text = r->body;
    if (Sample(text, "folio_http_request_duration_seconds_count{code=\"404\",route=\"other\"}") == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(Sample(text, "folio_http_request_duration_seconds_count{code=\"404\",route=\"api\"}") == 1);
  CHECK(Sample(text, "folio_http_request_duration_seconds_count{code=\"503\",route=\"ops\"}") == 1);
  CHECK(Sample(text, "folio_http_request_duration_seconds_count{code=\"200\",route=\"ops\"}") >= 2);
  CHECK(Sample(text, "folio_http_request_duration_seconds_count{code=\"404\",route=\"other\"}") == 1);
  loop.Stop();
  thread.join();
}

TEST_CASE("request metrics: observing the keep-alive prepared path allocates nothing per request") {
  static const char kHead[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n";
  metrics::Registry registry;
  auto keep = std::make_shared<int>(0);
  std::vector<uint64_t> seen;
  seen.reserve(16);
  http::Loop loop;
  http::Router router;
  router.Handle("GET", "/page", [&](const http::Request&, http::Responder r) {
    seen.push_back(t_allocations);  // the loop thread's count at each request
    r.SendPrepared({kHead, "ok", keep});
  }, "page");
  router.Observe(registry.request_observer());
  http::Server server(&loop, &router);
  REQUIRE(server.Listen("127.0.0.1", 0).ok());
  std::thread thread([&] { loop.Run(); });
  {
    // One keep-alive connection, requests one after another.
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(server.port()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
    for (int i = 0; i < 8; ++i) {
      std::string req = "GET /page HTTP/1.1\r\nHost: t\r\n\r\n";
      REQUIRE(send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size()));
      std::string got;
      char buf[512];
      while (got.find("\r\n\r\nok") == std::string::npos) {
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        REQUIRE(n > 0);
        got.append(buf, static_cast<size_t>(n));
      }
    }
    close(fd);
  }
  loop.Stop();
  thread.join();
  // The first request resolves its series (allocating); from the third on,
  // a request and the observation of the one before allocate nothing, but
  // for the Date line rebuilt at most once a second: allow one.
  REQUIRE(seen.size() == 8);
  int zero = 0;
  for (size_t i = 3; i < seen.size(); ++i) zero += seen[i] == seen[i - 1] ? 1 : 0;
  CHECK(zero >= 4);
  CHECK(Sample(registry.Serialize(), "folio_http_request_duration_seconds_count{code=\"200\",route=\"page\"}") >= 7);
}

TEST_CASE("scraped metrics: read from their source at each scrape; the body budget's four") {
  metrics::Registry registry;
  std::atomic<int> full{0};
  registry.AddScrapedGauge("test_disk_full", "1 while full", [&] { return static_cast<double>(full.load()); });
  http::BodyBudget budget(1000);
  metrics::ExportBodyBudget(&registry, &budget);
  std::string text = registry.Serialize();
  CHECK(text.find("# TYPE test_disk_full gauge") != std::string::npos);
  CHECK(Sample(text, "test_disk_full") == 0);
  CHECK(Sample(text, "folio_http_body_budget_bytes") == 1000);
  CHECK(Sample(text, "folio_http_body_bytes_in_flight") == 0);
  full = 1;
  REQUIRE(budget.TryReserve(600));
  CHECK(!budget.TryReserve(600));
  budget.Release(600);
  text = registry.Serialize();  // no refresh in between: the values of this instant
  CHECK(Sample(text, "test_disk_full") == 1);
  CHECK(Sample(text, "folio_http_body_bytes_in_flight") == 0);
  CHECK(Sample(text, "folio_http_body_bytes_in_flight_peak") == 600);
  CHECK(text.find("# TYPE folio_http_body_budget_refusals_total counter") != std::string::npos);
  CHECK(Sample(text, "folio_http_body_budget_refusals_total") == 1);
}

TEST_CASE("OpsEndpoints: degraded is ready (200) with the reason, and folio_degraded 1") {
  metrics::Registry registry;
  http::Loop loop;
  http::Router router;
  std::atomic<bool> ready{true};
  std::atomic<bool> short_of{false};
  metrics::OpsEndpoints ops(&loop, &registry, [&] { return ready ? std::string() : "loading"; }, ServiceBasics{},
                            [&] { return short_of ? std::string("storage unreachable: pushes with attachments fail") : ""; });
  ops.MountPublic(&router);
  http::Server server(&loop, &router);
  REQUIRE(server.Listen("127.0.0.1", 0).ok());
  std::thread thread([&] { loop.Run(); });
  std::string base = "http://127.0.0.1:" + std::to_string(server.port());
  CHECK(http::Get(base + "/readyz")->body == "{\"status\":\"ready\"}");
  CHECK(Sample(http::Get(base + "/metrics")->body, "folio_degraded") == 0);
  short_of = true;
  auto degraded = http::Get(base + "/readyz");
  CHECK(degraded->status == 200);
  CHECK(degraded->body ==
        "{\"status\":\"ready\",\"degraded\":\"storage unreachable: pushes with attachments fail\"}");
  std::string text = http::Get(base + "/metrics")->body;
  CHECK(Sample(text, "folio_degraded") == 1);
  CHECK(Sample(text, "folio_ready") == 1);
  ready = false;  // not ready wins
  CHECK(http::Get(base + "/readyz")->status == 503);
  loop.Stop();
  thread.join();
}

TEST_CASE("refresher: runs at once, then every interval on its own thread, until destroyed") {
  std::atomic<int> runs{0};
  {
    metrics::Refresher r(20, [&runs] {
      ++runs;
      return true;
    });
    for (int i = 0; i < 200 && runs.load() < 3; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK(runs.load() >= 3);
  }
  int after = runs.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  CHECK(runs.load() == after);  // stopped with its owner
}

TEST_CASE("disk gauges: the data directory's file system, as statvfs and df see it") {
  metrics::Registry registry;
  metrics::DiskGauges disk(&registry, "/tmp", /*interval_ms=*/60'000);
  std::string text = registry.Serialize();
  auto usage = DiskUsageOf("/tmp");
  REQUIRE(usage.ok());
  double size = Sample(text, "folio_disk_size_bytes");
  double free_bytes = Sample(text, "folio_disk_free_bytes");
  CHECK(size == static_cast<double>(usage->size_bytes));
  CHECK(free_bytes > 0);
  CHECK(free_bytes <= size);
  // A directory that does not exist: nothing exported rather than a 0 that
  // would read as a full disk.
  metrics::Registry other;
  metrics::DiskGauges missing(&other, "/nonexistent-folio-dir", 60'000);
  CHECK(Sample(other.Serialize(), "folio_disk_size_bytes") == -1);
}
