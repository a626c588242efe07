// Strict HTTP/1.1 request framing (issue 22, RFC 9112 §2-§6) against the real
// thing: a Server on a Loop thread on 127.0.0.1, raw TCP sockets. Every head
// that breaks a framing rule gets 400 with a JSON message naming the rule,
// and the connection closes after the answer: a request pipelined behind it
// is never answered. The same heads arrive whole and one byte per read. So
// do chunked bodies whose framing breaks the rules (RFC 9112 §7.1).
#include <doctest/doctest.h>

#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "folio/http/server.h"
#include "http_test_util.h"

using namespace folio::http;
using namespace folio::http::test;
using namespace std::chrono_literals;

namespace {

const std::string kNext = "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n";

struct BadHead {
  const char* name;
  std::string request;  // a whole request; kNext is pipelined behind it
  const char* message;  // after "malformed request: "
};

std::string Nul(const char* before, const char* after) { return before + std::string(1, '\0') + after; }

std::vector<BadHead> BadHeads() {
  const std::string post = "POST /echo HTTP/1.1\r\nHost: t\r\n";
  const std::string chunked = post + "Transfer-Encoding: chunked\r\n\r\n";
  const char* ws = "whitespace in a header field name or before its colon";
  const char* both = "both Content-Length and Transfer-Encoding";
  const char* not_chunked = "Transfer-Encoding must have chunked as its final coding, and only there";
  const char* bare_cr = "bare CR (not followed by LF)";
  const char* bare_lf = "bare LF (line ends must be CRLF)";
  const char* nul = "NUL byte in the request head";
  return {
      {"space before the colon (CL)", post + "Content-Length : 2\r\n\r\n{}", ws},
      {"space before the colon (TE)", post + "Transfer-Encoding : chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", ws},
      {"tab before the colon", post + "Content-Length\t: 2\r\n\r\n{}", ws},
      {"space inside a name", "GET /hello HTTP/1.1\r\nHost: t\r\nX A: b\r\n\r\n", ws},
      {"non-token character in a name", "GET /hello HTTP/1.1\r\nHost: t\r\nX-A\"b: c\r\n\r\n",
       "invalid character in a header field name"},
      {"empty name", "GET /hello HTTP/1.1\r\nHost: t\r\n: b\r\n\r\n", "empty header field name"},
      {"no colon", "GET /hello HTTP/1.1\r\nHost: t\r\nX-No-Colon\r\n\r\n", "header line without a colon"},
      {"no colon, a space", post + "Content-Length 0\r\n\r\n", ws},
      {"bare CR in a value", "GET /hello HTTP/1.1\r\nHost: t\r\nX-A: a\rContent-Length: 40\r\n\r\n",
       bare_cr},
      {"bare CR in the request line", "GET /hello\r HTTP/1.1\r\nHost: t\r\n\r\n", bare_cr},
      {"bare CR before the blank line", "GET /hello HTTP/1.1\r\nHost: t\r\n\r\r\n", bare_cr},
      {"bare LF after the request line", "GET /hello HTTP/1.1\nHost: t\r\n\r\n", bare_lf},
      {"bare LF after a header", "GET /hello HTTP/1.1\r\nHost: t\nX-A: b\r\n\r\n", bare_lf},
      {"bare LF as the blank line", "GET /hello HTTP/1.1\r\nHost: t\r\n\n", bare_lf},
      {"bare LF before the request line", "\nGET /hello HTTP/1.1\r\nHost: t\r\n\r\n", bare_lf},
      {"obs-fold (SP)", post + "Content-Length: 0\r\n 40\r\n\r\n",
       "obsolete line folding (a header line starting with whitespace)"},
      {"obs-fold (HTAB)", "GET /hello HTTP/1.1\r\nHost: t\r\nX-A: a\r\n\tb\r\n\r\n",
       "obsolete line folding (a header line starting with whitespace)"},
      {"whitespace before the first header", "GET /hello HTTP/1.1\r\n Host: t\r\n\r\n",
       "obsolete line folding (a header line starting with whitespace)"},
      {"control character in a value", "GET /hello HTTP/1.1\r\nHost: t\r\nX-A: a\x01z\r\n\r\n",
       "control character in a header field value"},
      {"DEL in a value", "GET /hello HTTP/1.1\r\nHost: t\r\nX-A: a\x7fz\r\n\r\n",
       "control character in a header field value"},
      {"control character deep in a long value",
       "GET /hello HTTP/1.1\r\nHost: t\r\nX-A: " + std::string(29, 'a') + "\x1f" + std::string(20, 'b') + "\r\n\r\n",
       "control character in a header field value"},
      {"DEL deep in a long value among obs-text",
       "GET /hello HTTP/1.1\r\nHost: t\r\nX-A: " + std::string(21, '\xe9') + "\x7f" + std::string(20, 'b') + "\r\n\r\n",
       "control character in a header field value"},
      {"control character deep in the request line", "GET /hello?q=" + std::string(30, 'q') + "\x0b HTTP/1.1\r\nHost: t\r\n\r\n",
       "control character in the request line"},
      {"tab in the request line", "GET\t/hello HTTP/1.1\r\nHost: t\r\n\r\n", "control character in the request line"},
      {"NUL in a value", Nul("GET /hello HTTP/1.1\r\nHost: t\r\nX-A: a", "b\r\n\r\n"), nul},
      {"NUL in a name", Nul("GET /hello HTTP/1.1\r\nHost: t\r\nX-", "A: b\r\n\r\n"), nul},
      {"NUL in the request line", Nul("GET /hel", "lo HTTP/1.1\r\nHost: t\r\n\r\n"), nul},
      {"two equal Content-Lengths", post + "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
       "more than one Content-Length"},
      {"Content-Length, then Transfer-Encoding", post + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       both},
      {"Transfer-Encoding, then Content-Length", post + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
       both},
      {"two Transfer-Encodings", post + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       "more than one Transfer-Encoding"},
      {"Transfer-Encoding: chunked, identity", post + "Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n",
       not_chunked},
      {"Transfer-Encoding: gzip", post + "Transfer-Encoding: gzip\r\n\r\n", not_chunked},
      {"Transfer-Encoding: xchunked", post + "Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n", not_chunked},
      {"Transfer-Encoding: chunked twice in one list", post + "Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n",
       not_chunked},
      {"Content-Length with a sign", post + "Content-Length: +2\r\n\r\n{}", "Content-Length is not a decimal number"},
      {"Content-Length list", post + "Content-Length: 2, 2\r\n\r\n{}", "Content-Length is not a decimal number"},
      {"Content-Length with a space inside", post + "Content-Length: 1 2\r\n\r\n{}", "Content-Length is not a decimal number"},
      {"empty Content-Length", post + "Content-Length: \r\n\r\n{}", "Content-Length is not a decimal number"},
      {"Content-Length overflow", post + "Content-Length: 18446744073709551617\r\n\r\n{}",
       "Content-Length is not a decimal number"},
      {"two Hosts", "GET /hello HTTP/1.1\r\nHost: t\r\nhost: u\r\n\r\n", "more than one Host"},
      {"HTTP/1.1 without Host", "GET /hello HTTP/1.1\r\nX-A: b\r\n\r\n", "HTTP/1.1 request without Host"},
      {"Transfer-Encoding in HTTP/1.0",
       "POST /echo HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
       "Transfer-Encoding in HTTP/1.0"},
      // Chunked bodies: the framing after the head (http-parser takes any
      // byte after a size's CR, any two after chunk data).
      {"chunk data not followed by CRLF", chunked + "2\r\n{}XX0\r\n\r\n", "chunk data not followed by CRLF"},
      {"chunk data followed by a bare LF", chunked + "2\r\n{}\n0\r\n\r\n", "chunk data not followed by CRLF"},
      {"chunk data followed by a bare CR", chunked + "2\r\n{}\rX0\r\n\r\n", bare_cr},
      {"bare CR after a chunk size", chunked + "2\rX{}\r\n0\r\n\r\n", bare_cr},
      {"bare LF after a chunk size", chunked + "2\n{}\r\n0\r\n\r\n", bare_lf},
      {"LF in a chunk extension", chunked + "2;a\nb\r\n{}\r\n0\r\n\r\n", bare_lf},
      {"control character in a chunk extension", chunked + "2;a\x01\r\n{}\r\n0\r\n\r\n",
       "control character in a chunk extension"},
      {"chunk size not hexadecimal", chunked + "0x2\r\n{}\r\n0\r\n\r\n", "chunk size is not a hexadecimal number"},
      {"chunk size overflow", chunked + "fffffffffffffffff1\r\n{}\r\n0\r\n\r\n",
       "chunk size is not a hexadecimal number"},
      {"bare LF after the last chunk", chunked + "2\r\n{}\r\n0\n\r\n", bare_lf},
      {"bare LF in a trailer", chunked + "2\r\n{}\r\n0\r\nX-T: y\n\r\n", bare_lf},
      {"obs-fold in a trailer", chunked + "0\r\nX-T: y\r\n z\r\n\r\n",
       "obsolete line folding (a header line starting with whitespace)"},
      {"space before a trailer's colon", chunked + "0\r\nX-T : y\r\n\r\n", ws},
  };
}

// 0x20-0x7e and 0x80-0xff, with HTABs: every byte a value may hold.
const std::string& Long() {
  static const std::string v = [] {
    std::string s = "x";
    for (int c = 0x20; c < 0x100; ++c) {
      if (c != 0x7f) s += static_cast<char>(c);
      if (c % 37 == 0) s += '\t';
    }
    return s + "x";
  }();
  return v;
}

struct GoodHead {
  const char* name;
  std::string request;
  const char* body;  // of the 200 answer
};

std::vector<GoodHead> GoodHeads() {
  return {
      {"a normal request", "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n", "hello world"},
      {"OWS around a Content-Length", "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: \t2 \r\n\r\n{}", "{}"},
      {"HTAB inside a value", "GET /header HTTP/1.1\r\nHost: t\r\nX-A:\tv\tw\r\n\r\n", "v\tw"},
      {"obs-text in a value", "GET /header HTTP/1.1\r\nHost: t\r\nX-A: caf\xc3\xa9\r\n\r\n", "caf\xc3\xa9"},
      {"a long value of obs-text, HTAB and DEL's neighbours",
       "GET /header HTTP/1.1\r\nHost: t\r\nX-A: " + Long() + "\r\n\r\n", Long().c_str()},
      {"a chunked body", "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: Chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
       "{}"},
      {"chunks with extensions and trailers",
       "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
       "1;a=b\r\n{\r\n1 ; c=\"d e\"\r\n}\r\n0\r\nX-T: y\r\nX-U:\r\n\r\n",
       "{}"},
      {"an empty line before the request line", "\r\nGET /hello HTTP/1.1\r\nHost: t\r\n\r\n", "hello world"},
      {"an empty Host", "GET /hello HTTP/1.1\r\nHost:\r\n\r\n", "hello world"},
      {"HTTP/1.0 without Host", "GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", "hello world"},
  };
}

// Everything the server sends until it closes (true) or 3 s of silence (false).
bool ReadUntilClosed(RawConn& c, std::string* got) {
  char b[4096];
  for (;;) {
    ssize_t n = recv(c.fd, b, sizeof(b), 0);
    if (n > 0) {
      got->append(b, static_cast<size_t>(n));
      continue;
    }
    return n == 0 || errno == ECONNRESET;
  }
}

// Each answer has one Date line (a message may itself say "HTTP/1.1").
size_t CountResponses(const std::string& bytes) {
  size_t n = 0;
  for (size_t at = bytes.find("\r\nDate: "); at != std::string::npos; at = bytes.find("\r\nDate: ", at + 1)) ++n;
  return n;
}

void SendBytewise(RawConn& c, const std::string& s) {
  for (char ch : s) {
    c.Send(std::string_view(&ch, 1));
    std::this_thread::sleep_for(200us);
  }
}

void StartServer(TestServer& ts) {
  ts.router.Handle("GET", "/hello", [](const Request&, Responder r) { r.Send(Response::Text(200, "hello world")); });
  ts.router.Handle("POST", "/echo", [](const Request& req, Responder r) {
    r.Send(Response::Text(200, std::string(req.body)));
  });
  ts.router.Handle("GET", "/header", [](const Request& req, Responder r) {
    r.Send(Response::Text(200, std::string(req.GetHeader("x-a"))));
  });
  ts.Start();
}

}  // namespace

TEST_CASE("framing: each bad head gets 400 naming the rule, then the connection closes (issue 22)") {
  TestServer ts;
  StartServer(ts);
  for (bool bytewise : {false, true}) {
    for (const BadHead& b : BadHeads()) {
      CAPTURE(bytewise);
      INFO("head: " << std::string(b.name));
      RawConn c(ts.port());
      REQUIRE(c.connected);
      if (bytewise) {
        SendBytewise(c, b.request);
        c.Send(kNext);
      } else {
        c.Send(b.request + kNext);
      }
      std::string got;
      CHECK(ReadUntilClosed(c, &got));
      INFO("answer: " << got);
      CHECK(got.rfind("HTTP/1.1 400 Bad Request\r\n", 0) == 0);
      CHECK(HeaderOf(got, "Connection") == "close");
      CHECK(BodyOf(got) == std::string(R"({"error":{"code":"invalid_argument","message":"malformed request: )") +
                               b.message + "\"}}");
      CHECK(CountResponses(got) == 1);  // the pipelined request is not answered
    }
  }
}

TEST_CASE("framing: CONNECT is refused: http-parser reads no body after it (issue 22)") {
  TestServer ts;
  StartServer(ts);
  RawConn c(ts.port());
  c.Send("CONNECT t:443 HTTP/1.1\r\nHost: t\r\nContent-Length: 32\r\n\r\n" + kNext);  // kNext as its body
  std::string got;
  CHECK(ReadUntilClosed(c, &got));
  CHECK(StatusOf(got) == 400);
  CHECK(BodyOf(got) == R"({"error":{"code":"invalid_argument","message":"CONNECT is not supported"}})");
  CHECK(CountResponses(got) == 1);
}

TEST_CASE("framing: valid heads (OWS, HTAB, obs-text, chunked, an empty line first) are served, keep-alive") {
  TestServer ts;
  StartServer(ts);
  for (bool bytewise : {false, true}) {
    for (const GoodHead& g : GoodHeads()) {
      CAPTURE(bytewise);
      INFO("head: " << std::string(g.name));
      RawConn c(ts.port());
      REQUIRE(c.connected);
      if (bytewise) {
        SendBytewise(c, g.request);
        c.Send(kNext);
      } else {
        c.Send(g.request + kNext);
      }
      std::string first = c.ReadResponse();
      CHECK(StatusOf(first) == 200);
      CHECK(BodyOf(first) == g.body);
      std::string second = c.ReadResponse();
      CHECK(StatusOf(second) == 200);
      CHECK(BodyOf(second) == "hello world");
      CHECK(HeaderOf(second, "Connection").empty());
    }
  }
}
