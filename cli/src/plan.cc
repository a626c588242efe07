#include "plan.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "folio/core/text.h"

namespace folio::cli {
namespace {

FileChanges DiffFiles(const std::vector<LocalFile>& local, const std::vector<RemoteFile>& remote,
                      std::string_view scope, const std::vector<std::string>& lost_paths = {}) {
  const std::unordered_set<std::string_view> lost(lost_paths.begin(), lost_paths.end());
  std::unordered_map<std::string_view, std::string_view> remote_hash;
  remote_hash.reserve(remote.size());
  for (const RemoteFile& f : remote) {
    if (f.path.starts_with(scope)) remote_hash.emplace(f.path, f.sha256);
  }
  FileChanges out;
  for (const LocalFile& f : local) {
    auto it = remote_hash.find(f.path);
    bool is_new = it == remote_hash.end();
    if (is_new) {
      ++out.new_count;
    } else if (!EqualsIgnoreAsciiCase(it->second, f.sha256)) {
      ++out.changed_count;
    } else if (!lost.empty() && lost.contains(f.path)) {
      ++out.changed_count;  // the server lists this hash but cannot serve its bytes: send them again
      ++out.lost_count;
    } else {
      ++out.unchanged;
      continue;
    }
    out.to_send.push_back(f);
    out.is_new.push_back(is_new);
  }
  return out;
}

}  // namespace

PushPlan Diff(const Vault& local, const Manifest& remote, std::string_view scope) {
  PushPlan plan;
  plan.notes = DiffFiles(local.notes, remote.notes, scope);
  plan.attachments = DiffFiles(local.attachments, remote.attachments, scope, remote.missing_attachments);

  std::unordered_set<std::string_view> present;
  present.reserve(local.notes.size() + local.attachments.size() + local.skipped.size());
  for (const LocalFile& f : local.notes) present.insert(f.path);
  for (const LocalFile& f : local.attachments) present.insert(f.path);
  for (const SkippedFile& s : local.skipped) present.insert(s.path);
  for (const auto* files : {&remote.notes, &remote.attachments}) {
    for (const RemoteFile& f : *files) {
      if (f.path.starts_with(scope) && !present.contains(f.path)) plan.to_delete.push_back(f.path);
    }
  }
  std::sort(plan.to_delete.begin(), plan.to_delete.end());
  plan.to_delete.erase(std::unique(plan.to_delete.begin(), plan.to_delete.end()), plan.to_delete.end());
  return plan;
}

namespace {

// Greedy packing of one kind of item into `batches`, continuing the last batch.
template <typename SizeOf, typename Append>
void Pack(size_t count, const BatchLimits& limits, std::vector<Batch>* batches, SizeOf size_of,
          Append append) {
  for (size_t i = 0; i < count; ++i) {
    int64_t size = size_of(i);
    bool fits = !batches->empty() &&
                static_cast<int64_t>(batches->back().items()) < limits.max_notes &&
                batches->back().bytes + size <= limits.max_bytes;
    if (!fits) batches->emplace_back();
    append(&batches->back(), i);
    batches->back().bytes += size;
  }
}

}  // namespace

std::vector<Batch> PlanBatches(const PushPlan& plan, const BatchLimits& limits) {
  std::vector<Batch> batches;
  // Attachments first: a note's embeds then resolve in the push carrying the note.
  Pack(
      plan.attachments.to_send.size(), limits, &batches,
      [&](size_t i) { return EncodedAttachmentSize(plan.attachments.to_send[i].size); },
      [](Batch* b, size_t i) {
        if (b->attachment_count == 0) b->first_attachment = i;
        ++b->attachment_count;
      });
  Pack(
      plan.notes.to_send.size(), limits, &batches, [&](size_t i) { return plan.notes.to_send[i].size; },
      [](Batch* b, size_t i) {
        if (b->note_count == 0) b->first_note = i;
        ++b->note_count;
      });
  Pack(
      plan.to_delete.size(), limits, &batches,
      [&](size_t i) { return static_cast<int64_t>(plan.to_delete[i].size()); },
      [](Batch* b, size_t i) {
        if (b->delete_count == 0) b->first_delete = i;
        ++b->delete_count;
      });
  return batches;
}

}  // namespace folio::cli
