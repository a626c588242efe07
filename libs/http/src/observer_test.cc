// The RequestObserver (observer.h): every answered request is reported once,
// with the route class of the route that matched (or the fallback's, or the
// handler's SetRouteClass), the status actually written, and its duration.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "folio/http/observer.h"
#include "folio/http/server.h"
#include "http_test_util.h"

using namespace folio;
using namespace folio::http;
using namespace folio::http::test;

namespace {

struct Seen {
  std::string route_class;
  int status;
  double seconds;
};

class Recorder final : public RequestObserver {
 public:
  void OnRequestDone(std::string_view route_class, int status, double seconds) override {
    std::lock_guard<std::mutex> l(mu_);
    seen_.push_back({std::string(route_class), status, seconds});
  }
  std::vector<Seen> Take() {
    std::lock_guard<std::mutex> l(mu_);
    return std::exchange(seen_, {});
  }

 private:
  std::mutex mu_;
  std::vector<Seen> seen_;
};

class Sink final : public BodyReader {
 public:
  explicit Sink(Responder r) : r_(std::move(r)) {}
  Status OnData(std::string_view) override { return Status::Ok(); }
  void OnEnd() override { r_.Send(Response::Text(201, "stored")); }
  void OnAbort(const Status&) override {}

 private:
  Responder r_;
};

}  // namespace

TEST_CASE("observer: each answered request is reported with its route class, status and duration") {
  Recorder rec;
  TestServer ts;
  static const char kPrepared[] = "HTTP/1.1 304 Not Modified\r\n";
  ts.router.Handle("GET", "/a", [](const Request&, Responder r) { r.Send(Response::Text(200, "a")); }, "alpha");
  ts.router.HandlePrefix("GET", "/p/", [](const Request&, Responder r) {
    PreparedResponse p;
    p.head = kPrepared;
    r.SendPrepared(p);
  }, "prep");
  ts.router.HandleStreaming("PUT", "/up", [](const Request&, Responder r) {
    return std::make_shared<Sink>(std::move(r));
  }, kDefaultMaxStreamBodyBytes, "upload");
  ts.router.Fallback([](const Request& req, Responder r) {
    if (req.path == "/asset.png") r.SetRouteClass("asset");
    r.SendError(404, "not_found", "none");
  }, "page");
  ts.router.Observe(&rec);
  ts.Start();

  RawConn c(ts.port());
  REQUIRE(c.connected);
  // Pipelined: each is reported, in order.
  c.Send("GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET /p/x HTTP/1.1\r\nHost: t\r\n\r\n");
  CHECK(StatusOf(c.ReadResponse()) == 200);
  CHECK(StatusOf(c.ReadResponse(/*head_only=*/true)) == 304);
  c.Send("PUT /up HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhello");
  CHECK(StatusOf(c.ReadResponse()) == 201);
  c.Send("GET /nothing HTTP/1.1\r\nHost: t\r\n\r\nGET /asset.png HTTP/1.1\r\nHost: t\r\n\r\n");
  CHECK(StatusOf(c.ReadResponse()) == 404);
  CHECK(StatusOf(c.ReadResponse()) == 404);
  c.Send("POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n");  // 405: the fallback's class
  CHECK(StatusOf(c.ReadResponse()) == 405);
  c.Send("BOGUS\r\n\r\n");  // answered before routing
  CHECK(StatusOf(c.ReadResponse()) == 400);

  // The last report follows the last write's completion: poll.
  std::vector<Seen> seen;
  for (int i = 0; i < 500 && seen.size() < 7; ++i) {
    for (Seen& s : rec.Take()) seen.push_back(std::move(s));
    if (seen.size() < 7) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(seen.size() == 7);
  const std::pair<const char*, int> want[] = {{"alpha", 200}, {"prep", 304}, {"upload", 201}, {"page", 404},
                                              {"asset", 404}, {"page", 405}, {"other", 400}};
  for (size_t i = 0; i < 7; ++i) {
    CAPTURE(i);
    CHECK(seen[i].route_class == want[i].first);
    CHECK(seen[i].status == want[i].second);
    CHECK(seen[i].seconds >= 0);
    CHECK(seen[i].seconds < 60);
  }
}

TEST_CASE("observer: routes registered without a class report \"other\"") {
  Recorder rec;
  TestServer ts;
  ts.router.Handle("GET", "/a", [](const Request&, Responder r) { r.Send(Response::Text(200, "a")); });
  ts.router.Observe(&rec);
  ts.Start();
  RawConn c(ts.port());
  c.Send("GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET /b HTTP/1.1\r\nHost: t\r\n\r\n");
  CHECK(StatusOf(c.ReadResponse()) == 200);
  CHECK(StatusOf(c.ReadResponse()) == 404);
  std::vector<Seen> seen;
  for (int i = 0; i < 500 && seen.size() < 2; ++i) {
    for (Seen& s : rec.Take()) seen.push_back(std::move(s));
    if (seen.size() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].route_class == "other");
  CHECK(seen[1].route_class == "other");
  CHECK(seen[1].status == 404);
}
