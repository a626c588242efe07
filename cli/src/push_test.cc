#include <doctest/doctest.h>
#include <simdjson.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "folio/core/hash.h"
#include "index.h"
#include "plan.h"
#include "prefix.h"
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
  vault.Write("README.txt", "not a note");
  vault.Write(".obsidian/workspace.md", "x");
  vault.Write(".git/x.md", "x");
  vault.Write(".trash/Old.md", "x");
  vault.Write("Folder/.drafts/Secret.md", "x");
  vault.Write(".hidden.md", "x");

  Result<Vault> v = WalkVault(vault.path, {});
  REQUIRE(v.ok());
  CHECK(Paths(v->notes) == std::vector<std::string>{"Folder/Deep/Deeper.md", "Folder/Note name.md", "Top.md"});
  CHECK(v->attachments.empty());
  CHECK(v->skipped.empty());
  CHECK(v->notes[2].sha256 == Sha256Hex("# top"));
  CHECK(v->notes[2].size == 5);
}

TEST_CASE("walk: a tree of many folders is walked on several threads, each file once, sorted") {
  ScratchDir vault;
  std::vector<std::string> want;
  for (int a = 0; a < 12; ++a) {
    for (int b = 0; b < 6; ++b) {
      for (int n = 0; n < 5; ++n) {
        std::string rel = "F" + std::to_string(a) + "/G" + std::to_string(b) + "/Note " + std::to_string(n) + ".md";
        vault.Write(rel, "note " + rel);
        want.push_back(rel);
      }
    }
    vault.Write("F" + std::to_string(a) + "/Pic.PNG", "png " + std::to_string(a));
  }
  vault.Write("Top.md", "top");
  want.push_back("Top.md");
  std::sort(want.begin(), want.end());
  REQUIRE(mkfifo((vault.path / "F0/pipe.md").c_str(), 0600) == 0);  // not a regular file: ignored, never opened

  for (int round = 0; round < 3; ++round) {
    Result<Vault> v = WalkVault(vault.path, {});
    REQUIRE(v.ok());
    CHECK(Paths(v->notes) == want);
    CHECK(v->attachments.size() == 12);
    CHECK(std::is_sorted(v->attachments.begin(), v->attachments.end(),
                         [](const LocalFile& x, const LocalFile& y) { return x.path < y.path; }));
    CHECK(v->hashed == want.size() + 12);
    CHECK(v->skipped.empty());
    for (const auto& n : v->notes) CHECK(n.sha256 == Sha256Hex(n.path == "Top.md" ? "top" : "note " + n.path));
  }
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
  CHECK(Paths(plan.notes.to_send) == std::vector<std::string>{"B.md", "C.md"});
  CHECK(plan.notes.is_new == std::vector<bool>{false, true});
  CHECK(plan.notes.new_count == 1);
  CHECK(plan.notes.changed_count == 1);
  CHECK(plan.notes.unchanged == 1);
  CHECK(plan.attachments.to_send.empty());
  CHECK(plan.to_delete == std::vector<std::string>{"Also gone.md", "Gone.md"});
}

TEST_CASE("diff: unsorted lists, a path the server lists twice, a server attachment that is a local note") {
  Vault local;
  local.notes = {Note("Z.md", 1, "zz"), Note("A.md", 1, "aa"), Note("pic.png.md", 1, "pp")};
  Manifest remote;
  remote.notes = {{"Z.md", "zz", "/z"}, {"A.md", "aa", "/a"}, {"A.md", "other", "/a"}, {"Gone.md", "g", "/g"}};
  remote.attachments = {{"pic.png.md", "pp", "/assets/p"}, {"x.png", "xx", "/assets/x"}};
  PushPlan plan = Diff(local, remote);
  CHECK(plan.notes.unchanged == 2);  // A.md: the first of its two entries counts
  CHECK(Paths(plan.notes.to_send) == std::vector<std::string>{"pic.png.md"});  // not a server note
  CHECK(plan.to_delete == std::vector<std::string>{"Gone.md", "x.png"});  // pic.png.md is present locally
}

TEST_CASE("diff: an empty manifest sends everything") {
  Vault local;
  local.notes = {Note("A.md", 1, "aa"), Note("B.md", 1, "bb")};
  PushPlan plan = Diff(local, Manifest{});
  CHECK(plan.notes.to_send.size() == 2);
  CHECK(plan.notes.new_count == 2);
  CHECK(plan.to_delete.empty());
}

namespace {

// Checks the invariants of PlanBatches: every item once, in order (all
// attachments, then all notes, then all deletions), within limits.
void CheckBatches(const PushPlan& plan, const std::vector<Batch>& batches, const BatchLimits& limits) {
  size_t next_attachment = 0, next_note = 0, next_delete = 0;
  bool notes_started = false, deletes_started = false;
  for (const Batch& b : batches) {
    size_t items = b.attachment_count + b.note_count + b.delete_count;
    REQUIRE(items >= 1);
    CHECK(b.items() == items);
    CHECK(static_cast<int64_t>(items) <= limits.max_notes);
    int64_t bytes = 0;
    if (b.attachment_count > 0) {
      CHECK_FALSE(notes_started);  // attachments before every note
      CHECK_FALSE(deletes_started);
      CHECK(b.first_attachment == next_attachment);
      next_attachment += b.attachment_count;
      for (size_t i = b.first_attachment; i < b.first_attachment + b.attachment_count; ++i) {
        bytes += EncodedAttachmentSize(plan.attachments.to_send[i].size);
      }
    }
    if (b.note_count > 0) {
      notes_started = true;
      CHECK(next_attachment == plan.attachments.to_send.size());
      CHECK_FALSE(deletes_started);  // deletions only after every note
      CHECK(b.first_note == next_note);
      next_note += b.note_count;
      for (size_t i = b.first_note; i < b.first_note + b.note_count; ++i) bytes += plan.notes.to_send[i].size;
    }
    if (b.delete_count > 0) {
      deletes_started = true;
      CHECK(next_attachment == plan.attachments.to_send.size());
      CHECK(next_note == plan.notes.to_send.size());
      CHECK(b.first_delete == next_delete);
      next_delete += b.delete_count;
      for (size_t i = b.first_delete; i < b.first_delete + b.delete_count; ++i) {
        bytes += static_cast<int64_t>(plan.to_delete[i].size());
      }
    }
    CHECK(b.bytes == bytes);
    if (items > 1) CHECK(bytes <= limits.max_bytes);  // only a lone item may exceed
  }
  CHECK(next_attachment == plan.attachments.to_send.size());
  CHECK(next_note == plan.notes.to_send.size());
  CHECK(next_delete == plan.to_delete.size());
}

}  // namespace

TEST_CASE("batches: no batch exceeds either limit (random vaults)") {
  std::mt19937 rng(42);
  for (int round = 0; round < 300; ++round) {
    PushPlan plan;
    int attachments = round % 3 == 0 ? 0 : static_cast<int>(rng() % 80);
    for (int i = 0; i < attachments; ++i) {
      int64_t size = rng() % 8 == 0 ? static_cast<int64_t>(rng() % kMaxAttachmentBytes)
                                    : static_cast<int64_t>(rng() % 20'000);
      plan.attachments.to_send.push_back(Note("a" + std::to_string(i) + ".png", size));
    }
    int notes = static_cast<int>(rng() % 300);
    for (int i = 0; i < notes; ++i) {
      int64_t size = rng() % 10 == 0 ? static_cast<int64_t>(rng() % 50'000) : static_cast<int64_t>(rng() % 3'000);
      plan.notes.to_send.push_back(Note("n" + std::to_string(i) + ".md", size));
    }
    int deletes = static_cast<int>(rng() % 40);
    for (int i = 0; i < deletes; ++i) plan.to_delete.push_back("gone/" + std::to_string(i) + ".md");
    BatchLimits limits{1 + static_cast<int64_t>(rng() % 60),
                       1 + static_cast<int64_t>(rng() % (round % 2 ? 40'000 : 2'000'000))};
    CAPTURE(round);
    CheckBatches(plan, PlanBatches(plan, limits), limits);
  }
}

TEST_CASE("batches: a note bigger than the byte limit travels alone") {
  PushPlan plan;
  plan.notes.to_send = {Note("a.md", 10), Note("huge.md", 5000), Note("b.md", 10), Note("c.md", 10)};
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
  for (int i = 0; i < 5; ++i) plan.notes.to_send.push_back(Note(std::to_string(i) + ".md", 1));
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
  for (int i = 0; i < 2000; ++i) plan.notes.to_send.push_back(Note(std::to_string(i) + ".md", 1000));
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
  CHECK(BuildPushBody(notes, {}, deletes) ==
        R"({"notes":[{"path":"Folder/Note name.md","content":"line \"1\"\nline 2 é"}],"delete":["Old note.md"]})");
  CHECK(BuildPushBody({}, {}, {}) == R"({"notes":[],"delete":[]})");
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

TEST_CASE("wire: Retry-After in seconds or as an HTTP-date (issue 22)") {
  CHECK(RetryAfterMs("1", 0) == 1000);
  CHECK(RetryAfterMs(" 120 ", 0) == 120000);
  CHECK(RetryAfterMs("", 0) == 0);
  CHECK(RetryAfterMs("-3", 0) == 0);
  CHECK(RetryAfterMs("soon", 0) == 0);
  CHECK(RetryAfterMs("1.5", 0) == 0);
  CHECK(RetryAfterMs("999999999", 0) == 24 * 3600 * 1000);
  // Sun, 06 Nov 1994 08:49:37 GMT is 784111777.
  CHECK(RetryAfterMs("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 - 5) == 5000);
  CHECK(RetryAfterMs("Sun, 06 Nov 1994 08:49:37 GMT", 784111777 + 5) == 0);  // in the past
  CHECK(RetryAfterMs("Sun, 06 Nov 1994 08:49:37 CET", 0) == 0);
}

TEST_CASE("report: summary line and sizes") {
  PushTotals t;
  t.sent = 12;
  t.changed = 3;
  t.rendered = 15;
  t.deleted = 1;
  t.version = 7;
  t.seconds = 0.421;
  CHECK(SummaryLine(t) ==
        "folio: 12 notes sent (3 changed, 15 pages rendered), 0 unchanged; deleted 1 note; version 7; 0.42 s");
  t.deleted = 0;
  CHECK(SummaryLine(t) ==
        "folio: 12 notes sent (3 changed, 15 pages rendered), 0 unchanged; nothing deleted; version 7; 0.42 s");
  t.skipped = 2;
  CHECK(SummaryLine(t).ends_with("; 2 files skipped"));
  CHECK(ProgressLine(1, 4, 1024, 4096) == "[######..................] 1/4 files  1 KiB/4 KiB");
  CHECK(DryRunSendLine(Note("A.md", 12), true) == "would send A.md (new, 12 bytes)");
}

// --- attachments ---------------------------------------------------------

namespace {

// Every byte value, so that base64 and "not UTF-8" are both exercised.
std::string BinaryBytes(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7 + 3) & 0xff);
  return s;
}

}  // namespace

TEST_CASE("walk: collects attachments by extension, ignoring case; other files stay ignored") {
  ScratchDir vault;
  vault.Write("Note.md", "![[pic.png]]");
  std::vector<std::string> expected;
  for (const char* ext : {"png", "jpg", "jpeg", "gif", "bmp", "svg", "webp", "avif", "mp3", "wav", "m4a",
                          "ogg", "flac", "opus", "mp4", "webm", "ogv", "mov", "mkv", "pdf"}) {
    expected.push_back(std::string("Media/file.") + ext);
  }
  expected.push_back("Media/Upper.JPG");
  expected.push_back("Scan.Pdf");
  for (const std::string& p : expected) vault.Write(p, BinaryBytes(300));
  for (const char* other : {"Media/archive.zip", "Media/notes.txt", "Media/png", "Media/file.png.bak",
                            "Media/x.tiff", "Canvas.canvas", ".obsidian/icon.png", "Media/.thumb.png",
                            ".trash/old.pdf"}) {
    vault.Write(other, "x");
  }
  fs::create_symlink(vault.path / "Scan.Pdf", vault.path / "Alias.pdf");
  std::sort(expected.begin(), expected.end());
  expected.insert(expected.begin(), "Alias.pdf");

  Result<Vault> v = WalkVault(vault.path, {});
  REQUIRE(v.ok());
  CHECK(Paths(v->notes) == std::vector<std::string>{"Note.md"});
  CHECK(Paths(v->attachments) == expected);
  CHECK(v->skipped.empty());
  CHECK(v->attachments[0].sha256 == Sha256Hex(BinaryBytes(300)));  // raw bytes, not UTF-8
  CHECK(v->attachments[0].size == 300);
  CHECK(ReadAttachment(vault.path, "Media/file.png", kMaxAttachmentBytes).value() == BinaryBytes(300));

  CHECK(IsAttachmentPath("a/b.WebM"));
  CHECK_FALSE(IsAttachmentPath("a.png/readme"));
  // Fonts a publish.css loads by their /assets/ URL (the pages' CSP allows fonts from 'self' only).
  CHECK(IsAttachmentPath("fonts/Inter.woff2"));
  CHECK(IsAttachmentPath("fonts/Inter.TTF"));
  CHECK_FALSE(IsAttachmentPath("Note.md"));
  CHECK(IsAttachmentPath("publish.css"));            // the vault root's custom stylesheet
  CHECK_FALSE(IsAttachmentPath("Notes/publish.css"));  // only at the root
  CHECK_FALSE(IsAttachmentPath("theme.css"));
}

TEST_CASE("walk: an attachment over the limit or with a bad path is skipped with a reason") {
  ScratchDir vault;
  int64_t big = 2'411'725;  // 2.3 MiB
  vault.Write("Media/big.mp4", std::string(static_cast<size_t>(big), 'v'));
  vault.Write("Media/exact.png", std::string(static_cast<size_t>(kMaxAttachmentBytes), 'p'));
  vault.Write("Media/bad\\name.png", "x");

  Result<Vault> v = WalkVault(vault.path, {});
  REQUIRE(v.ok());
  CHECK(Paths(v->attachments) == std::vector<std::string>{"Media/exact.png"});
  REQUIRE(v->skipped.size() == 2);
  const SkippedFile* s = FindSkipped(*v, "Media/big.mp4");
  REQUIRE(s != nullptr);
  CHECK(s->is_error);
  CHECK(s->reason == "2.3 MiB is over the 1008 KiB attachment limit; not sent");
  REQUIRE(FindSkipped(*v, "Media/bad\\name.png") != nullptr);
  CHECK(FindSkipped(*v, "Media/bad\\name.png")->is_error);

  // It grew past the limit after the walk: refused at send time too.
  CHECK(ReadAttachment(vault.path, "Media/exact.png", 100).status().code() == Code::kTooLarge);
  CHECK(ReadAttachment(vault.path, "Media/gone.png", 100).status().code() == Code::kNotFound);
}

TEST_CASE("diff: attachments are compared by hash like notes; a skipped one protects its server copy") {
  Vault local;
  local.notes = {Note("A.md", 1, "aa")};
  local.attachments = {Note("Media/same.png", 10, "s1"), Note("Media/changed.png", 20, "c2"),
                       Note("Media/new.pdf", 30, "n1")};
  local.skipped = {{"Media/big.mp4", "2.3 MiB is over the 1008 KiB attachment limit; not sent", true}};
  Manifest remote;
  remote.notes = {{"A.md", "aa", "/a"}, {"Old.md", "oo", "/old"}};
  remote.attachments = {{"Media/same.png", "S1", "/assets/0123456789abcdef/same.png"},
                        {"Media/changed.png", "c1", "/assets/1/changed.png"},
                        {"Media/gone.png", "g1", "/assets/2/gone.png"},
                        {"Media/big.mp4", "b1", "/assets/3/big.mp4"}};
  PushPlan plan = Diff(local, remote);
  CHECK(Paths(plan.attachments.to_send) == std::vector<std::string>{"Media/changed.png", "Media/new.pdf"});
  CHECK(plan.attachments.is_new == std::vector<bool>{false, true});
  CHECK(plan.attachments.new_count == 1);
  CHECK(plan.attachments.changed_count == 1);
  CHECK(plan.attachments.unchanged == 1);
  CHECK(plan.notes.to_send.empty());
  CHECK(plan.notes.unchanged == 1);
  CHECK(plan.to_delete == std::vector<std::string>{"Media/gone.png", "Old.md"});
}

TEST_CASE("walk + diff: an over-limit attachment on disk is neither sent nor deleted") {
  ScratchDir vault;
  vault.Write("Note.md", "![[big.png]]");
  vault.Write("big.png", std::string(2000, 'x'));
  vault.Write("small.png", "tiny");
  WalkOptions options;
  options.max_attachment_bytes = 1000;
  Result<Vault> v = WalkVault(vault.path, options);
  REQUIRE(v.ok());
  REQUIRE(v->skipped.size() == 1);
  CHECK(v->skipped[0].reason == "2.0 KiB is over the 1000 B attachment limit; not sent");
  Manifest remote;
  remote.attachments = {{"big.png", "old", "/assets/x/big.png"}};
  PushPlan plan = Diff(*v, remote);
  CHECK(Paths(plan.attachments.to_send) == std::vector<std::string>{"small.png"});
  CHECK(plan.to_delete.empty());
}

TEST_CASE("batches: attachments come first, share the bounds, and a big one travels alone") {
  PushPlan plan;
  plan.attachments.to_send = {Note("a.png", 300), Note("huge.mp4", 3000), Note("b.png", 300)};
  plan.notes.to_send = {Note("n1.md", 100), Note("n2.md", 100)};
  plan.to_delete = {"old.png"};
  // Costs: a.png 400, huge.mp4 4000 (> 1000), b.png 400; notes 100 each; delete 7.
  std::vector<Batch> batches = PlanBatches(plan, BatchLimits{3, 1000});
  CheckBatches(plan, batches, BatchLimits{3, 1000});
  REQUIRE(batches.size() == 4);
  CHECK(batches[0].attachment_count == 1);
  CHECK(batches[0].bytes == 400);
  CHECK(batches[1].first_attachment == 1);
  CHECK(batches[1].attachment_count == 1);
  CHECK(batches[1].bytes == 4000);
  CHECK(batches[1].note_count == 0);
  // b.png, then the notes that may embed it in the same request; the deletion
  // would be a fourth item.
  CHECK(batches[2].first_attachment == 2);
  CHECK(batches[2].attachment_count == 1);
  CHECK(batches[2].note_count == 2);
  CHECK(batches[2].delete_count == 0);
  CHECK(batches[2].bytes == 600);
  CHECK(batches[3].items() == 1);
  CHECK(batches[3].delete_count == 1);
  CHECK(EncodedAttachmentSize(0) == 0);
  CHECK(EncodedAttachmentSize(1) == 4);
  CHECK(EncodedAttachmentSize(3) == 4);
  CHECK(EncodedAttachmentSize(kMaxAttachmentBytes) == 1'376'256);

  // Count bound: attachments count as items.
  std::vector<Batch> by_count = PlanBatches(plan, BatchLimits{2, 1 << 20});
  CheckBatches(plan, by_count, BatchLimits{2, 1 << 20});
  REQUIRE(by_count.size() == 3);
  CHECK(by_count[0].attachment_count == 2);
  CHECK(by_count[1].attachment_count == 1);
  CHECK(by_count[1].note_count == 1);
  CHECK(by_count[2].note_count == 1);
  CHECK(by_count[2].delete_count == 1);
}

TEST_CASE("wire: base64 encoding (RFC 4648 vectors) round-trips through core's decoder") {
  CHECK(Base64Encode("") == "");
  CHECK(Base64Encode("f") == "Zg==");
  CHECK(Base64Encode("fo") == "Zm8=");
  CHECK(Base64Encode("foo") == "Zm9v");
  CHECK(Base64Encode("foob") == "Zm9vYg==");
  CHECK(Base64Encode("fooba") == "Zm9vYmE=");
  CHECK(Base64Encode("foobar") == "Zm9vYmFy");
  CHECK(Base64Encode("\xfb\xff\xbf") == "+/+/");
  for (size_t n : {0u, 1u, 2u, 3u, 255u, 256u, 257u, 4096u}) {
    CAPTURE(n);
    std::string bytes = BinaryBytes(n);
    std::string encoded = Base64Encode(bytes);
    CHECK(static_cast<int64_t>(encoded.size()) == EncodedAttachmentSize(static_cast<int64_t>(n)));
    std::string decoded;
    REQUIRE(Base64Decode(encoded, &decoded));
    CHECK(decoded == bytes);
  }
}

TEST_CASE("wire: manifest attachments parse; absent means none") {
  Result<Manifest> m = ParseManifest(
      R"({"version":3,"notes":[],"attachments":[{"path":"Media/pic.png","sha256":"ab","url":"/assets/0123456789abcdef/pic.png"}]})");
  REQUIRE(m.ok());
  REQUIRE(m->attachments.size() == 1);
  CHECK(m->attachments[0].path == "Media/pic.png");
  CHECK(m->attachments[0].sha256 == "ab");
  CHECK(m->attachments[0].url == "/assets/0123456789abcdef/pic.png");
  Result<Manifest> old = ParseManifest(R"({"version":3,"notes":[{"path":"A.md","sha256":"aa"}]})");
  REQUIRE(old.ok());
  CHECK(old->attachments.empty());
  CHECK_FALSE(ParseManifest(R"({"version":1,"notes":[],"attachments":[{"sha256":"x"}]})").ok());
  CHECK_FALSE(ParseManifest(R"({"version":1,"notes":[],"attachments":{}})").ok());
}

TEST_CASE("wire: manifest limits parse; absent means 0 (not advertised); negative is rejected") {
  Result<Manifest> m = ParseManifest(
      R"({"version":3,"limits":{"max_note_bytes":4194304,"max_attachment_bytes":67108864,"future":1},"notes":[]})");
  REQUIRE(m.ok());
  CHECK(m->max_note_bytes == 4194304);
  CHECK(m->max_attachment_bytes == 67108864);
  Result<Manifest> old = ParseManifest(R"({"version":3,"notes":[]})");
  REQUIRE(old.ok());
  CHECK(old->max_note_bytes == 0);
  CHECK(old->max_attachment_bytes == 0);
  CHECK_FALSE(ParseManifest(R"({"version":1,"limits":{"max_attachment_bytes":-1},"notes":[]})").ok());
  CHECK_FALSE(ParseManifest(R"({"version":1,"limits":{"max_attachment_bytes":"big"},"notes":[]})").ok());
}

TEST_CASE("wire: push body carries attachments as base64 that decodes to the file bytes") {
  ScratchDir vault;
  std::string pic = BinaryBytes(1001);
  vault.Write("Media/pic.png", pic);
  Result<std::string> data = ReadAttachment(vault.path, "Media/pic.png", kMaxAttachmentBytes);
  REQUIRE(data.ok());
  std::vector<OutgoingAttachment> attachments = {{"Media/pic.png", Base64Encode(*data)}};
  std::vector<OutgoingNote> notes = {{"Note.md", "![[pic.png]]"}};
  std::vector<std::string> deletes = {"Old note.md", "Media/old.png"};
  std::string body = BuildPushBody(notes, attachments, deletes);

  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.parse(body);
  simdjson::dom::array atts = doc["attachments"].get_array();
  REQUIRE(atts.size() == 1);
  CHECK(std::string_view(atts.at(0)["path"]) == "Media/pic.png");
  std::string decoded;
  REQUIRE(Base64Decode(std::string_view(atts.at(0)["data"]), &decoded));
  CHECK(decoded == pic);
  CHECK(std::string_view(doc["notes"].at(0)["path"]) == "Note.md");
  simdjson::dom::array dels = doc["delete"].get_array();
  REQUIRE(dels.size() == 2);
  CHECK(std::string_view(dels.at(1)) == "Media/old.png");
  CHECK(body.starts_with(R"({"notes":[{"path":"Note.md","content":"![[pic.png]]"}],"attachments":[{"path":"Media/pic.png","data":")"));
}

TEST_CASE("report: attachment lines and summaries") {
  CHECK(DryRunAttachmentLine(Note("Media/pic.png", 12300), true) ==
        "would send Media/pic.png (attachment, new, 12.0 KiB)");
  CHECK(DryRunAttachmentLine(Note("a.pdf", 800), false) == "would send a.pdf (attachment, changed, 800 B)");

  PushTotals t;
  t.sent = 12;
  t.changed = 3;
  t.rendered = 15;
  t.deleted = 1;
  t.version = 7;
  t.seconds = 0.421;
  t.attachments_sent = 2;
  t.attachments_changed = 2;
  t.attachments_unchanged = 4;
  t.deleted = 3;
  t.attachments_deleted = 1;
  CHECK(SummaryLine(t) ==
        "folio: 12 notes sent (3 changed, 15 pages rendered), 0 unchanged; 2 attachments sent (2 changed), "
        "4 unchanged; deleted 3 notes and 1 attachment; version 7; 0.42 s");
  t.deleted = 0;
  CHECK(SummaryLine(t).find("; deleted 1 attachment; ") != std::string::npos);
  t.attachments_sent = 0;
  t.attachments_changed = 0;
  t.attachments_unchanged = 0;
  t.attachments_deleted = 0;
  t.attachments_skipped = 1;
  t.skipped = 1;
  CHECK(SummaryLine(t) ==
        "folio: 12 notes sent (3 changed, 15 pages rendered), 0 unchanged; 0 attachments sent (0 changed), "
        "0 unchanged; nothing deleted; version 7; 0.42 s; 1 file skipped");
  // The JSON summary splits them too.
  t.attachments_deleted = 5;
  std::string json = SummaryJson(t);
  CHECK(json.find("\"deleted\":0,") != std::string::npos);
  CHECK(json.find("\"attachments_deleted\":5,") != std::string::npos);

  PushPlan plan;
  plan.notes.to_send = {Note("A.md", 100)};
  plan.notes.is_new = {true};
  plan.notes.new_count = 1;
  plan.notes.unchanged = 4;
  CHECK(DryRunSummaryLine(plan, 1, 7, 0, 0) ==
        "folio: dry run: 1 note to send (1 new, 0 changed, 100 B) in 1 batch, 0 to delete, 4 unchanged; "
        "version 7; nothing sent");
  plan.attachments.to_send = {Note("a.png", 1024), Note("b.png", 512)};
  plan.attachments.is_new = {true, false};
  plan.attachments.new_count = 1;
  plan.attachments.changed_count = 1;
  plan.attachments.unchanged = 3;
  plan.to_delete = {"old.png"};
  CHECK(DryRunSummaryLine(plan, 1, 7, 1, 1) ==
        "folio: dry run: 1 note to send (1 new, 0 changed, 100 B) in 1 batch, 0 to delete, 4 unchanged; "
        "2 attachments to send (1 new, 1 changed, 1.5 KiB), 1 to delete, 3 unchanged; version 7; nothing sent; "
        "1 file skipped");
  plan.to_delete = {"Gone.MD", "old.png"};
  CHECK(DryRunSummaryLine(plan, 1, 7, 0, 0).find("in 1 batch, 1 to delete, 4 unchanged; ") != std::string::npos);
}

// --- --prefix ------------------------------------------------------------

TEST_CASE("prefix: a folder path becomes its scope; a bad one is a clear error") {
  CHECK(ScopeOfPrefix("").value() == "");
  CHECK(ScopeOfPrefix("Team A").value() == "Team A/");
  CHECK(ScopeOfPrefix("Team A/").value() == "Team A/");
  CHECK(ScopeOfPrefix("Teams/Ä b").value() == "Teams/Ä b/");
  for (const char* bad : {"/Team A", "../x", "a/../b", "a//b", "a/./b", ".", "..", "/", "Team A//", "a\\b",
                          ".hidden", "a/.obsidian", "C:/x", "a\tb"}) {
    Result<std::string> scope = ScopeOfPrefix(bad);
    INFO(bad);
    REQUIRE_FALSE(scope.ok());
    CHECK(scope.status().code() == Code::kInvalidArgument);
    CHECK(scope.status().message().starts_with("--prefix '"));
  }
  CHECK(ScopeOfPrefix("a/../b").status().message() == "--prefix 'a/../b': path contains '..'");
  CHECK_FALSE(ScopeOfPrefix(std::string(kMaxPrefixBytes + 1, 'x')).ok());
  CHECK(ScopeOfPrefix(std::string(kMaxPrefixBytes, 'x')).ok());
}

TEST_CASE("prefix: the diff sends into the scope and deletes only inside it") {
  Vault local;
  local.notes = {Note("a.md", 1, "11"), Note("sub/b.md", 1, "22")};
  local.attachments = {Note("p.png", 1, "33")};
  local.skipped = {{"big.md", "too large", true}};
  AddScope("Team A/", &local);
  CHECK(Paths(local.notes) == std::vector<std::string>{"Team A/a.md", "Team A/sub/b.md"});
  CHECK(local.attachments[0].path == "Team A/p.png");
  CHECK(LocalPath(local.notes[1].path, "Team A/") == "sub/b.md");

  Manifest remote;
  remote.notes = {{"Team A/a.md", "11", ""},     {"Team A/big.md", "99", ""}, {"Team A/gone.md", "44", ""},
                  {"Team B/a.md", "11", ""},     {"Team AB/x.md", "55", ""},  {"top.md", "66", ""},
                  {"Team A", "77", ""}};
  remote.attachments = {{"Team A/old.png", "88", ""}, {"Team B/p.png", "33", ""}};
  PushPlan plan = Diff(local, remote, "Team A/");
  CHECK(Paths(plan.notes.to_send) == std::vector<std::string>{"Team A/sub/b.md"});
  CHECK(plan.notes.unchanged == 1);
  CHECK(plan.attachments.new_count == 1);  // Team B's copy of p.png is another file
  // Neither Team B, nor "Team AB/", nor the top level, nor a skipped file.
  CHECK(plan.to_delete == std::vector<std::string>{"Team A/gone.md", "Team A/old.png"});
  CHECK(CountInScope(remote.notes, "Team A/") == 3);
  CHECK(CountInScope(remote.notes, "") == 7);
  // Without a scope the whole site is compared, as before.
  CHECK(Diff(local, remote).to_delete.size() == 7);
}

TEST_CASE("prefix: the stat cache is keyed by site path, so another prefix trusts nothing") {
  Index index;
  index.walked_ns = 10'000'000'000'000;
  FileStat st{5, 1'000'000'000, 42};
  auto entry = [&](std::string path) { return IndexEntry{std::move(path), false, st, std::string(64, 'a'), ""}; };
  index.entries = {entry("Team A/x.md"), entry("Team A/y/z.md"), entry("Team AB/x.md"), entry("x.md")};
  StatCache scoped(index, "Team A/");
  CHECK(scoped.Find("x.md", st) == &index.entries[0].sha256);
  CHECK(scoped.Find("y/z.md", st) == &index.entries[1].sha256);
  CHECK(scoped.Find("y", st) == nullptr);
  CHECK(scoped.Find("z.md", st) == nullptr);
  CHECK(StatCache(index, "Team B/").Find("x.md", st) == nullptr);
  CHECK(StatCache(index).Find("x.md", st) == &index.entries[3].sha256);
  CHECK(StatCache(index).Find("Team A/x.md", st) == &index.entries[0].sha256);
}

TEST_CASE("report: each warning of a note prints once, without its own path repeated") {
  NoteReport r{"Broken.md", "/broken", {"frontmatter line 2: bad", "Broken.md: frontmatter line 2: bad",
                                       "dangling link [[X]]", "dangling link [[X]]", "Other.md: kept as is"}};
  CHECK(DistinctWarnings(r) ==
        std::vector<std::string>{"frontmatter line 2: bad", "dangling link [[X]]", "Other.md: kept as is"});
}

TEST_CASE("wire: a push reply's attachment counts parse; absent means -1 (an older server)") {
  Result<PushReply> r = ParsePushReply(
      R"({"version":3,"received":5,"changed":4,"rendered":2,"deleted":2,"attachments_received":2,)"
      R"("attachments_changed":1,"attachments_deleted":1,"notes":[]})");
  REQUIRE(r.ok());
  CHECK(r->attachments_received == 2);
  CHECK(r->attachments_changed == 1);
  CHECK(r->attachments_deleted == 1);
  Result<PushReply> old = ParsePushReply(R"({"version":3,"received":5,"notes":[]})");
  REQUIRE(old.ok());
  CHECK(old->attachments_received == -1);
  CHECK(old->attachments_deleted == -1);
}
