#include "plan.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>

#include "folio/core/text.h"

namespace folio::cli {
namespace {

// Files sorted by path: the lists Diff is given are (WalkVault, LoadServerView);
// others are sorted here, by pointer.
template <typename File>
std::vector<const File*> SortedByPath(const std::vector<File>& files) {
  std::vector<const File*> out;
  out.reserve(files.size());
  for (const File& f : files) out.push_back(&f);
  auto by_path = [](const File* a, const File* b) { return a->path < b->path; };
  if (!std::is_sorted(out.begin(), out.end(), by_path)) std::sort(out.begin(), out.end(), by_path);
  return out;
}

// A merge of two path-sorted lists: no hash table of 100k paths (issue 26).
FileChanges DiffFiles(const std::vector<LocalFile>& local_files, const std::vector<RemoteFile>& remote_files,
                      std::string_view scope, const std::vector<std::string>& lost_paths = {}) {
  const std::unordered_set<std::string_view> lost(lost_paths.begin(), lost_paths.end());
  std::vector<const LocalFile*> local = SortedByPath(local_files);
  std::vector<const RemoteFile*> remote = SortedByPath(remote_files);
  FileChanges out;
  size_t r = 0;
  for (const LocalFile* f : local) {
    while (r < remote.size() && remote[r]->path < f->path) ++r;
    // A path listed twice by the server: its first entry counts.
    const RemoteFile* held = nullptr;
    for (size_t k = r; k < remote.size() && remote[k]->path == f->path; ++k) {
      if (held == nullptr && remote[k]->path.starts_with(scope)) held = remote[k];
    }
    bool is_new = held == nullptr;
    if (is_new) {
      ++out.new_count;
    } else if (!EqualsIgnoreAsciiCase(held->sha256, f->sha256)) {
      ++out.changed_count;
    } else if (!lost.empty() && lost.contains(f->path)) {
      ++out.changed_count;  // the server lists this hash but cannot serve its bytes: send them again
      ++out.lost_count;
    } else {
      ++out.unchanged;
      continue;
    }
    out.to_send.push_back(*f);
    out.is_new.push_back(is_new);
  }
  // to_send keeps the order of `local` (sorted by path, as plan.h says).
  return out;
}

// Walks a path-sorted list along increasing paths: Has(p) says whether p is
// in it. REQUIRES: successive calls with non-decreasing paths.
template <typename File>
class SortedCursor {
 public:
  explicit SortedCursor(const std::vector<const File*>& files) : files_(files) {}
  bool Has(const std::string& path) {
    while (next_ < files_.size() && files_[next_]->path < path) ++next_;
    return next_ < files_.size() && files_[next_]->path == path;
  }

 private:
  const std::vector<const File*>& files_;
  size_t next_ = 0;
};

}  // namespace

PushPlan Diff(const Vault& local, const Manifest& remote, std::string_view scope) {
  PushPlan plan;
  plan.notes = DiffFiles(local.notes, remote.notes, scope);
  plan.attachments = DiffFiles(local.attachments, remote.attachments, scope, remote.missing_attachments);

  // Deletions: server files (in scope) that are no local note, attachment or skipped file.
  std::vector<const LocalFile*> notes = SortedByPath(local.notes), attachments = SortedByPath(local.attachments);
  std::vector<const SkippedFile*> skipped = SortedByPath(local.skipped);
  for (const auto* files : {&remote.notes, &remote.attachments}) {
    std::vector<const RemoteFile*> held = SortedByPath(*files);
    SortedCursor<LocalFile> in_notes(notes), in_attachments(attachments);
    SortedCursor<SkippedFile> in_skipped(skipped);
    for (const RemoteFile* f : held) {
      // Every cursor sees every path, in order (|| would skip some).
      bool present = in_notes.Has(f->path) | in_attachments.Has(f->path) | in_skipped.Has(f->path);
      if (f->path.starts_with(scope) && !present) plan.to_delete.push_back(f->path);
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
