#include "folio/bus/connect.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "folio/bus/page_schema.h"
#include "folio/testing/testing.h"

namespace folio::bus {

TEST_CASE("ConnectRetrying: reports each failure naming the step, backs off, and stops when wait says so") {
  BusOptions o;
  o.url = "nats://127.0.0.1:" + std::to_string(testing::FreePort());
  o.connect_timeout_ms = 200;
  std::vector<std::string> errors;
  std::vector<int64_t> delays;
  bool setup_ran = false;
  auto bus = ConnectRetrying(
      o, [&](Bus*) { setup_ran = true; return Status::Ok(); },
      [&](const Status& s) { errors.push_back(s.message()); },
      [&](int64_t ms) { delays.push_back(ms); return delays.size() < 4; }, RetryPolicy{100, 300});
  CHECK(bus == nullptr);
  CHECK_FALSE(setup_ran);
  REQUIRE(errors.size() == 4);
  for (const std::string& e : errors) CHECK(e.find("NATS not reachable at " + o.url) == 0);
  CHECK(delays == std::vector<int64_t>{100, 200, 300, 300});
}

TEST_CASE("ConnectRetrying: a failed setup closes that Bus and is retried; success returns the set-up Bus") {
  testing::NatsServer server;
  BusOptions o;
  o.url = server.url();
  int setups = 0;
  std::vector<std::string> errors;
  Bus* set_up = nullptr;
  auto bus = ConnectRetrying(
      o,
      [&](Bus* b) {
        if (++setups == 1) return Status::Unavailable("first setup fails");
        set_up = b;
        return Status::Ok();
      },
      [&](const Status& s) { errors.push_back(s.message()); }, [](int64_t) { return true; }, RetryPolicy{10, 10});
  REQUIRE(bus != nullptr);
  CHECK(bus.get() == set_up);
  CHECK(setups == 2);
  CHECK(errors == std::vector<std::string>{"first setup fails"});
  // EnsureSchema ran: the pages bucket exists.
  CHECK(bus->KvGet(kPagesBucket, "no-such-key").status().code() == Code::kNotFound);
}

TEST_CASE("BusOptionsFor takes --nats, --nats-replicas, the NATS user, password and CA from the service's basics") {
  ServiceBasics basics;
  basics.nats_url = "nats://a:4222,nats://b:4222";
  basics.nats_replicas = 3;
  basics.nats_user = "edge";
  basics.nats_password = "pw";
  basics.nats_ca = "/etc/ca.pem";
  BusOptions o = BusOptionsFor(basics, "folio-test", nullptr);
  CHECK(o.url == basics.nats_url);
  CHECK(o.user == "edge");
  CHECK(o.password == "pw");
  CHECK(o.ca_file == "/etc/ca.pem");
  CHECK(o.replicas == 3);
  CHECK(o.name == "folio-test");
  CHECK(o.metrics == nullptr);
}

}  // namespace folio::bus
