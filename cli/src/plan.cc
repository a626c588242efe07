#include "plan.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "folio/core/text.h"

namespace folio::cli {

PushPlan Diff(const Vault& local, const Manifest& remote) {
  std::unordered_map<std::string_view, std::string_view> remote_hash;
  remote_hash.reserve(remote.notes.size());
  for (const RemoteNote& n : remote.notes) remote_hash.emplace(n.path, n.sha256);

  PushPlan plan;
  std::unordered_set<std::string_view> present;
  present.reserve(local.notes.size() + local.skipped.size());
  for (const LocalNote& n : local.notes) {
    present.insert(n.path);
    auto it = remote_hash.find(n.path);
    bool is_new = it == remote_hash.end();
    if (is_new) {
      ++plan.new_count;
    } else if (!EqualsIgnoreAsciiCase(it->second, n.sha256)) {
      ++plan.changed_count;
    } else {
      ++plan.unchanged;
      continue;
    }
    plan.to_send.push_back(n);
    plan.is_new.push_back(is_new);
  }
  for (const SkippedFile& s : local.skipped) present.insert(s.path);
  for (const RemoteNote& n : remote.notes) {
    if (!present.contains(n.path)) plan.to_delete.push_back(n.path);
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
                static_cast<int64_t>(batches->back().note_count + batches->back().delete_count) <
                    limits.max_notes &&
                batches->back().bytes + size <= limits.max_bytes;
    if (!fits) batches->emplace_back();
    append(&batches->back(), i);
    batches->back().bytes += size;
  }
}

}  // namespace

std::vector<Batch> PlanBatches(const PushPlan& plan, const BatchLimits& limits) {
  std::vector<Batch> batches;
  Pack(
      plan.to_send.size(), limits, &batches, [&](size_t i) { return plan.to_send[i].size; },
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
