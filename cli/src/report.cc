#include "report.h"

#include <algorithm>
#include <cinttypes>
#include <string_view>
#include <utility>

#include "folio/core/json.h"
#include "folio/core/text.h"

namespace folio::cli {
namespace {

std::string Plural(int64_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

int64_t TotalSize(const FileChanges& changes) {
  int64_t bytes = 0;
  for (const LocalFile& f : changes.to_send) bytes += f.size;
  return bytes;
}

}  // namespace

std::string SummaryLine(const PushTotals& t) {
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.2f s", t.seconds);
  std::string s = "folio: " + Plural(t.sent, "note", "notes") + " sent (" + std::to_string(t.changed) +
                  " changed, " + Plural(t.rendered, "page", "pages") + " rendered), " +
                  std::to_string(t.unchanged) + " unchanged; ";
  if (t.attachments_sent > 0 || t.attachments_deleted > 0 || t.attachments_skipped > 0 ||
      t.attachments_unchanged > 0) {
    s += Plural(t.attachments_sent, "attachment", "attachments") + " sent (" +
         std::to_string(t.attachments_changed) + " changed), " + std::to_string(t.attachments_unchanged) +
         " unchanged; ";
  }
  if (t.deleted > 0 && t.attachments_deleted > 0) {
    s += "deleted " + Plural(t.deleted, "note", "notes") + " and " +
         Plural(t.attachments_deleted, "attachment", "attachments") + "; ";
  } else if (t.deleted > 0 || t.attachments_deleted > 0) {
    s += "deleted " + (t.deleted > 0 ? Plural(t.deleted, "note", "notes")
                                     : Plural(t.attachments_deleted, "attachment", "attachments")) + "; ";
  } else {
    s += "nothing deleted; ";
  }
  if (t.strict_line_breaks_now) {
    s += std::string("strict line breaks now ") + (*t.strict_line_breaks_now ? "on" : "off") +
         " (every note page re-rendered); ";
  }
  s += "version " + std::to_string(t.version) + "; " + secs;
  if (t.skipped > 0) s += "; " + Plural(t.skipped, "file", "files") + " skipped";
  return s;
}

std::string SummaryJson(const PushTotals& t) {
  JsonWriter w;
  w.BeginObject();
  for (auto [key, v] : {std::pair<const char*, int64_t>{"sent", t.sent}, {"changed", t.changed},
                        {"rendered", t.rendered}, {"deleted", t.deleted}, {"unchanged", t.unchanged},
                        {"attachments_sent", t.attachments_sent}, {"attachments_changed", t.attachments_changed},
                        {"attachments_deleted", t.attachments_deleted},
                        {"attachments_unchanged", t.attachments_unchanged}, {"skipped", t.skipped},
                        {"version", t.version}}) {
    w.Key(key).Int(v);
  }
  w.Key("seconds").Double(t.seconds);
  w.Key("files").Int(t.files).Key("hashed").Int(t.hashed);
  w.Key("manifest").String(t.manifest_delta ? "delta" : "full");
  if (t.strict_line_breaks_now) w.Key("strict_line_breaks").Bool(*t.strict_line_breaks_now);
  w.EndObject();
  return w.Take();
}

std::vector<std::string> DistinctWarnings(const NoteReport& report) {
  std::vector<std::string> out;
  const std::string own = report.path + ": ";
  for (const std::string& w : report.warnings) {
    std::string_view text = w;
    if (text.starts_with(own) && text.size() > own.size()) text.remove_prefix(own.size());
    // A note has few warnings: a linear search keeps their order.
    if (std::find(out.begin(), out.end(), text) == out.end()) out.emplace_back(text);
  }
  return out;
}

std::string DryRunSendLine(const LocalNote& note, bool is_new) {
  return "would send " + note.path + " (" + (is_new ? "new" : "changed") + ", " +
         Plural(note.size, "byte", "bytes") + ")";
}

std::string DryRunAttachmentLine(const LocalAttachment& attachment, bool is_new) {
  return "would send " + attachment.path + " (attachment, " + (is_new ? "new" : "changed") + ", " +
         FormatBytes(attachment.size) + ")";
}

std::string DryRunDeleteLine(const std::string& path) { return "would delete " + path; }

std::string DryRunSummaryLine(const PushPlan& plan, size_t batches, int64_t version,
                              int64_t skipped, int64_t attachments_skipped) {
  // Deletions by the server's rule: a path not ending in ".md" is an attachment.
  int64_t attachment_deletes = std::count_if(plan.to_delete.begin(), plan.to_delete.end(),
                                             [](const std::string& p) { return !EndsWith(AsciiLower(p), ".md"); });
  int64_t note_deletes = static_cast<int64_t>(plan.to_delete.size()) - attachment_deletes;
  const FileChanges& notes = plan.notes;
  std::string s = "folio: dry run: " +
                  Plural(static_cast<int64_t>(notes.to_send.size()), "note", "notes") +
                  " to send (" + std::to_string(notes.new_count) + " new, " +
                  std::to_string(notes.changed_count) + " changed, " +
                  FormatBytes(TotalSize(notes)) + ") in " +
                  Plural(static_cast<int64_t>(batches), "batch", "batches") + ", " +
                  std::to_string(note_deletes) + " to delete, " +
                  std::to_string(notes.unchanged) + " unchanged; ";
  const FileChanges& atts = plan.attachments;
  if (!atts.to_send.empty() || attachments_skipped > 0 || attachment_deletes > 0) {
    s += Plural(static_cast<int64_t>(atts.to_send.size()), "attachment", "attachments") +
         " to send (" + std::to_string(atts.new_count) + " new, " +
         std::to_string(atts.changed_count) + " changed, " + FormatBytes(TotalSize(atts)) + "), " +
         std::to_string(attachment_deletes) + " to delete, " + std::to_string(atts.unchanged) + " unchanged; ";
  }
  s += "version " + std::to_string(version) + "; nothing sent";
  if (skipped > 0) s += "; " + Plural(skipped, "file", "files") + " skipped";
  return s;
}

std::string ProgressLine(size_t files_done, size_t files_total, int64_t bytes_done,
                         int64_t bytes_total) {
  constexpr size_t kWidth = 24;
  size_t filled = files_total == 0 ? kWidth : kWidth * files_done / files_total;
  if (filled > kWidth) filled = kWidth;
  std::string bar = "[" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "] ";
  return bar + std::to_string(files_done) + "/" + std::to_string(files_total) + " files  " +
         FormatBytes(bytes_done) + "/" + FormatBytes(bytes_total);
}

void ProgressBar::Update(size_t files_done, size_t files_total, int64_t bytes_done,
                         int64_t bytes_total) {
  if (!enabled_) return;
  std::string line = ProgressLine(files_done, files_total, bytes_done, bytes_total);
  std::fprintf(out_, "\r%s\033[K", line.c_str());
  std::fflush(out_);
  drawn_ = true;
}

void ProgressBar::Text(const std::string& text) {
  if (!enabled_) return;
  std::fprintf(out_, "\r%s\033[K", text.c_str());
  std::fflush(out_);
  drawn_ = true;
}

void ProgressBar::Clear() {
  if (!drawn_) return;
  std::fputs("\r\033[K", out_);
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace folio::cli
