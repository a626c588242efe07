#include "stage.h"

#include <cctype>
#include <charconv>

namespace folio::ingest {

Status CheckStageId(std::string_view id) {
  bool ok = !id.empty() && id.size() <= kMaxStageIdBytes;
  for (char c : id) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_');
  if (ok) return Status::Ok();
  return Status::Invalid("stage must be 1 to " + std::to_string(kMaxStageIdBytes) +
                         " characters of A-Z, a-z, 0-9, '-' and '_' (e.g. 32 random hex digits)");
}

Result<int64_t> ParseStageBatch(std::string_view value) {
  int64_t n = -1;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || n < 0 || n >= kMaxStageBatch) {
    return Status::Invalid("batch must be a number from 0 to " + std::to_string(kMaxStageBatch - 1) +
                           " (the batch's place in the stage)");
  }
  return n;
}

namespace {

Status BothSentAndDeleted(const std::string& path) {
  return Status::Invalid("'" + path + "' is both pushed and deleted in this stage");
}

// Puts `item` at its path's place in *list (replacing an earlier one) or appends it.
template <typename T>
void Upsert(T item, std::vector<T>* list, std::map<std::string, size_t, std::less<>>* at) {
  auto [it, inserted] = at->emplace(item.path, list->size());
  if (inserted) list->push_back(std::move(item));
  else (*list)[it->second] = std::move(item);
}

}  // namespace

Status StagedPush::Add(PushRequest batch) {
  for (const auto* dels : {&batch.deletes, &batch.delete_attachments}) {
    for (const std::string& d : *dels) {
      if (note_at_.count(d) || attachment_at_.count(d)) return BothSentAndDeleted(d);
    }
  }
  for (const PushNote& n : batch.notes) {
    if (deleted_.count(n.path)) return BothSentAndDeleted(n.path);
  }
  for (const PushAttachment& a : batch.attachments) {
    if (deleted_.count(a.path)) return BothSentAndDeleted(a.path);
  }
  for (PushNote& n : batch.notes) Upsert(std::move(n), &merged_.notes, &note_at_);
  for (PushAttachment& a : batch.attachments) Upsert(std::move(a), &merged_.attachments, &attachment_at_);
  for (std::string& d : batch.deletes) {
    if (deleted_.insert(d).second) merged_.deletes.push_back(std::move(d));
  }
  for (std::string& d : batch.delete_attachments) {
    if (deleted_.insert(d).second) merged_.delete_attachments.push_back(std::move(d));
  }
  // A later batch's setting wins, like a re-sent file.
  if (batch.settings.strict_line_breaks) merged_.settings.strict_line_breaks = batch.settings.strict_line_breaks;
  return Status::Ok();
}

}  // namespace folio::ingest
