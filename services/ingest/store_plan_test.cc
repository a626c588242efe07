// Issue 12: a push's SQL never walks a whole table. Every statement the
// store runs for a one-note push (and for acking its outbox) is traced, and
// its query plan must find rows by key, not SCAN a table that grows with the
// vault (notes, pages, attachments, related, push_keys). The outbox is the
// exception by design: it holds only what is not yet published.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "folio/testing/testing.h"
#include "store.h"

namespace folio::ingest {
namespace {

NoteRow Note(const std::string& path, int64_t version) {
  NoteRow r;
  r.meta.path = path;
  r.meta.url = "/" + path.substr(0, path.size() - 3);
  r.meta.sha256 = "sha-" + path + std::to_string(version);
  r.meta.title = path;
  r.meta.targets = {"hub"};
  r.meta.updated_ms = 1000 + version;
  r.meta.version = version;
  r.content = "# " + path + "\n[[hub]]\n";
  r.warnings = {"dangling link [[x]]"};
  return r;
}

Commit Push(int64_t version, int first, int count) {
  Commit c;
  c.site = "default";
  c.version = version;
  for (int i = first; i < first + count; ++i) {
    std::string path = "n" + std::to_string(i) + ".md";
    c.notes.push_back(Note(path, version));
    c.pages.push_back({"/n" + std::to_string(i), "record"});
    c.outbox.push_back({0, OutboxMsg::kKvPut, "pages.default.n" + std::to_string(i), "record", ""});
  }
  c.outbox.push_back({0, OutboxMsg::kStream, "notes.default", "event", "msg-" + std::to_string(version)});
  return c;
}

}  // namespace

TEST_CASE("store: a one-note push's statements find rows by key, never scan a table that grows with the vault") {
  testing::TempDir dir;
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  Store& s = **store;
  Commit seed = Push(1, 0, 2000);
  REQUIRE(s.Apply(&seed).ok());
  REQUIRE(s.AckOutbox(seed.outbox.back().seq).ok());

  std::set<std::string> statements;
  s.db()->TraceStatements([&](std::string_view sql) { statements.insert(std::string(sql)); });
  // One changed note, one new note, one deleted, a page gone, an
  // attachment, a related list, the push's Idempotency-Key record.
  Commit one = Push(2, 5, 1);
  one.notes.push_back(Note("new.md", 2));
  one.deleted_notes = {"n7.md"};
  one.deleted_pages = {"/n7"};
  site::AttachmentMeta att{"pic.png", "abcd", "/assets/abcd/pic.png"};
  one.attachments.push_back({att, "bytes"});
  one.related.push_back(bus::RelatedList{"n5.md", {{"n6.md", 0.5}}});
  one.push_record = PushRecord{"key-1", "body", "reply", 5000};
  REQUIRE(s.Apply(&one).ok());
  REQUIRE(s.AckOutbox(one.outbox.back().seq).ok());
  s.db()->TraceStatements(nullptr);

  REQUIRE(statements.size() >= 8);
  // The check sees a scan when there is one.
  auto scan = s.db()->QueryPlan("SELECT path FROM notes WHERE title=?");
  REQUIRE(scan.ok());
  REQUIRE(scan->size() == 1);
  CHECK(scan->front().find("SCAN notes") != std::string::npos);
  MESSAGE(statements.size() << " statements in a one-note push");
  const char* const kGrowing[] = {"notes", "pages", "attachments", "related", "push_keys", "site_version"};
  for (const auto& sql : statements) {
    if (sql.rfind("BEGIN", 0) == 0 || sql.rfind("COMMIT", 0) == 0 || sql.rfind("ROLLBACK", 0) == 0) continue;
    auto plan = s.db()->QueryPlan(sql);
    REQUIRE_MESSAGE(plan.ok(), plan.status().ToString());
    std::string lines;
    for (const auto& l : *plan) lines += l + "\n";
    CAPTURE(sql);
    CAPTURE(lines);
    for (const auto& l : *plan) {
      for (const char* table : kGrowing) {
        CHECK_MESSAGE(l.find(std::string("SCAN ") + table) == std::string::npos, "a full scan in a push");
      }
    }
  }
}

}  // namespace folio::ingest
