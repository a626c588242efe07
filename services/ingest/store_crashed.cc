// Store's crashed_notes table (crashed_notes.h): the notes whose render
// crashed folio-ingest, refused until their content changes or another build
// runs.
#include "store.h"

namespace folio::ingest {
namespace {

constexpr const char* kCrashedSchema = R"sql(
CREATE TABLE IF NOT EXISTS crashed_notes(
  site TEXT NOT NULL, sha256 TEXT NOT NULL, path TEXT NOT NULL, build TEXT NOT NULL, at_ms INTEGER NOT NULL,
  PRIMARY KEY(site, sha256));
)sql";

}  // namespace

Status Store::MigrateCrashed() { return db_->Exec(kCrashedSchema); }

Status Store::AddCrashedNote(const CrashedNoteRow& row) {
  auto put = db_->Prepare("INSERT OR REPLACE INTO crashed_notes(site,sha256,path,build,at_ms) VALUES(?,?,?,?,?)");
  if (!put.ok()) return put.status();
  Status s = put->Bind(1, row.site).Bind(2, row.sha256).Bind(3, row.path).Bind(4, row.build).Bind(5, row.at_ms).Run();
  disk_.Observe(s);
  return s;
}

Result<std::vector<CrashedNoteRow>> Store::CrashedNotes(const std::string& build) {
  auto drop = db_->Prepare("DELETE FROM crashed_notes WHERE build<>?");
  if (!drop.ok()) return drop.status();
  if (Status s = drop->Bind(1, build).Run(); !s.ok()) return s;
  auto rows = db_->Prepare("SELECT site, path, sha256, build, at_ms FROM crashed_notes ORDER BY at_ms");
  if (!rows.ok()) return rows.status();
  std::vector<CrashedNoteRow> out;
  for (;;) {
    auto row = rows->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back({std::string(rows->Text(0)), std::string(rows->Text(1)), std::string(rows->Text(2)),
                   std::string(rows->Text(3)), rows->Int(4)});
  }
  return out;
}

}  // namespace folio::ingest
