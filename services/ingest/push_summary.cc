#include "push_summary.h"

namespace folio::ingest {

ingest_api::PushReply ReplyOf(const PushSummary& sum) {
  ingest_api::PushReply r;
  r.version = sum.version;
  r.received = static_cast<int64_t>(sum.received);
  r.changed = static_cast<int64_t>(sum.changed);
  r.rendered = static_cast<int64_t>(sum.rendered);
  r.listings = static_cast<int64_t>(sum.listings);
  r.deleted = static_cast<int64_t>(sum.deleted);
  r.attachments_received = static_cast<int64_t>(sum.att_received);
  r.attachments_changed = static_cast<int64_t>(sum.att_changed);
  r.attachments_deleted = static_cast<int64_t>(sum.att_deleted);
  r.notes.reserve(sum.notes.size());
  for (const NoteReport& n : sum.notes) {
    ingest_api::NoteReport& out = r.notes.emplace_back();
    out.path = n.path;
    out.url = n.url;
    out.warnings = n.warnings;
    out.published = !(n.kind == NoteReport::Kind::kPushed && !n.published);
    out.attachment = n.kind == NoteReport::Kind::kAttachment;
    out.rerendered = n.kind == NoteReport::Kind::kRerendered;
  }
  r.strict_line_breaks = sum.strict_line_breaks;
  r.settings_changed = sum.settings_changed;
  return r;
}

std::string RecordedReply(const PushSummary& sum) { return ingest_api::EncodePushReplyRecord(ReplyOf(sum)); }

}  // namespace folio::ingest
