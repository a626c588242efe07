#include "crashed_notes.h"

#include <sys/stat.h>

#include <cstdlib>

#include "folio/core/hash.h"
#include "folio/core/log.h"
#include "folio/core/text.h"
#include "folio/core/time.h"

namespace folio::ingest {
namespace {

constexpr std::string_view kNotePrefix = "note\t";

// The row a mark names, or nullopt if it names no note.
std::optional<CrashedNoteRow> ParseNoteMark(std::string_view mark) {
  if (!StartsWith(mark, kNotePrefix)) return std::nullopt;
  mark.remove_prefix(kNotePrefix.size());
  size_t a = mark.find('\t'), b = mark.rfind('\t');
  if (a == std::string_view::npos || b == a) return std::nullopt;
  CrashedNoteRow row;
  row.site = std::string(mark.substr(0, a));
  row.path = std::string(mark.substr(a + 1, b - a - 1));
  row.sha256 = std::string(mark.substr(b + 1));
  if (row.sha256.size() != 64) return std::nullopt;
  return row;
}

volatile size_t g_crash_limit = SIZE_MAX;  // never reached: keeps the recursion honest

size_t Recurse(size_t depth) {
  volatile char frame[1024];
  frame[0] = static_cast<char>(depth);
  if (depth >= g_crash_limit) return frame[0];
  return Recurse(depth + 1) + frame[0];
}

}  // namespace

std::string NoteMark(std::string_view site, std::string_view path, std::string_view sha256) {
  std::string m(kNotePrefix);
  m.append(site).append("\t").append(path).append("\t").append(sha256);
  return m;
}

std::string IngestBuild() {
  struct stat st;
  if (stat("/proc/self/exe", &st) != 0) return "";
  return std::to_string(st.st_size) + "-" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

Result<CrashedNotes> CrashedNotes::Load(Store* store, const std::optional<std::string>& mark,
                                        const std::string& build) {
  if (mark) {
    if (std::optional<CrashedNoteRow> row = ParseNoteMark(*mark)) {
      row->build = build;
      row->at_ms = NowUnixMs();
      log::Error("folio-ingest crashed while rendering a note: pushes of it are refused until it changes",
                 {{"site", row->site}, {"path", row->path}, {"sha256", row->sha256}});
      if (Status s = store->AddCrashedNote(*row); !s.ok()) return s;
    }
  }
  auto rows = store->CrashedNotes(build);
  if (!rows.ok()) return rows.status();
  CrashedNotes out;
  for (CrashedNoteRow& r : *rows) {
    auto key = std::make_pair(r.site, r.sha256);
    out.notes_.emplace(std::move(key), std::move(r));
  }
  return out;
}

Status CrashedNotes::Check(const std::string& site, const PushRequest& req, std::string* path) const {
  auto first = notes_.lower_bound({site, ""});
  if (first == notes_.end() || first->first.first != site) return Status::Ok();
  for (const PushNote& note : req.notes) {
    auto it = notes_.find({site, Sha256Hex(note.content)});
    if (it == notes_.end()) continue;
    *path = note.path;
    return Status(Code::kUnprocessable,
                  "note '" + note.path + "' crashed folio-ingest when it was rendered" +
                      (it->second.path == note.path ? "" : " (as '" + it->second.path + "')") +
                      "; this exact text is refused so that it cannot crash the server again. Change the note (or "
                      "remove it) and push again, and please report it: its text helps fix the crash");
  }
  return Status::Ok();
}

void MaybeCrashForTest(std::string_view content) {
  static const char* trigger = std::getenv("FOLIO_INGEST_FAULT_CRASH_ON");
  if (trigger == nullptr || *trigger == '\0' || content.find(trigger) == std::string_view::npos) return;
  Recurse(0);
}

}  // namespace folio::ingest
