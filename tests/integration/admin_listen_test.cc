// --admin-listen (issue 9 item 8): with it, every service answers /metrics,
// /livez and /readyz only on the admin address, and its public port serves
// no /metrics (an unknown path there, a page lookup on the edge). The edge
// binds its admin port at start, before it has replayed the pages, so probes
// learn why it is not ready while its public port is not bound at all.
// Real processes, a real nats-server, HTTP.
#include <doctest/doctest.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include "folio/http/client.h"
#include "folio/testing/testing.h"

namespace folio {
namespace {

bool Has(const std::string& hay, std::string_view needle) { return hay.find(needle) != std::string::npos; }

http::ClientResponse Get(const std::string& url) {
  auto r = http::Get(url);
  return r.ok() ? *r : http::ClientResponse{};
}

std::string Url(int port, const std::string& path) { return "http://127.0.0.1:" + std::to_string(port) + path; }

struct Service {
  std::string name;
  std::vector<std::string> extra;  // flags besides --listen, --admin-listen, --nats
  std::string public_path;         // a path the public port does serve
};

}  // namespace

TEST_CASE("--admin-listen: every service serves /metrics, /livez, /readyz on the admin port only") {
  testing::NatsServer nats;
  testing::TempDir dir;
  const std::vector<Service> services = {
      {"folio-ingest", {"--data", dir.path() + "/ingest"}, "/api/v1/manifest"},
      {"folio-search", {"--data", dir.path() + "/search"}, "/api/v1/search?q=x"},
      {"folio-storage", {"--data", dir.path() + "/storage"}, "/blobs"},
      {"folio-edge", {"--threads", "2"}, "/"},
  };
  for (const Service& svc : services) {
    INFO(svc.name);
    int pub = testing::FreePort(), admin = testing::FreePort();
    std::vector<std::string> argv{testing::BinPath(svc.name), "--listen", "127.0.0.1:" + std::to_string(pub),
                                  "--admin-listen", "127.0.0.1:" + std::to_string(admin), "--nats", nats.url()};
    argv.insert(argv.end(), svc.extra.begin(), svc.extra.end());
    const std::string log = dir.path() + "/" + svc.name + ".log";
    testing::Process proc(argv, {}, log);
    REQUIRE_MESSAGE(testing::WaitForHttp(Url(admin, "/readyz"), 200, 30000), "see ", log);

    auto metrics = Get(Url(admin, "/metrics"));
    CHECK(metrics.status == 200);
    CHECK(Has(metrics.body, "# TYPE folio_"));
    CHECK(Get(Url(admin, "/livez")).status == 200);

    // The public port is up and serves its own paths, but no ops endpoint.
    CHECK(Get(Url(pub, svc.public_path)).status != 0);
    for (const char* path : {"/metrics", "/livez", "/readyz"}) {
      INFO(path);
      auto r = Get(Url(pub, path));
      CHECK(r.status != 0);
      CHECK(r.status != 200);
      CHECK(!Has(r.body, "# TYPE"));
      CHECK(!Has(r.body, "\"status\""));
      if (svc.name == "folio-edge") {
        CHECK(r.status == 404);  // a page lookup, like any other path
        CHECK(Has(r.Header("Content-Type"), "text/html"));
      } else if (svc.name != "folio-storage") {  // storage may ask for its token first
        CHECK(r.status == 404);
        CHECK(Has(r.body, "\"error\""));
      }
    }
    // SIGTERM drains both servers, then the service exits cleanly.
    int status = proc.Stop(SIGTERM, 30000);
    CHECK(status != -1);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}

TEST_CASE("--admin-listen: the edge's admin port answers before the edge is ready, its public port only after") {
  testing::NatsServer nats;
  testing::TempDir dir;
  nats.Stop();  // the edge starts while NATS is down
  int pub = testing::FreePort(), admin = testing::FreePort();
  testing::Process edge({testing::BinPath("folio-edge"), "--listen", "127.0.0.1:" + std::to_string(pub), "--admin-listen",
                         "127.0.0.1:" + std::to_string(admin), "--nats", nats.url(), "--threads", "2"},
                        {}, dir.path() + "/edge.log");
  REQUIRE(testing::WaitForHttp(Url(admin, "/livez"), 200, 10000));
  auto ready = Get(Url(admin, "/readyz"));
  CHECK(ready.status == 503);  // at once: "connecting to NATS at ...", then the failure
  for (int i = 0; i < 600 && !Has(ready.body, "NATS not reachable"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ready = Get(Url(admin, "/readyz"));
  }
  CHECK(ready.status == 503);
  CHECK(Has(ready.body, "NATS not reachable"));
  CHECK(Get(Url(pub, "/")).status == 0);  // not bound: nothing to answer 404 with
  CHECK(Get(Url(pub, "/metrics")).status == 0);

  nats.Start();
  REQUIRE(testing::WaitForHttp(Url(admin, "/readyz"), 200, 30000));
  REQUIRE(testing::WaitForHttp(Url(pub, "/"), 404, 10000));  // no site published: the built-in 404 page
  CHECK(Get(Url(pub, "/metrics")).status == 404);
}

TEST_CASE("without --admin-listen the public port serves /metrics, /livez and /readyz") {
  testing::NatsServer nats;
  testing::TempDir dir;
  int pub = testing::FreePort();
  testing::Process edge({testing::BinPath("folio-edge"), "--listen", "127.0.0.1:" + std::to_string(pub), "--nats",
                         nats.url(), "--threads", "1"},
                        {}, dir.path() + "/edge.log");
  REQUIRE(testing::WaitForHttp(Url(pub, "/readyz"), 200, 30000));
  CHECK(Get(Url(pub, "/livez")).status == 200);
  auto metrics = Get(Url(pub, "/metrics"));
  CHECK(metrics.status == 200);
  CHECK(Has(metrics.body, "# TYPE folio_edge_requests_total"));
}

}  // namespace folio
