// AdmissionCheck (admission.h) against a real Server: checks that admit or
// refuse at once or later, on buffered and streaming routes, with and
// without a body. A refusal is answered before the client sends a byte of
// its body, the handler never runs and the connection closes; while a check
// waits nothing is read and no request timer runs.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "folio/core/json.h"
#include "folio/http/server.h"
#include "folio/http/stream.h"
#include "http_test_util.h"

using namespace folio;
using namespace folio::http;
using namespace folio::http::test;
using namespace std::chrono_literals;

namespace {

Response Unauthorized() {
  Response r = Response::Error(Status::Unauthenticated("missing or wrong bearer token"));
  r.headers.emplace_back("WWW-Authenticate", "Bearer");
  return r;
}

// "Bearer good" passes; anything else is 401.
void CheckToken(const Request& req, AdmissionGate gate) {
  if (req.BearerToken() == "good") {
    gate.Admit();
  } else {
    gate.Refuse(Unauthorized());
  }
}

// A server whose POST /up echoes the body's size behind `check`, and counts
// the handler's runs.
struct CheckedServer {
  TestServer ts;
  std::atomic<int> handled{0};
  std::atomic<int> checked{0};

  explicit CheckedServer(AdmissionCheck check, ServerOptions o = {}) {
    ts.router.Handle("POST", "/up", [this, check](const Request& req, AdmissionGate gate) {
      ++checked;
      CHECK(req.body.empty());
      check(req, std::move(gate));
    }, [this](const Request& req, Responder r) {
      ++handled;
      r.Send(Response::Text(200, std::to_string(req.body.size())));
    });
    ts.router.Handle("GET", "/get", CheckToken, [this](const Request&, Responder r) {
      ++handled;
      r.Send(Response::Text(200, "got"));
    });
    ts.router.Handle("GET", "/open", [](const Request&, Responder r) { r.Send(Response::Text(200, "open")); });
    ts.Start(o);
  }
};

std::string Upload(size_t length, const std::string& token, const std::string& extra = "") {
  return "POST /up HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " + token + "\r\nContent-Length: " +
         std::to_string(length) + "\r\n" + extra + "\r\n";
}

}  // namespace

TEST_CASE("admission: a refusal is answered before the body is sent, and the connection closes") {
  ServerOptions o;
  o.max_body_bytes = 16u << 20;
  CheckedServer s(CheckToken, o);
  RawConn c(s.ts.port());
  c.Send(Upload(8u << 20, "bad"));  // the headers only: the 8 MiB never leave the client
  std::string r = c.ReadResponse();
  CHECK(StatusOf(r) == 401);
  CHECK(HeaderOf(r, "WWW-Authenticate") == "Bearer");
  CHECK(HeaderOf(r, "Connection") == "close");
  CHECK(BodyOf(r).find("\"unauthenticated\"") != std::string::npos);
  CHECK(c.PeerClosed());
  CHECK(s.checked == 1);
  CHECK(s.handled == 0);
}

TEST_CASE("admission: admitted at once, the body is read and the handler runs; keep-alive holds") {
  CheckedServer s(CheckToken);
  RawConn c(s.ts.port());
  for (int i = 0; i < 2; ++i) {
    c.Send(Upload(5, "good") + "hello");
    std::string r = c.ReadResponse();
    CHECK(StatusOf(r) == 200);
    CHECK(BodyOf(r) == "5");
  }
  // A body-less request behind a check: admitted, answered, kept alive;
  // refused, answered and closed.
  c.Send("GET /get HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer good\r\n\r\n");
  CHECK(BodyOf(c.ReadResponse()) == "got");
  c.Send("GET /open HTTP/1.1\r\nHost: t\r\n\r\n");
  CHECK(BodyOf(c.ReadResponse()) == "open");
  c.Send("GET /get HTTP/1.1\r\nHost: t\r\n\r\n");
  CHECK(StatusOf(c.ReadResponse()) == 401);
  CHECK(c.PeerClosed());
  CHECK(s.handled == 3);
}

TEST_CASE("admission: a later verdict; nothing is read and no timer runs meanwhile") {
  std::shared_ptr<AdmissionGate> waiting;
  std::string seen_token;
  ServerOptions o;
  o.header_timeout_ms = 100;
  o.body_timeout_ms = 100;
  o.max_body_bytes = 64u << 20;
  CheckedServer s([&](const Request& req, AdmissionGate gate) {
    seen_token = std::string(req.BearerToken());
    waiting = std::make_shared<AdmissionGate>(std::move(gate));
  }, o);
  auto decide = [&](bool admit) {
    // Longer than both timeouts: waiting on the server is not the client's fault.
    std::this_thread::sleep_for(300ms);
    OnLoop(s.ts.loop, [&] {
      REQUIRE(waiting != nullptr);
      CHECK(waiting->connection_open());
      if (admit) waiting->Admit();
      else waiting->Refuse(Unauthorized());
      waiting.reset();
      return 0;
    });
  };

  SUBCASE("admitted: the body sent meanwhile is read afterwards") {
    RawConn c(s.ts.port());
    c.Send(Upload(3, "later") + "abc");
    decide(true);
    std::string r = c.ReadResponse();
    CHECK(StatusOf(r) == 200);
    CHECK(BodyOf(r) == "3");
    CHECK(seen_token == "later");
  }
  SUBCASE("admitted with Expect: 100-continue: the interim answer comes after the verdict") {
    RawConn c(s.ts.port());
    c.Send(Upload(3, "later", "Expect: 100-continue\r\n"));
    decide(true);
    CHECK(StatusOf(c.ReadResponse()) == 100);
    c.Send("xyz");
    CHECK(BodyOf(c.ReadResponse()) == "3");
  }
  SUBCASE("nothing is read while it waits: the client's sends stall at the socket buffers") {
    RawConn c(s.ts.port());
    const size_t body = 32u << 20;
    c.Send(Upload(body, "later"));
    fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) | O_NONBLOCK);
    const std::string chunk(256 * 1024, 'b');
    size_t accepted = 0;
    for (auto until = std::chrono::steady_clock::now() + 300ms; std::chrono::steady_clock::now() < until;) {
      ssize_t n = send(c.fd, chunk.data(), std::min(chunk.size(), body - accepted), MSG_NOSIGNAL);
      if (n > 0) accepted += static_cast<size_t>(n);
      else std::this_thread::sleep_for(1ms);
    }
    MESSAGE("body bytes the kernel took while the check waited: " << accepted);
    CHECK(accepted < body / 2);  // socket buffers only: the server read none of it
    fcntl(c.fd, F_SETFL, fcntl(c.fd, F_GETFL) & ~O_NONBLOCK);
    decide(false);
    CHECK(StatusOf(c.ReadResponse()) == 401);
    CHECK(s.handled == 0);
  }
  SUBCASE("refused: the final status instead of 100 Continue, then closed") {
    RawConn c(s.ts.port());
    c.Send(Upload(1u << 20, "later", "Expect: 100-continue\r\n"));
    decide(false);
    std::string r = c.ReadResponse();
    CHECK(StatusOf(r) == 401);
    CHECK(c.PeerClosed());
    CHECK(s.handled == 0);
  }
}

TEST_CASE("admission: a client that leaves while its check waits; a gate dropped undecided is 500") {
  std::shared_ptr<AdmissionGate> waiting;
  bool drop = false;
  CheckedServer s([&](const Request&, AdmissionGate gate) {
    if (!drop) waiting = std::make_shared<AdmissionGate>(std::move(gate));
  });
  auto held = [&] { return OnLoop(s.ts.loop, [&] { return waiting != nullptr; }); };
  {
    RawConn c(s.ts.port());
    c.Send(Upload(10, "x"));
    for (int i = 0; i < 200 && !held(); ++i) std::this_thread::sleep_for(10ms);
    REQUIRE(held());
  }  // the client leaves
  // The server notices only when it reads again: the verdict lands on a
  // connection whose client is gone, and does nothing harmful.
  OnLoop(s.ts.loop, [&] {
    waiting->Admit();
    waiting.reset();
    return 0;
  });
  drop = true;
  RawConn c(s.ts.port());
  c.Send(Upload(4, "x") + "body");
  std::string r = c.ReadResponse();
  CHECK(StatusOf(r) == 500);
  CHECK(BodyOf(r).find("did not decide") != std::string::npos);
  CHECK(s.handled == 0);  // the body never came; the dropped one never ran
}

TEST_CASE("admission: a streaming route's reader exists only once the check admitted") {
  TestServer ts;
  std::atomic<int> readers{0};
  struct Count final : BodyReader {
    explicit Count(Responder r) : r_(std::move(r)) {}
    Status OnData(std::string_view piece) override {
      bytes_ += piece.size();
      return Status::Ok();
    }
    void OnEnd() override { r_.Send(Response::Text(200, std::to_string(bytes_))); }
    void OnAbort(const Status&) override {}
    Responder r_;
    size_t bytes_ = 0;
  };
  ts.router.HandleStreaming("PUT", "/blob", CheckToken, [&](const Request&, Responder r) -> std::shared_ptr<BodyReader> {
    ++readers;
    return std::make_shared<Count>(std::move(r));
  });
  ts.Start();
  RawConn refused(ts.port());
  refused.Send("PUT /blob HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n\r\n");
  CHECK(StatusOf(refused.ReadResponse()) == 401);
  CHECK(refused.PeerClosed());
  CHECK(readers == 0);
  RawConn admitted(ts.port());
  admitted.Send("PUT /blob HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer good\r\nContent-Length: 100000\r\n\r\n" +
                std::string(100000, 'z'));
  std::string r = admitted.ReadResponse();
  CHECK(StatusOf(r) == 200);
  CHECK(BodyOf(r) == "100000");
  CHECK(readers == 1);
}

TEST_CASE("admission: Content-Length over the limit is 413 before the check runs") {
  ServerOptions o;
  o.max_body_bytes = 100;
  CheckedServer s(CheckToken, o);
  RawConn c(s.ts.port());
  c.Send(Upload(101, "good"));
  CHECK(StatusOf(c.ReadResponse()) == 413);
  CHECK(c.PeerClosed());
  CHECK(s.checked == 0);
}

TEST_CASE("admission: a route's own body limit of 0, and a body no route takes is answered 404/405 unread") {
  TestServer ts;
  ts.router.Handle("GET", "/probe", [](const Request&, Responder r) { r.Send(Response::Text(200, "ok")); },
                   "probe", /*max_body_bytes=*/0);
  ServerOptions o;
  o.max_body_bytes = 16u << 20;
  ts.Start(o);
  RawConn c(ts.port());
  c.Send("GET /probe HTTP/1.1\r\nHost: t\r\n\r\n");
  CHECK(BodyOf(c.ReadResponse()) == "ok");
  c.Send("GET /probe HTTP/1.1\r\nHost: t\r\nContent-Length: 8000000\r\n\r\n");  // the body never leaves
  std::string r = c.ReadResponse();
  CHECK(StatusOf(r) == 413);
  CHECK(c.PeerClosed());
  RawConn chunked(ts.port());  // an empty chunked body is no body; chunk data is 413
  chunked.Send("GET /probe HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
  CHECK(BodyOf(chunked.ReadResponse()) == "ok");
  chunked.Send("GET /probe HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n\r\n");
  CHECK(StatusOf(chunked.ReadResponse()) == 413);

  RawConn unknown(ts.port());
  unknown.Send("POST /nope HTTP/1.1\r\nHost: t\r\nContent-Length: 8000000\r\n\r\n");
  CHECK(StatusOf(unknown.ReadResponse()) == 404);
  CHECK(unknown.PeerClosed());
  RawConn method(ts.port());
  method.Send("POST /probe HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n");
  std::string m = method.ReadResponse();
  CHECK(StatusOf(m) == 405);
  CHECK(HeaderOf(m, "Allow") == "GET, HEAD");
  CHECK(method.PeerClosed());
  RawConn bodiless(ts.port());  // without a body the connection is kept as before
  bodiless.Send("DELETE /nope HTTP/1.1\r\nHost: t\r\n\r\n");
  CHECK(StatusOf(bodiless.ReadResponse()) == 404);
  bodiless.Send("GET /probe HTTP/1.1\r\nHost: t\r\n\r\n");
  CHECK(BodyOf(bodiless.ReadResponse()) == "ok");
}
