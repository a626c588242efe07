// BodyBudget (body_budget.h) against real Servers: a body that does not fit
// gets 503 with Retry-After before it is read, one larger than the whole
// budget 413; reservations come back when the answer is written, when the
// client leaves mid-body, and only once a handler holding the request
// answers; a chunked body reserves as it grows; two Servers on two loops
// share one budget; a refused AdmissionCheck reserves nothing; a buffered body
// is followed by kBodyPadding readable bytes.
#include <doctest/doctest.h>
#include <poll.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "folio/http/body_budget.h"
#include "folio/http/server.h"
#include "http_test_util.h"

using namespace folio;
using namespace folio::http;
using namespace folio::http::test;
using namespace std::chrono_literals;

namespace {

constexpr uint64_t kLimit = 1u << 20;

std::string Post(size_t length) {
  return "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(length) + "\r\n\r\n";
}

// Polls until pred holds (2 s at most).
template <typename Pred>
bool Soon(Pred pred) {
  for (int i = 0; i < 200; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return pred();
}

struct BudgetServer {
  BodyBudget budget{kLimit};
  TestServer ts;
  std::shared_ptr<Responder> held;  // loop thread: /hold keeps its Responder here

  BudgetServer() {
    ts.router.Handle("POST", "/echo", [](const Request& req, Responder r) {
      // The padding is readable memory (ASan would object otherwise).
      volatile char past = req.body.data()[req.body.size() + kBodyPadding - 1];
      (void)past;
      r.Send(Response::Text(200, std::to_string(req.body.size())));
    });
    ts.router.Handle("POST", "/hold", [this](const Request&, Responder r) {
      held = std::make_shared<Responder>(std::move(r));
    });
    ServerOptions o;
    o.max_body_bytes = 4u << 20;
    o.body_budget = &budget;
    ts.Start(o);
  }
};

}  // namespace

TEST_CASE("body budget: past the bound 503 with Retry-After before the body; released once answered") {
  BudgetServer s;
  RawConn first(s.ts.port());
  first.Send(Post(700000) + std::string(1000, 'a'));  // reserves 700000 + padding at its headers
  REQUIRE(Soon([&] { return s.budget.in_flight() > 700000; }));

  RawConn second(s.ts.port());
  second.Send(Post(700000));  // the headers only: refused without its body
  std::string busy = second.ReadResponse();
  CHECK(StatusOf(busy) == 503);
  CHECK(HeaderOf(busy, "Retry-After") == "1");
  CHECK(HeaderOf(busy, "Connection") == "close");
  const std::string body = BodyOf(busy);
  CHECK(body.find("\"unavailable\"") != std::string::npos);
  CHECK(body.find("in flight hold 700064 bytes of the 1.0 MiB") != std::string::npos);
  CHECK(body.find("needs 700064 bytes more") != std::string::npos);
  CHECK(body.find("Retry-After") != std::string::npos);
  CHECK(second.PeerClosed());
  CHECK(s.budget.refusals() == 1);

  first.Send(std::string(699000, 'a'));
  CHECK(BodyOf(first.ReadResponse()) == "700000");
  CHECK(Soon([&] { return s.budget.in_flight() == 0; }));
  CHECK(s.budget.peak() <= kLimit);
  RawConn third(s.ts.port());  // fits again
  third.Send(Post(700000) + std::string(700000, 'b'));
  CHECK(BodyOf(third.ReadResponse()) == "700000");

  RawConn huge(s.ts.port());  // more than the whole budget: waiting cannot help
  huge.Send(Post(2u << 20));
  std::string too_large = huge.ReadResponse();
  CHECK(StatusOf(too_large) == 413);
  CHECK(HeaderOf(too_large, "Retry-After").empty());
  CHECK(Soon([&] { return s.budget.in_flight() == 0; }));
}

TEST_CASE("body budget: released when the client leaves mid-body, and when a holding handler answers") {
  BudgetServer s;
  {
    RawConn gone(s.ts.port());
    gone.Send(Post(500000) + std::string(1000, 'a'));
    REQUIRE(Soon([&] { return s.budget.in_flight() > 0; }));
  }
  CHECK(Soon([&] { return s.budget.in_flight() == 0; }));

  {
    RawConn c(s.ts.port());
    c.Send("POST /hold HTTP/1.1\r\nHost: t\r\nContent-Length: 300000\r\n\r\n" + std::string(300000, 'h'));
    REQUIRE(Soon([&] { return OnLoop(s.ts.loop, [&] { return s.held != nullptr; }); }));
  }  // the client leaves while the handler holds the request
  // The request's bytes are still the handler's to read: still reserved.
  std::this_thread::sleep_for(50ms);
  CHECK(s.budget.in_flight() >= 300000);
  OnLoop(s.ts.loop, [&] {
    s.held->Send(Response::Text(200, "late"));
    s.held.reset();
    return 0;
  });
  CHECK(Soon([&] { return s.budget.in_flight() == 0; }));
}

TEST_CASE("body budget: a chunked body reserves as it grows; a step that does not fit is 503") {
  BudgetServer s;
  auto chunked = [](size_t chunks, size_t size) {
    std::string out;
    char line[32];
    snprintf(line, sizeof line, "%zx\r\n", size);
    for (size_t i = 0; i < chunks; ++i) out += line + std::string(size, 'c') + "\r\n";
    return out + "0\r\n\r\n";
  };
  const std::string head = "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n";
  RawConn small(s.ts.port());
  small.Send(head + chunked(10, 10000));
  CHECK(BodyOf(small.ReadResponse()) == "100000");
  CHECK(s.budget.peak() >= 100000);
  CHECK(Soon([&] { return s.budget.in_flight() == 0; }));

  RawConn big(s.ts.port());
  big.Send(head);
  const std::string chunk = chunked(1, 64000);
  std::string got;
  for (int i = 0; i < 40 && got.empty(); ++i) {  // 2.5 MiB offered, 1 MiB allowed
    big.Send(chunk.substr(0, chunk.size() - 5));  // without the last-chunk marker
    pollfd p{big.fd, POLLIN, 0};
    if (poll(&p, 1, 20) > 0) got = big.ReadResponse();
  }
  CHECK(StatusOf(got) == 503);
  CHECK(HeaderOf(got, "Retry-After") == "1");
  CHECK(big.PeerClosed());
  CHECK(s.budget.peak() <= kLimit);
  CHECK(Soon([&] { return s.budget.in_flight() == 0; }));
}

TEST_CASE("body budget: two Servers on two loops share one; a refused check reserves nothing") {
  BodyBudget budget(kLimit);
  TestServer a, b;
  for (TestServer* t : {&a, &b}) {
    t->router.Handle("POST", "/echo", [](const Request& req, AdmissionGate gate) {
      if (req.BearerToken() == "good") gate.Admit();
      else gate.Refuse(Response::Error(Status::Unauthenticated("no")));
    }, [](const Request& req, Responder r) { r.Send(Response::Text(200, std::to_string(req.body.size()))); });
    ServerOptions o;
    o.max_body_bytes = 4u << 20;
    o.body_budget = &budget;
    t->Start(o);
  }
  const std::string good = "POST /echo HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer good\r\nContent-Length: 600000\r\n\r\n";
  RawConn on_a(a.port());
  on_a.Send(good + "x");
  REQUIRE(Soon([&] { return budget.in_flight() > 600000; }));
  RawConn on_b(b.port());
  on_b.Send(good);
  CHECK(StatusOf(on_b.ReadResponse()) == 503);

  RawConn refused(b.port());  // unauthenticated: 401, and no reservation at all
  refused.Send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 600000\r\n\r\n");
  CHECK(StatusOf(refused.ReadResponse()) == 401);
  CHECK(budget.refusals() == 1);
  on_a.Send(std::string(599999, 'x'));
  CHECK(BodyOf(on_a.ReadResponse()) == "600000");
  CHECK(Soon([&] { return budget.in_flight() == 0; }));
}

TEST_CASE("body budget: a streamed body reserves what the server and its reader hold, not its length") {
  BodyBudget budget(kLimit);
  TestServer ts;
  struct Sink final : BodyReader {
    explicit Sink(Responder r) : r_(std::move(r)) {}
    Status OnData(std::string_view p) override {
      n_ += p.size();
      return Status::Ok();
    }
    void OnEnd() override { r_.Send(Response::Text(200, std::to_string(n_))); }
    void OnAbort(const Status&) override {}
    Responder r_;
    size_t n_ = 0;
  };
  ts.router.HandleStreaming("PUT", "/blob", [](const Request&, Responder r) -> std::shared_ptr<BodyReader> {
    return std::make_shared<Sink>(std::move(r));
  });
  ServerOptions o;
  o.body_budget = &budget;
  o.stream_body_budget_bytes = 256 * 1024;
  ts.Start(o);
  const size_t n = 8u << 20;  // 8 times the whole budget, streamed
  RawConn c(ts.port());
  c.Send("PUT /blob HTTP/1.1\r\nHost: t\r\nContent-Length: " + std::to_string(n) + "\r\n\r\n");
  c.Send(std::string(n, 's'));
  CHECK(BodyOf(c.ReadResponse()) == std::to_string(n));
  CHECK(budget.peak() == 256 * 1024);
  CHECK(Soon([&] { return budget.in_flight() == 0; }));
}
