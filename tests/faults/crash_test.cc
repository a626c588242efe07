// Fault test: folio-ingest killed with SIGKILL again and again while a client
// pushes notes with attachments (through folio-storage). Whatever ingest
// acknowledged (200) must survive: after the last restart the manifest has
// every acknowledged note and attachment with its hash, the edge serves every
// acknowledged note, and each attachment's bytes come back identical.
// Pushes that got no answer may or may not have landed; they are not checked.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "../integration/cluster.h"
#include "folio/core/hash.h"
#include "folio/core/json.h"

using namespace folio;
using namespace folio::it;

namespace {

constexpr int kKills = 5;
constexpr int kMinAcked = 40;

struct Pushed {
  std::string note;         // "Crash/n<i>.md"
  std::string note_text;
  std::string attachment;   // "Crash/a<i>.png"
  std::string bytes;
};

Pushed MakePush(int i, std::mt19937* rng) {
  Pushed p;
  p.note = "Crash/n" + std::to_string(i) + ".md";
  p.attachment = "Crash/a" + std::to_string(i) + ".png";
  p.note_text = "# Note " + std::to_string(i) + "\n\nPicture " + std::to_string(i) + ": ![[a" + std::to_string(i) + ".png]]\n";
  p.bytes = "\x89PNG\r\n\x1a\n";
  size_t n = 2000 + (*rng)() % 40000;
  while (p.bytes.size() < n) p.bytes.push_back(static_cast<char>((*rng)() & 0xff));
  return p;
}

std::string Body(const Pushed& p) {
  JsonWriter w;
  w.BeginObject().Key("notes").BeginArray();
  w.BeginObject().Key("path").String(p.note).Key("content").String(p.note_text).EndObject();
  w.EndArray().Key("attachments").BeginArray();
  w.BeginObject().Key("path").String(p.attachment).Key("data").String(Base64Encode(p.bytes)).EndObject();
  w.EndArray().Key("delete").BeginArray().EndArray().EndObject();
  return w.Take();
}

// The "/assets/..." URL of `name` in a page body, or "".
std::string AssetUrl(const std::string& body, const std::string& name) {
  for (size_t at = body.find("/assets/"); at != std::string::npos; at = body.find("/assets/", at + 1)) {
    std::string url = body.substr(at, body.find('"', at) - at);
    if (url.size() > name.size() && url.compare(url.size() - name.size(), name.size(), name) == 0) return url;
  }
  return "";
}

}  // namespace

TEST_CASE("faults: every push ingest acknowledged survives repeated SIGKILLs, attachments included") {
  Cluster c({}, /*start_services=*/false);
  c.StartStorage();
  c.AddIngestArgs(c.IngestStorageArgs());
  c.AddEdgeArgs(c.EdgeStorageArgs());
  c.StartIngest();
  c.StartEdge();

  std::mutex mu;
  std::vector<Pushed> acked;
  std::atomic<int> unanswered{0};
  std::atomic<bool> stop{false};
  std::thread pusher([&] {
    std::mt19937 rng(9);
    for (int i = 0; !stop; ++i) {
      Pushed p = MakePush(i, &rng);
      http::ClientResponse r = c.Push(Body(p));
      if (r.status == 200) {
        std::lock_guard<std::mutex> l(mu);
        acked.push_back(std::move(p));
      } else {
        ++unanswered;  // killed mid-push, or not up yet: outcome unknown
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    }
  });
  auto acked_count = [&] {
    std::lock_guard<std::mutex> l(mu);
    return static_cast<int>(acked.size());
  };
  std::mt19937 rng(4);
  for (int k = 0; k < kKills; ++k) {
    int before = acked_count();
    // Let a few pushes through, then kill at a random point of the next ones.
    for (int spin = 0; spin < 400 && acked_count() < before + 4; ++spin) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 60));
    c.StopIngest(9);
    c.StartIngest();
  }
  for (int spin = 0; spin < 800 && acked_count() < kMinAcked; ++spin) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  stop = true;
  pusher.join();
  // One more kill after the last acknowledgement, then check from a fresh process.
  c.StopIngest(9);
  c.StartIngest();
  REQUIRE(testing::WaitForHttp(c.ingest_url() + "/readyz", 200, 20000));

  INFO(c.Logs());
  MESSAGE(acked.size() << " pushes acknowledged, " << unanswered.load() << " unanswered, " << kKills + 1 << " SIGKILLs");
  REQUIRE(static_cast<int>(acked.size()) >= kMinAcked);
  http::ClientResponse manifest = c.Manifest();
  REQUIRE(manifest.status == 200);
  for (const Pushed& p : acked) {
    INFO("push of " << p.note);
    CHECK(manifest.body.find("\"path\":\"" + p.note + "\",\"sha256\":\"" + Sha256Hex(p.note_text) + "\"") !=
          std::string::npos);
    CHECK(manifest.body.find("\"path\":\"" + p.attachment + "\",\"sha256\":\"" + Sha256Hex(p.bytes) + "\"") !=
          std::string::npos);
    std::string url = "/crash/" + p.note.substr(6, p.note.size() - 9);
    std::string name = p.attachment.substr(6);
    http::ClientResponse page = c.WaitForPage(url, 200, name, 20000);
    REQUIRE(page.status == 200);
    std::string asset = AssetUrl(page.body, name);
    REQUIRE(!asset.empty());
    http::ClientResponse got = c.EdgeGet(asset);
    CHECK(got.status == 200);
    CHECK(got.body == p.bytes);
  }
}
