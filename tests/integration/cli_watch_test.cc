// `folio watch` (issue 14) as a child process against real nats-server +
// ingest + edge processes: edits, new folders, deletions, renames (the old
// URL answers 301), attachments, a burst of saves as one push, the server
// going away and coming back (the catch-up sends only what changed), a
// signal (exit 0) and the vault's folder removed (a clear error, exit 1).
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster.h"
#include "test_util.h"
#include "folio/http/client.h"
#include "folio/testing/testing.h"
#include "json_util.h"

using namespace folio;
using namespace folio::it;
namespace fs = std::filesystem;

namespace {

// The log's lines that start with `prefix`.
std::vector<std::string> Lines(const fs::path& log, const std::string& prefix) {
  std::istringstream in(ReadFile(log));
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(prefix)) out.push_back(line);
  }
  return out;
}

// Polls until the log has more than `n` lines starting with `prefix`.
bool WaitForLines(const fs::path& log, const std::string& prefix, size_t n, int timeout_ms = 10000) {
  for (int waited = 0; waited < timeout_ms; waited += 20) {
    if (Lines(log, prefix).size() > n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

constexpr const char* kPush = "{\"event\":\"push\"";

// The number of push lines once no new one came for 200 ms: the edge may
// serve a push's pages before the watcher has printed its line.
size_t SettledPushes(const fs::path& log) {
  size_t n = Lines(log, kPush).size();
  for (int quiet = 0; quiet < 200; quiet += 20) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (size_t m = Lines(log, kPush).size(); m != n) {
      n = m;
      quiet = 0;
    }
  }
  return n;
}

std::unique_ptr<testing::Process> StartWatch(Cluster& c, const fs::path& vault, const fs::path& log) {
  return std::make_unique<testing::Process>(
      std::vector<std::string>{testing::BinPath("folio"), "watch", vault.string(), "--server", c.ingest_url(),
                               "--token", kToken, "--json", "--debounce", "50ms"},
      std::vector<std::string>{}, log.string());
}

}  // namespace

TEST_CASE("folio watch pushes edits, new folders, deletions, renames, attachments; catches up after an outage") {
  Cluster c;
  fs::path vault = fs::path(c.dir()) / "vault", log = fs::path(c.dir()) / "watch.log";
  WriteFile(vault / "Alpha.md", "# Alpha\n\nfirst version\n");
  WriteFile(vault / "Folder/Beta.md", "# Beta\n");
  WriteFile(vault / "Keep.md", "# Keep\n\nLinks [[Alpha]].\n");
  auto watch = StartWatch(c, vault, log);
  REQUIRE(WaitForLines(log, "{\"event\":\"watching\"", 0));
  INFO(ReadFile(log));
  CHECK(JsonInt(Lines(log, kPush).at(0), "added") == 3);  // the initial push, like folio push
  REQUIRE(c.WaitForPage("/alpha", 200, "first version").status == 200);

  // An edit.
  WriteFile(vault / "Alpha.md", "# Alpha\n\nsecond version\n");
  CHECK(c.WaitForPage("/alpha", 200, "second version").status == 200);

  // A new note in a new folder: the new folder is watched too.
  fs::create_directories(vault / "New/Deep");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  WriteFile(vault / "New/Deep/Gamma.md", "# Gamma\n");
  CHECK(c.WaitForPage("/new/deep/gamma", 200).status == 200);
  WriteFile(vault / "New/Deep/Later.md", "# Later\n");  // the new folder's own watch sees it
  CHECK(c.WaitForPage("/new/deep/later", 200).status == 200);

  // A deletion, then a whole folder removed: the watcher keeps going.
  fs::remove(vault / "Folder/Beta.md");
  CHECK(c.WaitForPage("/folder/beta", 410).status == 410);
  fs::remove_all(vault / "New");
  CHECK(c.WaitForPage("/new/deep/gamma", 410).status == 410);
  CHECK(c.WaitForPage("/new/deep/later", 410).status == 410);

  // A rename is a delete plus an add in one push: the old URL redirects.
  size_t pushes = SettledPushes(log);
  fs::rename(vault / "Alpha.md", vault / "Folder/Omega.md");
  CHECK(c.WaitForPage("/folder/omega", 200, "second version").status == 200);
  auto moved = c.WaitForPage("/alpha", 301);
  CHECK(moved.status == 301);
  CHECK(moved.Header("Location") == "/folder/omega");
  REQUIRE(WaitForLines(log, kPush, pushes));
  std::string rename_push = Lines(log, kPush).at(pushes);
  CHECK(JsonInt(rename_push, "added") == 1);
  CHECK(JsonInt(rename_push, "deleted") == 1);

  // An attachment.
  WriteFile(vault / "pic.png", std::string("\x89PNG\r\n\x1a\n", 8) + "pixels");
  bool listed = false;
  for (int i = 0; i < 200 && !listed; ++i) {
    listed = c.Manifest().body.find("pic.png") != std::string::npos;
    if (!listed) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(listed);

  // A burst of saves, each written to a temp file then renamed over the
  // note (as editors do), 5 ms apart: one push.
  pushes = SettledPushes(log);
  for (int i = 1; i <= 10; ++i) {
    WriteFile(vault / "Keep.md.tmp", "# Keep\n\nLinks [[Folder/Omega]]. save " + std::to_string(i) + "\n");
    fs::rename(vault / "Keep.md.tmp", vault / "Keep.md");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  CHECK(c.WaitForPage("/keep", 200, "save 10").status == 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto after_burst = Lines(log, kPush);
  REQUIRE(after_burst.size() == pushes + 1);
  CHECK(JsonInt(after_burst.back(), "modified") == 1);
  CHECK(JsonInt(after_burst.back(), "added") == 0);

  // The server goes away: changes wait, the watcher retries, then one
  // catch-up push sends just the edit and the new note.
  SettledPushes(log);
  c.StopIngest();
  size_t retries = Lines(log, "{\"event\":\"retry\"").size();
  WriteFile(vault / "Folder/Omega.md", "# Omega\n\nedited while the server was down\n");
  WriteFile(vault / "Offline.md", "# Offline\n");
  REQUIRE(WaitForLines(log, "{\"event\":\"retry\"", retries));
  pushes = Lines(log, kPush).size();
  c.StartIngest();
  CHECK(c.WaitForPage("/offline", 200).status == 200);
  CHECK(c.WaitForPage("/folder/omega", 200, "edited while").status == 200);
  REQUIRE(WaitForLines(log, kPush, pushes));
  std::string catch_up = Lines(log, kPush).at(pushes);
  CHECK(JsonInt(catch_up, "added") == 1);     // Offline.md
  CHECK(JsonInt(catch_up, "modified") == 1);  // Folder/Omega.md; Keep.md and pic.png are not re-sent
  CHECK(JsonInt(catch_up, "deleted") == 0);
  CHECK(JsonInt(catch_up, "received") == 2);  // what ingest's reply counts

  // SIGTERM: exit 0.
  int status = watch->Stop(SIGTERM, 5000);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("folio watch stops with a clear error when the vault's folder is removed or moved") {
  Cluster c;
  for (bool move : {false, true}) {
    fs::path vault = fs::path(c.dir()) / (move ? "moved" : "gone"), log = fs::path(c.dir()) / (move ? "m.log" : "g.log");
    WriteFile(vault / (move ? "Moved.md" : "Gone.md"), "# Note\n");
    testing::Process watch(std::vector<std::string>{testing::BinPath("folio"), "watch", vault.string(), "--server",
                                                    c.ingest_url(), "--token", kToken},
                           std::vector<std::string>{}, log.string());
    REQUIRE(WaitForLines(log, "folio: watching", 0));
    if (move) fs::rename(vault, fs::path(c.dir()) / "elsewhere");
    else fs::remove_all(vault);
    int status = -1;
    for (int i = 0; i < 250 && status == -1; ++i) {
      if (!watch.Running()) status = watch.Stop(SIGTERM, 100);
      else std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    INFO(ReadFile(log));
    REQUIRE(status != -1);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 1);
    CHECK(ReadFile(log).find("was deleted or moved; stopped watching") != std::string::npos);
  }
}

TEST_CASE("folio watch: a folder moved, a note saved and removed within one burst, an attachment edited, settings") {
  Cluster c;
  fs::path vault = fs::path(c.dir()) / "vault", log = fs::path(c.dir()) / "watch.log";
  WriteFile(vault / "Docs/Guide.md", "# Guide\n\nSee ![[Docs/pic.png]].\n");
  WriteFile(vault / "Docs/pic.png", std::string("\x89PNG\r\n\x1a\n", 8) + "one");
  WriteFile(vault / "Home.md", "# Home\n\nfirst line\nsecond line\n");
  auto watch = StartWatch(c, vault, log);
  REQUIRE(WaitForLines(log, "{\"event\":\"watching\"", 0));
  INFO(ReadFile(log));
  REQUIRE(c.WaitForPage("/docs/guide", 200).status == 200);

  // A folder renamed: its notes move (the old URLs redirect), the folder's new path is watched.
  fs::rename(vault / "Docs", vault / "Manual");
  CHECK(c.WaitForPage("/manual/guide", 200).status == 200);
  CHECK(c.WaitForPage("/docs/guide", 301).Header("Location") == "/manual/guide");
  WriteFile(vault / "Manual/Later.md", "# Later\n");
  CHECK(c.WaitForPage("/manual/later", 200).status == 200);

  // A note created and removed before the burst ends: nothing to push, nothing deleted.
  size_t pushes = SettledPushes(log);
  WriteFile(vault / "Scratch.md", "# Scratch\n");
  fs::remove(vault / "Scratch.md");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(Lines(log, kPush).size() == pushes);
  CHECK(c.Manifest().body.find("Scratch.md") == std::string::npos);

  // An attachment edited: sent again (its hash in the manifest changes).
  std::string before = c.Manifest().body;
  WriteFile(vault / "Manual/pic.png", std::string("\x89PNG\r\n\x1a\n", 8) + "two");
  REQUIRE(WaitForLines(log, kPush, pushes));
  CHECK(JsonInt(Lines(log, kPush).back(), "modified") == 1);
  CHECK(c.Manifest().body != before);

  // Obsidian's "Strict line breaks" turned on in .obsidian/app.json: the setting is pushed.
  pushes = SettledPushes(log);
  WriteFile(vault / ".obsidian/app.json", "{\"strictLineBreaks\": true}");
  bool strict = false;
  for (int i = 0; i < 250 && !strict; ++i) {
    strict = c.Manifest().body.find("\"strict_line_breaks\":true") != std::string::npos;
    if (!strict) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  CHECK(strict);
  CHECK(c.WaitForPage("/home", 200, "first line second line").status == 200);
}

TEST_CASE("folio watch stops, not retries, when the server refuses its token or the delete guard holds") {
  Cluster c;
  // A wrong token: the first push is refused; the watch ends with exit 1 at once.
  fs::path vault = fs::path(c.dir()) / "vault", log = fs::path(c.dir()) / "token.log";
  WriteFile(vault / "Note.md", "# Note\n");
  testing::Process watch(std::vector<std::string>{testing::BinPath("folio"), "watch", vault.string(), "--server",
                                                  c.ingest_url(), "--token", "not-the-token"},
                         std::vector<std::string>{}, log.string());
  int status = -1;
  for (int i = 0; i < 250 && status == -1; ++i) {
    if (!watch.Running()) status = watch.Stop(SIGTERM, 100);
    else std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  INFO(ReadFile(log));
  REQUIRE(status != -1);  // ended by itself within 5 s
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(ReadFile(log).find("rejected the token") != std::string::npos);
  CHECK(ReadFile(log).find("stopped watching") != std::string::npos);
  CHECK(ReadFile(log).find("retrying") == std::string::npos);

  // The delete guard: most of the site's notes gone in one burst stops the
  // watch with push's message instead of deleting them or retrying forever.
  fs::path big = fs::path(c.dir()) / "big", glog = fs::path(c.dir()) / "guard.log";
  for (int i = 0; i < 40; ++i) WriteFile(big / ("n" + std::to_string(i) + ".md"), "# N" + std::to_string(i) + "\n");
  testing::Process guarded(std::vector<std::string>{testing::BinPath("folio"), "watch", big.string(), "--server",
                                                    c.ingest_url(), "--token", kToken},
                           std::vector<std::string>{}, glog.string());
  REQUIRE(WaitForLines(glog, "folio: watching", 0));
  for (int i = 0; i < 35; ++i) fs::remove(big / ("n" + std::to_string(i) + ".md"));
  status = -1;
  for (int i = 0; i < 250 && status == -1; ++i) {
    if (!guarded.Running()) status = guarded.Stop(SIGTERM, 100);
    else std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  INFO(ReadFile(glog));
  REQUIRE(status != -1);
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(ReadFile(glog).find("--yes") != std::string::npos);
  CHECK(ReadFile(glog).find("stopped watching") != std::string::npos);
  auto manifest = c.Manifest();
  CHECK(manifest.body.find("n3.md") != std::string::npos);  // nothing was deleted
}
