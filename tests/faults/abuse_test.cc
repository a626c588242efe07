// Fault test: what an attacker's connections can do to readers.
//  - Request smuggling: every probe with a conflicting or malformed framing
//    (Content-Length and Transfer-Encoding together, two Content-Lengths,
//    obfuscated Transfer-Encoding, signs, overflows, bad separators) gets
//    400 and a closed connection; the request hidden behind it is never
//    answered, and nothing is written (ingest's push endpoint, with a valid
//    token, and the edge).
//  - Slowloris and idle connections: 2,000 idle connections and 200 that
//    trickle their headers one byte at a time leave readers served (a strict
//    load: 0 errors, every answer 200).
#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "../integration/cluster.h"
#include "../integration/test_util.h"
#include "folio/testing/load.h"

using namespace folio;
using namespace folio::it;

namespace {

int PortOf(const std::string& url) { return std::stoi(url.substr(url.rfind(':') + 1)); }

size_t CountResponses(const std::string& bytes) {
  size_t n = 0;
  for (size_t at = bytes.find("HTTP/1."); at != std::string::npos; at = bytes.find("HTTP/1.", at + 1)) ++n;
  return n;
}

// A header with a NUL byte in its value; sizeof keeps the NUL and drops the terminator.
constexpr char kNulHeaderBytes[] = "X-A: a\0b\r\nContent-Length: 0\r\n\r\n";
const std::string kNulHeader(kNulHeaderBytes, sizeof kNulHeaderBytes - 1);

// Framing probes; each hides a second request ("/smuggled") behind the body
// a confused parser would see.
std::vector<std::pair<std::string, std::string>> Probes(const std::string& method, const std::string& path,
                                                      const std::string& auth) {
  const std::string start = method + " " + path + " HTTP/1.1\r\nHost: a\r\n" + auth;
  const std::string hidden = "GET /smuggled HTTP/1.1\r\nHost: a\r\n\r\n";
  return {
      {"CL.TE", start + "Content-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + hidden},
      {"TE.CL", start + "Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n8\r\nSMUGGLED\r\n0\r\n\r\n" + hidden},
      {"two Content-Lengths", start + "Content-Length: 0\r\nContent-Length: 40\r\n\r\n" + hidden},
      {"Content-Length list", start + "Content-Length: 0, 40\r\n\r\n" + hidden},
      {"Content-Length with a sign", start + "Content-Length: +0\r\n\r\n" + hidden},
      {"negative Content-Length", start + "Content-Length: -1\r\n\r\n" + hidden},
      {"Content-Length overflow", start + "Content-Length: 18446744073709551617\r\n\r\n" + hidden},
      {"space before the colon", start + "Content-Length : 0\r\nTransfer-Encoding : chunked\r\n\r\n" + hidden},
      {"Transfer-Encoding not chunked last", start + "Transfer-Encoding: chunked, identity\r\n\r\n0\r\n\r\n" + hidden},
      {"obfuscated Transfer-Encoding", start + "Transfer-Encoding: xchunked\r\n\r\n0\r\n\r\n" + hidden},
      {"chunk size overflow", start + "Transfer-Encoding: chunked\r\n\r\nffffffffffffffffff1\r\nx\r\n0\r\n\r\n" + hidden},
      {"chunk size not hex", start + "Transfer-Encoding: chunked\r\n\r\n0x5\r\nhello\r\n0\r\n\r\n" + hidden},
      {"NUL in a header", start + kNulHeader + hidden},
      {"header without a colon", start + "Content-Length 0\r\n\r\n" + hidden},
      {"Content-Length folded onto two lines", start + "Content-Length: 0\r\n 40\r\n\r\n" + hidden},
      {"two Transfer-Encodings", start + "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n0\r\n\r\n" + hidden},
      {"bare CR in a header", start + "X-A: a\rContent-Length: 40\r\n\r\n" + hidden},
  };
}

}  // namespace

TEST_CASE("faults: every request-smuggling probe gets 400 and a closed connection; nothing behind it is answered") {
  Cluster c;
  REQUIRE(c.Push(PushBody({{"Page.md", "# Page\n\nhello\n"}})).status == 200);
  REQUIRE(c.WaitForPage("/page", 200, "hello").status == 200);
  const std::string manifest = c.Manifest().body;
  struct Target {
    std::string name;
    int port;
    std::string method, path, auth;
  };
  const std::vector<Target> targets = {
      {"ingest", PortOf(c.ingest_url()), "POST", "/api/v1/push", std::string("Authorization: Bearer ") + kToken + "\r\n"},
      {"edge", PortOf(c.edge_url()), "GET", "/page", ""},
  };
  for (const Target& t : targets) {
    for (const auto& [name, raw] : Probes(t.method, t.path, t.auth)) {
      CAPTURE(t.name);
      const std::string probe = name;
      CAPTURE(probe);
      bool closed = false;
      std::string got = Exchange(t.port, raw, &closed);
      INFO("answer: " << got.substr(0, 300));
      CHECK(got.rfind("HTTP/1.1 400 ", 0) == 0);
      CHECK(CountResponses(got) == 1);
      CHECK(got.find("smuggled") == std::string::npos);
      CHECK(closed);
    }
  }
  // Nothing was written, and both still serve.
  CHECK(c.Manifest().body == manifest);
  CHECK(c.EdgeGet("/page").status == 200);
}

TEST_CASE("faults: slowloris and 2,000 idle connections leave readers served") {
  Cluster c;
  std::vector<std::pair<std::string, std::string>> notes;
  std::vector<std::string> paths;
  for (int i = 0; i < 20; ++i) {
    notes.push_back({"Busy/n" + std::to_string(i) + ".md", "# Busy " + std::to_string(i) + "\n\ntext\n"});
    paths.push_back("/busy/n" + std::to_string(i));
  }
  REQUIRE(c.Push(PushBody(notes)).status == 200);
  for (const std::string& p : paths) REQUIRE(c.WaitForPage(p, 200).status == 200);
  const int port = PortOf(c.edge_url());

  rlimit lim{};
  getrlimit(RLIMIT_NOFILE, &lim);
  constexpr rlim_t kWant = 2400;
  if (lim.rlim_cur < kWant && lim.rlim_max >= kWant) {
    lim.rlim_cur = kWant;
    setrlimit(RLIMIT_NOFILE, &lim);
  }
  getrlimit(RLIMIT_NOFILE, &lim);
  const int idle_count = lim.rlim_cur >= kWant ? 2000 : static_cast<int>(lim.rlim_cur) - 400;
  REQUIRE(idle_count > 100);
  if (idle_count < 2000) MESSAGE("only " << idle_count << " idle connections: RLIMIT_NOFILE is " << lim.rlim_cur);
  std::vector<int> idle, slow;
  for (int i = 0; i < idle_count; ++i) {
    int fd = Connect(port);
    REQUIRE(fd >= 0);
    idle.push_back(fd);
  }
  for (int i = 0; i < 200; ++i) {
    int fd = Connect(port);
    REQUIRE(fd >= 0);
    slow.push_back(fd);
  }
  const std::string slow_request = "GET /busy/n0 HTTP/1.1\r\nHost: a\r\nX-Slow: ";
  std::atomic<bool> stop{false};
  std::thread trickler([&] {
    for (size_t i = 0; !stop; ++i) {
      char byte = i < slow_request.size() ? slow_request[i] : 'x';
      for (int fd : slow) send(fd, &byte, 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });

  testing::LoadOptions o;
  o.port = port;
  o.paths = paths;
  o.connections = 4;
  o.pause_us = 500;
  testing::HttpLoad load(o);
  load.Start();
  CHECK(load.WaitForResponses(2000, 30000));
  testing::LoadStats s = load.Stop();
  stop = true;
  trickler.join();
  for (int fd : idle) close(fd);
  for (int fd : slow) close(fd);
  INFO(s.Describe());
  INFO(c.Logs());
  MESSAGE("readers beside " << idle_count << " idle and 200 slowloris connections: " << s.Describe());
  CHECK(s.errors == 0);
  CHECK(s.connect_errors == 0);
  CHECK(s.Count(200) == s.requests);
}
