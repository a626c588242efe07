// Issue 22: strict HTTP/1.1 request framing on every service. A real
// nats-server -js and real folio-ingest, folio-edge, folio-search and
// folio-storage processes, each with a public and an admin port
// (--admin-listen). On every port, every request that breaks a framing rule
// (RFC 9112: whitespace before a colon, bare CR/LF, obs-fold, control bytes,
// NUL, conflicting or repeated Content-Length / Transfer-Encoding, two Hosts,
// no Host, lax chunk framing, CONNECT) gets 400 with the JSON message naming
// the rule, and the connection closes: the request pipelined behind it is
// never answered. The requests arrive whole and one byte per read. Valid
// heads (OWS, HTAB in a value, chunked) are answered as usual, the request
// behind them too.
#include <doctest/doctest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "cluster.h"
#include "folio/http/client.h"
#include "folio/testing/testing.h"
#include "test_util.h"

namespace folio::it {
namespace {

// The request pipelined behind every probe: answered (then the connection
// closes) only when the probe before it is valid.
const std::string kNext = "GET /next HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

// One listening socket of a service and a route it serves.
struct Target {
  std::string name;     // "folio-ingest public"
  int port;
  std::string method, path;
  std::string headers;  // header lines the route needs (a token, a type)
  std::string body;     // a body the route takes ("" for a GET)
};

struct Probe {
  std::string name;
  std::string request;
  std::string message;  // "" for a valid head
};

std::string Nul(std::string before, const char* after) { return before + std::string(1, '\0') + after; }

std::vector<Probe> BadProbes(const Target& t) {
  const std::string line = t.method + " " + t.path + " HTTP/1.1\r\n";
  const std::string start = line + "Host: x\r\n" + t.headers;
  const std::string chunked = start + "Transfer-Encoding: chunked\r\n\r\n";
  const std::string ws = "whitespace in a header field name or before its colon";
  const std::string bare_cr = "bare CR (not followed by LF)", bare_lf = "bare LF (line ends must be CRLF)";
  const std::string fold = "obsolete line folding (a header line starting with whitespace)";
  const std::string both = "both Content-Length and Transfer-Encoding";
  const std::string not_chunked = "Transfer-Encoding must have chunked as its final coding, and only there";
  const std::string bad_length = "Content-Length is not a decimal number";
  std::vector<Probe> probes = {
      {"space before the colon (CL)", start + "Content-Length : 2\r\nConnection: close\r\n\r\n{}", ws},
      {"space before the colon (TE)", start + "Transfer-Encoding : chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", ws},
      {"tab before the colon", start + "Content-Length\t: 2\r\n\r\n{}", ws},
      {"space inside a name", start + "X A: b\r\n\r\n", ws},
      {"non-token character in a name", start + "X-A\"b: c\r\n\r\n", "invalid character in a header field name"},
      {"empty name", start + ": b\r\n\r\n", "empty header field name"},
      {"no colon", start + "X-No-Colon\r\n\r\n", "header line without a colon"},
      {"bare CR in a value", start + "X-A: a\rContent-Length: 40\r\n\r\n", bare_cr},
      {"bare CR in the request line", t.method + " " + t.path + "\r HTTP/1.1\r\nHost: x\r\n\r\n", bare_cr},
      {"bare LF after the request line", t.method + " " + t.path + " HTTP/1.1\nHost: x\r\n\r\n", bare_lf},
      {"bare LF after a header", line + "Host: x\n" + t.headers + "\r\n", bare_lf},
      {"bare LF as the blank line", start + "\n", bare_lf},
      {"obs-fold (SP)", start + "Content-Length: 0\r\n 40\r\n\r\n", fold},
      {"obs-fold (HTAB)", start + "X-A: a\r\n\tb\r\n\r\n", fold},
      {"control character in a value", start + "X-A: a\x01z\r\n\r\n", "control character in a header field value"},
      {"tab in the request line", t.method + "\t" + t.path + " HTTP/1.1\r\nHost: x\r\n\r\n",
       "control character in the request line"},
      {"NUL in a value", Nul(start + "X-A: a", "b\r\n\r\n"), "NUL byte in the request head"},
      {"NUL in a name", Nul(start + "X-", "A: b\r\n\r\n"), "NUL byte in the request head"},
      {"two equal Content-Lengths", start + "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
       "more than one Content-Length"},
      {"Content-Length, then Transfer-Encoding",
       start + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", both},
      {"Transfer-Encoding, then Content-Length",
       start + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", both},
      {"two Transfer-Encodings", start + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       "more than one Transfer-Encoding"},
      {"Transfer-Encoding: chunked, identity", start + "Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n",
       not_chunked},
      {"Transfer-Encoding: gzip", start + "Transfer-Encoding: gzip\r\n\r\n", not_chunked},
      {"Content-Length with a sign", start + "Content-Length: +2\r\n\r\n{}", bad_length},
      {"Content-Length overflow", start + "Content-Length: 18446744073709551617\r\n\r\n{}", bad_length},
      {"two Hosts", start + "Host: y\r\n\r\n", "more than one Host"},
      {"HTTP/1.1 without Host", line + t.headers + "\r\n", "HTTP/1.1 request without Host"},
      {"bare CR after a chunk size", chunked + "0\rX\r\n", bare_cr},
      {"LF in a chunk extension", chunked + "0;a\nb\r\n\r\n", bare_lf},
      {"bare LF in a trailer", chunked + "0\r\nX-T: y\n\r\n", bare_lf},
  };
  // Chunk data reaches a route that takes no body as a 413 first.
  if (!t.body.empty()) {
    probes.push_back(
        {"chunk data not followed by CRLF", chunked + "2\r\n{}XX0\r\n\r\n", "chunk data not followed by CRLF"});
  }
  return probes;
}

std::string Hex(size_t n) {
  char b[32];
  snprintf(b, sizeof b, "%zx", n);
  return b;
}

std::vector<Probe> GoodProbes(const Target& t) {
  const std::string start = t.method + " " + t.path + " HTTP/1.1\r\nHost: x\r\n" + t.headers;
  const std::string length = std::to_string(t.body.size());
  const std::string chunks = t.body.empty() ? "0\r\n\r\n" : Hex(t.body.size()) + "\r\n" + t.body + "\r\n0\r\n\r\n";
  return {
      {"a normal request", start + "Content-Length: " + length + "\r\n\r\n" + t.body, ""},
      {"OWS around a Content-Length", start + "Content-Length: \t" + length + " \r\n\r\n" + t.body, ""},
      {"HTAB inside a value", start + "X-Probe: a\tb\r\nContent-Length: " + length + "\r\n\r\n" + t.body, ""},
      {"a chunked body", start + "Transfer-Encoding: chunked\r\n\r\n" + chunks, ""},
  };
}

int StatusOf(const std::string& answer) { return answer.size() > 12 ? std::stoi(answer.substr(9, 3)) : 0; }

// Each answer has one Date line (a message may itself say "HTTP/1.1").
size_t CountAnswers(const std::string& bytes) {
  size_t n = 0;
  for (size_t at = bytes.find("\r\nDate: "); at != std::string::npos; at = bytes.find("\r\nDate: ", at + 1)) ++n;
  return n;
}

void CheckTarget(const Target& t) {
  for (bool bytewise : {false, true}) {
    for (const Probe& p : BadProbes(t)) {
      const std::string probe = t.name + (bytewise ? ", one byte per read: " : ": ") + p.name;
      INFO(probe);
      bool closed = false;
      std::string got = Exchange(t.port, p.request + kNext, &closed, bytewise);
      INFO("answer: " << got.substr(0, 400));
      CHECK(got.rfind("HTTP/1.1 400 Bad Request\r\n", 0) == 0);
      CHECK(got.find("\r\n\r\n{\"error\":{\"code\":\"invalid_argument\",\"message\":\"malformed request: " +
                     p.message + "\"}}") != std::string::npos);
      CHECK(CountAnswers(got) == 1);  // the request behind it is not answered
      CHECK(closed);
    }
    {
      const std::string probe = t.name + (bytewise ? ", one byte per read: " : ": ") + "CONNECT";
      INFO(probe);
      bool closed = false;
      std::string got = Exchange(t.port, "CONNECT x:443 HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                                             std::to_string(kNext.size()) + "\r\n\r\n" + kNext,
                                 &closed, bytewise);
      CHECK(got.rfind("HTTP/1.1 400 Bad Request\r\n", 0) == 0);
      CHECK(got.find("\"message\":\"CONNECT is not supported\"") != std::string::npos);
      CHECK(CountAnswers(got) == 1);  // its Content-Length bytes are not a request
      CHECK(closed);
    }
    for (const Probe& p : GoodProbes(t)) {
      const std::string probe = t.name + (bytewise ? ", one byte per read: " : ": ") + p.name;
      INFO(probe);
      bool closed = false;
      std::string got = Exchange(t.port, p.request + kNext, &closed, bytewise);
      INFO("answer: " << got.substr(0, 400));
      CHECK(StatusOf(got) >= 200);
      CHECK(StatusOf(got) < 300);
      CHECK(CountAnswers(got) == 2);  // then kNext's, which closes
      CHECK(closed);
    }
  }
}

std::string Listen(int port) { return "127.0.0.1:" + std::to_string(port); }

}  // namespace

TEST_CASE("issue 22: every service's public and admin ports refuse bad request framing with 400 and close") {
  testing::NatsServer nats;
  testing::TempDir dir;
  struct Service {
    std::string name;
    std::vector<std::string> args;
    int pub = testing::FreePort(), admin = testing::FreePort();
  };
  std::vector<Service> services = {
      {"folio-ingest", {"--data", dir.path() + "/ingest", "--token", kToken, "--site-name", "Framing"}},
      {"folio-edge", {"--threads", "2"}},
      {"folio-search", {"--data", dir.path() + "/search"}},
      {"folio-storage",
       {"--data", dir.path() + "/storage", "--write-token", kStorageWriteToken, "--read-token", kStorageReadToken}},
  };
  std::vector<std::unique_ptr<testing::Process>> procs;
  for (Service& s : services) {
    std::vector<std::string> argv{testing::BinPath(s.name), "--listen", Listen(s.pub), "--admin-listen",
                                  Listen(s.admin), "--nats", nats.url()};
    argv.insert(argv.end(), s.args.begin(), s.args.end());
    procs.push_back(std::make_unique<testing::Process>(argv, std::vector<std::string>{},
                                                       dir.path() + "/" + s.name + ".log"));
  }
  for (const Service& s : services) {
    REQUIRE_MESSAGE(testing::WaitForHttp("http://" + Listen(s.admin) + "/readyz", 200, 30000), s.name,
                    " not ready; see ", dir.path());
  }
  const Service &ingest = services[0], &edge = services[1], &search = services[2], &storage = services[3];
  const std::string push = PushBody({{"Page.md", "# Page\n\nhello\n"}});
  std::vector<Target> targets = {
      {"folio-ingest public", ingest.pub, "POST", "/api/v1/push",
       std::string("Authorization: Bearer ") + kToken + "\r\nContent-Type: application/json\r\n", push},
      {"folio-edge public", edge.pub, "GET", "/page", "", ""},
      {"folio-search public", search.pub, "GET", "/api/v1/search?q=hello&mode=text", "", ""},
      // A streaming route; a named object, as a blob already stored is
      // answered before its body is read (and the connection then closes).
      {"folio-storage public", storage.pub, "PUT", "/objects/probes/framing.json",
       std::string("Authorization: Bearer ") + kStorageWriteToken + "\r\n", "{}"},
  };
  for (const Service& s : services) {
    targets.push_back({s.name + " admin", s.admin, "GET", "/livez", "", ""});
  }
  // The edge's route answers 200 once the push has reached it.
  http::ClientRequest req;
  req.method = "POST";
  req.url = "http://" + Listen(ingest.pub) + "/api/v1/push";
  req.body = push;
  req.headers = {{"Authorization", std::string("Bearer ") + kToken}, {"Content-Type", "application/json"}};
  auto pushed = http::Fetch(req);
  REQUIRE(pushed.ok());
  REQUIRE(pushed->status == 200);
  REQUIRE(testing::WaitForHttp("http://" + Listen(edge.pub) + "/page", 200, 15000));
  for (const Target& t : targets) CheckTarget(t);
}

}  // namespace folio::it
