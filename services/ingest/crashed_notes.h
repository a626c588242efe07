// Notes that crashed folio-ingest (issue 22: a note nested 5,000 levels deep
// overflowed the stack, and every retry of its push crashed ingest again).
// While a note renders, its thread holds a crash mark (folio/core/
// crash_marks.h) naming the site, path and content hash. If the process dies
// of a fault in that render, the next start finds the mark and records the
// note; from then on a push carrying that exact content gets 422
// `unprocessable` naming the note, instead of crashing ingest again. The
// author changes the note (its hash changes) and pushes again. A new build of
// ingest forgets the records (it may have fixed the crash).
//
// Threading: CrashedNotes is loaded on the main thread at start, then read
// on the writer loop only. NoteMark and MaybeCrashForTest: any thread.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "folio/core/status.h"
#include "push_request.h"
#include "store.h"

namespace folio::ingest {

// The crash mark of a note's render: "note\t<site>\t<path>\t<sha256>".
std::string NoteMark(std::string_view site, std::string_view path, std::string_view sha256);

// This build of folio-ingest: the size and modification time of its
// executable (a new image or install changes them); "" if unknown.
std::string IngestBuild();

class CrashedNotes {
 public:
  // Records the note that `mark` names (the crash of the last run, if any;
  // see CrashMarks::TakeCrashed), then loads every record of `build`. Rows
  // of other builds are dropped. Errors are the store's.
  static Result<CrashedNotes> Load(Store* store, const std::optional<std::string>& mark, const std::string& build);

  // OK, or kUnprocessable naming the first note of `req` whose content
  // crashed ingest (its path in *path). Hashes the notes only when the site
  // has records.
  Status Check(const std::string& site, const PushRequest& req, std::string* path) const;

  size_t size() const { return notes_.size(); }

 private:
  std::map<std::pair<std::string, std::string>, CrashedNoteRow> notes_;  // (site, sha256) -> row
};

// Fault injection for tests, off unless the environment sets it: when
// FOLIO_INGEST_FAULT_CRASH_ON is a non-empty string that `content`
// contains, overflows this thread's stack, as issue 22's note did.
void MaybeCrashForTest(std::string_view content);

}  // namespace folio::ingest
