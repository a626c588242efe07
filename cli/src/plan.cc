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
// Sets (*seen)[k] for each remote[k] whose path is one of local.
FileChanges DiffFiles(const std::vector<const LocalFile*>& local, const std::vector<const RemoteFile*>& remote,
                      std::string_view scope, const std::vector<std::string>& lost_paths, std::vector<bool>* seen) {
  const std::unordered_set<std::string_view> lost(lost_paths.begin(), lost_paths.end());
  seen->assign(remote.size(), false);
  FileChanges out;
  size_t r = 0;
  for (const LocalFile* f : local) {
    int c = -1;
    while (r < remote.size() && (c = remote[r]->path.compare(f->path)) < 0) ++r;
    // A path listed twice by the server: its first entry (in scope) counts.
    const RemoteFile* held = nullptr;
    for (size_t k = r; k < remote.size() && (k == r ? c == 0 : remote[k]->path == f->path); ++k) {
      (*seen)[k] = true;
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

// Whether `path` is a file of `sorted` (by path).
template <typename File>
bool Contains(const std::vector<const File*>& sorted, const std::string& path) {
  auto it = std::lower_bound(sorted.begin(), sorted.end(), path,
                             [](const File* f, const std::string& p) { return f->path < p; });
  return it != sorted.end() && (*it)->path == path;
}

}  // namespace

PushPlan Diff(const Vault& local, const Manifest& remote, std::string_view scope) {
  std::vector<const LocalFile*> notes = SortedByPath(local.notes), attachments = SortedByPath(local.attachments);
  std::vector<const RemoteFile*> remote_notes = SortedByPath(remote.notes);
  std::vector<const RemoteFile*> remote_attachments = SortedByPath(remote.attachments);
  std::vector<bool> notes_seen, attachments_seen;
  PushPlan plan;
  plan.notes = DiffFiles(notes, remote_notes, scope, {}, &notes_seen);
  plan.attachments = DiffFiles(attachments, remote_attachments, scope, remote.missing_attachments, &attachments_seen);

  // Deletions: server files (in scope) that are no local note, attachment or
  // skipped file. The merges above saw most; the others are looked up.
  std::vector<const SkippedFile*> skipped = SortedByPath(local.skipped);
  for (auto [files, seen] : {std::pair{&remote_notes, &notes_seen}, std::pair{&remote_attachments, &attachments_seen}}) {
    for (size_t k = 0; k < files->size(); ++k) {
      const std::string& path = (*files)[k]->path;
      if ((*seen)[k] || !path.starts_with(scope)) continue;
      if (Contains(notes, path) || Contains(attachments, path) || Contains(skipped, path)) continue;
      plan.to_delete.push_back(path);
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
