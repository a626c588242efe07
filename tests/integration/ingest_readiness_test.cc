// Ingest's /readyz with its --storage (issue 22: it said ready while the
// storage it was configured with had never started). The rule
// (services/ingest/storage_probe.h): storage missing is "ready, degraded",
// not "not ready": /readyz stays 200 and names what is missing and what
// still works, folio_degraded is 1 and folio_ingest_storage_up 0; pushes
// without attachments go on, pushes with attachments fail with 503 until
// storage answers. Real nats-server, folio-ingest and folio-storage.
#include <doctest/doctest.h>

#include <string>

#include "cluster.h"
#include "folio/core/hash.h"
#include "folio/core/json.h"
#include "test_util.h"

using namespace folio;
using namespace folio::it;

namespace {

http::ClientResponse Get(const std::string& url) {
  auto r = http::Get(url);
  return r.ok() ? *r : http::ClientResponse{};
}

}  // namespace

TEST_CASE("issue 22: ingest is ready but degraded while its --storage is missing, and readiness follows storage") {
  Cluster c({}, /*start_services=*/false);
  c.AddIngestArgs(c.IngestStorageArgs());  // nothing listens there yet
  c.StartIngest();
  INFO(c.Logs());
  const std::string ingest = c.ingest_url();
  auto degraded = [&] {
    auto r = Get(ingest + "/readyz");
    return r.status == 200 && r.body.find("\"degraded\"") != std::string::npos &&
           r.body.find("unreachable") != std::string::npos;
  };
  REQUIRE(Eventually(degraded));
  const std::string why = Get(ingest + "/readyz").body;
  CHECK(why.find(c.storage_url()) != std::string::npos);
  CHECK(why.find("pushes with attachments fail") != std::string::npos);
  CHECK(why.find("pushes without attachments") != std::string::npos);
  std::string metrics = Get(ingest + "/metrics").body;
  CHECK(Metric(metrics, "folio_ready") == 1);
  CHECK(Metric(metrics, "folio_degraded") == 1);
  CHECK(Metric(metrics, "folio_ingest_storage_up") == 0);
  // What needs no storage works; what does is refused, and may be retried.
  CHECK(c.Push(PushBody({{"Plain.md", "# Plain\n\nno attachment\n"}})).status == 200);
  CHECK(c.Push(PushWithAttachment("Pic.md", "pic.png", "\x89PNG not really")).status == 503);

  // With --admin-listen storage's /readyz is not on the port ingest talks
  // to: the probe must not depend on it.
  c.StartStorage({"--admin-listen", "127.0.0.1:" + std::to_string(testing::FreePort())});
  REQUIRE(Eventually([&] { return Get(ingest + "/readyz").body == "{\"status\":\"ready\"}"; }));
  metrics = Get(ingest + "/metrics").body;
  CHECK(Metric(metrics, "folio_degraded") == 0);
  CHECK(Metric(metrics, "folio_ingest_storage_up") == 1);
  CHECK(c.Push(PushWithAttachment("Pic.md", "pic.png", "\x89PNG not really")).status == 200);

  c.StopStorage();
  CHECK(Eventually(degraded));
  CHECK(c.Logs().find("storage missing: ingest is ready but degraded") != std::string::npos);
}

TEST_CASE("issue 22: ingest without --storage is never degraded") {
  Cluster c({}, /*start_services=*/false);
  c.StartIngest();
  INFO(c.Logs());
  REQUIRE(Eventually([&] { return Get(c.ingest_url() + "/readyz").status == 200; }));
  CHECK(Get(c.ingest_url() + "/readyz").body == "{\"status\":\"ready\"}");
  std::string metrics = Get(c.ingest_url() + "/metrics").body;
  CHECK(Metric(metrics, "folio_degraded") == 0);
  CHECK(Metric(metrics, "folio_ingest_storage_up") == -1);  // not exported without storage
}
