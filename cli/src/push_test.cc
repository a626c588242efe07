#include <doctest/doctest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "folio/core/hash.h"
#include "plan.h"
#include "report.h"
#include "vault.h"
#include "wire.h"

using namespace folio;
using namespace folio::cli;
namespace fs = std::filesystem;

namespace {

// A fresh directory, removed with everything below it at scope exit.
struct ScratchDir {
  ScratchDir() {
    std::string tmpl = (fs::temp_directory_path() / "folio-cli-test-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  void Write(const std::string& rel, const std::string& content) const {
    fs::create_directories((path / rel).parent_path());
    std::ofstream(path / rel, std::ios::binary) << content;
  }
  fs::path path;
};

std::vector<std::string> Paths(const std::vector<LocalNote>& notes) {
  std::vector<std::string> out;
  for (const auto& n : notes) out.push_back(n.path);
  return out;
}

const SkippedFile* FindSkipped(const Vault& v, const std::string& path) {
  for (const auto& s : v.skipped) {
    if (s.path == path) return &s;
  }
  return nullptr;
}

LocalNote Note(std::string path, int64_t size, std::string sha = "") {
  return LocalNote{std::move(path), std::move(sha), size};
}

}  // namespace

TEST_CASE("walk: collects .md notes, skips dot directories and dot files") {
  ScratchDir vault;
  vault.Write("Top.md", "# top");
  vault.Write("Folder/Note name.md", "see [[Top]]");
  vault.Write("Folder/Deep/Deeper.md", "deep");
  vault.Write("Folder/picture.png", "\x89PNG");
  vault.Write("README.txt", "not a note");
  vault.Write(".obsidian/workspace.md", "x");
  vault.Write(".git/x.md", "x");
  vault.Write(".trash/Old.md", "x");
  vault.Write("Folder/.drafts/Secret.md", "x");
  vault.Write(".hidden.md", "x");

  Result<Vault> v = WalkVault(vault.path, {});
  REQUIRE(v.ok());
  CHECK(Paths(v->notes) == std::vector<std::string>{"Folder/Deep/Deeper.md", "Folder/Note name.md", "Top.md"});
  CHECK(v->skipped.empty());
  CHECK(v->notes[2].sha256 == Sha256Hex("# top"));
  CHECK(v->notes[2].size == 5);
}

TEST_CASE("walk: bad UTF-8, oversized notes and bad paths are skipped with a reason") {
  ScratchDir vault;
  vault.Write("Good.md", "ok");
  vault.Write("Latin1.md", "caf\xe9");
  vault.Write("Big.md", std::string(101, 'x'));
  vault.Write("Exact.md", std::string(100, 'x'));
  vault.Write("Back\\slash.md", "x");
  vault.Write("Bad\x01name.md", "x");

  Result<Vault> v = WalkVault(vault.path, WalkOptions{100});
  REQUIRE(v.ok());
  CHECK(Paths(v->notes) == std::vector<std::string>{"Exact.md", "Good.md"});
  REQUIRE(v->skipped.size() == 4);
  const SkippedFile* latin1 = FindSkipped(*v, "Latin1.md");
  REQUIRE(latin1 != nullptr);
  CHECK(latin1->is_error);
  CHECK(latin1->reason.find("UTF-8") != std::string::npos);
  const SkippedFile* big = FindSkipped(*v, "Big.md");
  REQUIRE(big != nullptr);
  CHECK(big->reason.find("limit") != std::string::npos);
  REQUIRE(FindSkipped(*v, "Back\\slash.md") != nullptr);
  CHECK(FindSkipped(*v, "Back\\slash.md")->reason.find("backslash") != std::string::npos);
  CHECK(FindSkipped(*v, "Bad\x01name.md") != nullptr);
}

TEST_CASE("walk: symlinks are followed only to notes inside the vault") {
  ScratchDir outside, vault;
  outside.Write("Elsewhere.md", "outside");
  vault.Write("Real.md", "real");
  vault.Write("Dir/Inner.md", "inner");
  fs::create_symlink(vault.path / "Real.md", vault.path / "Alias.md");
  fs::create_symlink(outside.path / "Elsewhere.md", vault.path / "Escape.md");
  fs::create_symlink(outside.path, vault.path / "OutDir");
  fs::create_symlink(vault.path / "Dir", vault.path / "Loop");
  fs::create_symlink(vault.path / "Missing.md", vault.path / "Dangling.md");

  Result<Vault> v = WalkVault(vault.path, {});
  REQUIRE(v.ok());
  CHECK(Paths(v->notes) == std::vector<std::string>{"Alias.md", "Dir/Inner.md", "Real.md"});
  for (const char* p : {"Escape.md", "OutDir", "Loop", "Dangling.md"}) {
    CAPTURE(p);
    const SkippedFile* s = FindSkipped(*v, p);
    REQUIRE(s != nullptr);
    CHECK_FALSE(s->is_error);
  }
  CHECK(ReadNote(vault.path, "Alias.md", 100).value() == "real");
  CHECK(ReadNote(vault.path, "Escape.md", 100).status().code() == Code::kInvalidArgument);
  CHECK(ReadNote(vault.path, "Gone.md", 100).status().code() == Code::kNotFound);
}

TEST_CASE("walk: a missing directory is an error") {
  ScratchDir d;
  Result<Vault> v = WalkVault(d.path / "nope", {});
  CHECK(v.status().code() == Code::kNotFound);
}

TEST_CASE("diff: sends new and changed notes, deletes what is gone, keeps skipped files") {
  Vault local;
  local.notes = {Note("A.md", 1, "aa"), Note("B.md", 1, "bb"), Note("C.md", 1, "cc")};
  local.skipped = {{"Broken.md", "content is not valid UTF-8", true}};
  Manifest remote;
  remote.version = 4;
  remote.notes = {{"A.md", "AA", "/a"},           // same hash, other case
                  {"B.md", "old", "/b"},          // changed
                  {"Gone.md", "gg", "/gone"},     // deleted locally
                  {"Broken.md", "xx", "/broken"}, // still there, just unsendable
                  {"Also gone.md", "zz", "/z"}};
  PushPlan plan = Diff(local, remote);
  CHECK(Paths(plan.to_send) == std::vector<std::string>{"B.md", "C.md"});
  CHECK(plan.is_new == std::vector<bool>{false, true});
  CHECK(plan.new_count == 1);
  CHECK(plan.changed_count == 1);
  CHECK(plan.unchanged == 1);
  CHECK(plan.to_delete == std::vector<std::string>{"Also gone.md", "Gone.md"});
}

TEST_CASE("diff: an empty manifest sends everything") {
  Vault local;
  local.notes = {Note("A.md", 1, "aa"), Note("B.md", 1, "bb")};
  PushPlan plan = Diff(local, Manifest{});
  CHECK(plan.to_send.size() == 2);
  CHECK(plan.new_count == 2);
  CHECK(plan.to_delete.empty());
}

namespace {

// Checks the invariants of PlanBatches: every item once, in order, within limits.
void CheckBatches(const PushPlan& plan, const std::vector<Batch>& batches, const BatchLimits& limits) {
  size_t next_note = 0, next_delete = 0;
  bool deletes_started = false;
  for (const Batch& b : batches) {
    size_t items = b.note_count + b.delete_count;
    REQUIRE(items >= 1);
    CHECK(static_cast<int64_t>(items) <= limits.max_notes);
    int64_t bytes = 0;
    if (b.note_count > 0) {
      CHECK_FALSE(deletes_started);  // deletions only after every note
      CHECK(b.first_note == next_note);
      next_note += b.note_count;
      for (size_t i = b.first_note; i < b.first_note + b.note_count; ++i) bytes += plan.to_send[i].size;
    }
    if (b.delete_count > 0) {
      deletes_started = true;
      CHECK(b.first_delete == next_delete);
      next_delete += b.delete_count;
      for (size_t i = b.first_delete; i < b.first_delete + b.delete_count; ++i) {
        bytes += static_cast<int64_t>(plan.to_delete[i].size());
      }
    }
    CHECK(b.bytes == bytes);
    if (items > 1) CHECK(bytes <= limits.max_bytes);  // only a lone item may exceed
  }
  CHECK(next_note == plan.to_send.size());
  CHECK(next_delete == plan.to_delete.size());
}

}  // namespace

TEST_CASE("batches: no batch exceeds either limit (random vaults)") {
  std::mt19937 rng(42);
  for (int round = 0; round < 200; ++round) {
    PushPlan plan;
    int notes = static_cast<int>(rng() % 300);
    for (int i = 0; i < notes; ++i) {
      int64_t size = rng() % 10 == 0 ? static_cast<int64_t>(rng() % 50'000) : static_cast<int64_t>(rng() % 3'000);
      plan.to_send.push_back(Note("n" + std::to_string(i) + ".md", size));
    }
    int deletes = static_cast<int>(rng() % 40);
    for (int i = 0; i < deletes; ++i) plan.to_delete.push_back("gone/" + std::to_string(i) + ".md");
    BatchLimits limits{1 + static_cast<int64_t>(rng() % 60), 1 + static_cast<int64_t>(rng() % 40'000)};
    CAPTURE(round);
    CheckBatches(plan, PlanBatches(plan, limits), limits);
  }
}

TEST_CASE("batches: a note bigger than the byte limit travels alone") {
  PushPlan plan;
  plan.to_send = {Note("a.md", 10), Note("huge.md", 5000), Note("b.md", 10), Note("c.md", 10)};
  std::vector<Batch> batches = PlanBatches(plan, BatchLimits{500, 1000});
  REQUIRE(batches.size() == 3);
  CHECK(batches[0].note_count == 1);
  CHECK(batches[1].first_note == 1);
  CHECK(batches[1].note_count == 1);
  CHECK(batches[1].bytes == 5000);
  CHECK(batches[2].first_note == 2);
  CHECK(batches[2].note_count == 2);
}

TEST_CASE("batches: count limit, deletions fill the last batch then their own") {
  PushPlan plan;
  for (int i = 0; i < 5; ++i) plan.to_send.push_back(Note(std::to_string(i) + ".md", 1));
  plan.to_delete = {"x.md", "y.md", "z.md"};
  std::vector<Batch> batches = PlanBatches(plan, BatchLimits{2, 1 << 20});
  REQUIRE(batches.size() == 4);
  CHECK(batches[0].note_count == 2);
  CHECK(batches[1].note_count == 2);
  CHECK(batches[2].note_count == 1);
  CHECK(batches[2].delete_count == 1);
  CHECK(batches[3].note_count == 0);
  CHECK(batches[3].first_delete == 1);
  CHECK(batches[3].delete_count == 2);
  CHECK(PlanBatches(PushPlan{}, BatchLimits{}).empty());
}

TEST_CASE("batches: the defaults split a 2000-note vault into 4 requests") {
  PushPlan plan;
  for (int i = 0; i < 2000; ++i) plan.to_send.push_back(Note(std::to_string(i) + ".md", 1000));
  CHECK(PlanBatches(plan, BatchLimits{}).size() == 4);
}

TEST_CASE("wire: manifest and push reply parse, unknown fields ignored") {
  Result<Manifest> m = ParseManifest(
      R"({"extra":{"a":[1,2]},"notes":[{"url":"/folder/note","path":"Folder/Note.md","sha256":"ab12","size":3}],"version":7})");
  REQUIRE(m.ok());
  CHECK(m->version == 7);
  REQUIRE(m->notes.size() == 1);
  CHECK(m->notes[0].path == "Folder/Note.md");
  CHECK(m->notes[0].sha256 == "ab12");
  CHECK(m->notes[0].url == "/folder/note");
  CHECK(ParseManifest(R"({"version":1,"notes":[]})").ok());
  CHECK_FALSE(ParseManifest("<html>").ok());
  CHECK_FALSE(ParseManifest(R"({"version":1})").ok());
  CHECK_FALSE(ParseManifest(R"({"version":1,"notes":[{"sha256":"x"}]})").ok());

  Result<PushReply> r = ParsePushReply(
      R"({"version":8,"received":2,"changed":1,"rendered":3,"deleted":1,"took_ms":12,)"
      R"("notes":[{"path":"A.md","url":"/a","warnings":["dangling link [[X]]"]},{"path":"B.md","url":"/b","warnings":[]}]})");
  REQUIRE(r.ok());
  CHECK(r->version == 8);
  CHECK(r->received == 2);
  CHECK(r->rendered == 3);
  CHECK(r->deleted == 1);
  REQUIRE(r->notes.size() == 2);
  CHECK(r->notes[0].warnings == std::vector<std::string>{"dangling link [[X]]"});
  CHECK(r->notes[1].warnings.empty());
}

TEST_CASE("wire: push body carries notes and deletions, escaped") {
  std::vector<OutgoingNote> notes = {{"Folder/Note name.md", "line \"1\"\nline 2 é"}};
  std::vector<std::string> deletes = {"Old note.md"};
  CHECK(BuildPushBody(notes, deletes) ==
        R"({"notes":[{"path":"Folder/Note name.md","content":"line \"1\"\nline 2 é"}],"delete":["Old note.md"]})");
  CHECK(BuildPushBody({}, {}) == R"({"notes":[],"delete":[]})");
}

TEST_CASE("wire: HTTP errors become one-line messages") {
  std::string err = R"({"error":{"code":"too_large","message":"body over 64 MiB"}})";
  CHECK(ErrorMessage(err) == "body over 64 MiB");
  CHECK(ErrorMessage("<html>bad gateway</html>").empty());
  Status s401 = ErrorForResponse("http://h", kPushPath, 401, "");
  CHECK(s401.code() == Code::kUnauthenticated);
  CHECK(s401.message() == "the server rejected the token (check --token / FOLIO_TOKEN)");
  Status s413 = ErrorForResponse("http://h", kPushPath, 413, err);
  CHECK(s413.code() == Code::kTooLarge);
  CHECK(s413.message().find("body over 64 MiB") != std::string::npos);
  Status s400 = ErrorForResponse("http://h", kPushPath, 400,
                                 R"({"error":{"code":"invalid_argument","message":"note 'a/../b.md':\npath contains '..'"}})");
  CHECK(s400.code() == Code::kInvalidArgument);
  CHECK(s400.message().find("path contains '..'") != std::string::npos);
  CHECK(s400.message().find('\n') == std::string::npos);
  CHECK(ErrorForResponse("http://h", kPushPath, 503, "").code() == Code::kUnavailable);
}

TEST_CASE("report: summary line and sizes") {
  PushTotals t;
  t.sent = 12;
  t.changed = 3;
  t.rendered = 15;
  t.deleted = 1;
  t.version = 7;
  t.seconds = 0.421;
  CHECK(SummaryLine(t) == "folio: 12 notes sent, 3 changed, 15 rendered, 1 deleted, 0 unchanged skipped; version 7; 0.42 s");
  t.skipped = 2;
  CHECK(SummaryLine(t).ends_with("; 2 files skipped"));
  CHECK(FormatBytes(812) == "812 B");
  CHECK(FormatBytes(8 << 20) == "8 MiB");
  CHECK(FormatBytes(1536) == "1.5 KiB");
  CHECK(ProgressLine(1, 4, 1024, 4096) == "[######..................] 1/4 notes  1 KiB/4 KiB");
  CHECK(DryRunSendLine(Note("A.md", 12), true) == "would send A.md (new, 12 bytes)");
}
