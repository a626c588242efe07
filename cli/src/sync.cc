#include "sync.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

namespace folio::cli {
namespace {

bool ByPath(const RemoteFile& a, const RemoteFile& b) { return a.path < b.path; }

// Why `delta` cannot be applied to `index`, or "".
std::string Unusable(const Index& index, const Manifest& delta) {
  if (delta.too_old) {
    return "the server no longer records every deletion since version " + std::to_string(index.version);
  }
  if (delta.version < index.version) {
    return "the server is at version " + std::to_string(delta.version) + ", older than the index's " +
           std::to_string(index.version) + " (a restored server?)";
  }
  if (delta.site != index.site) return "the index belongs to another site";
  if (delta.epoch != index.epoch) return "the server's history is not the index's (restored from a backup?)";
  return "";
}

}  // namespace

Manifest ApplyDelta(const Index& index, const Manifest& delta) {
  Manifest m;
  m.version = delta.version;
  m.site = delta.site;
  m.epoch = delta.epoch;
  m.max_note_bytes = delta.max_note_bytes;
  m.max_attachment_bytes = delta.max_attachment_bytes;
  m.strict_line_breaks = delta.strict_line_breaks;
  m.missing_attachments = delta.missing_attachments;  // of every attachment, not only those in the delta
  std::unordered_map<std::string_view, const RemoteFile*> written;
  written.reserve(delta.notes.size() + delta.attachments.size());
  for (const auto* files : {&delta.notes, &delta.attachments}) {
    for (const RemoteFile& f : *files) written[f.path] = &f;
  }
  m.notes.reserve(index.entries.size() + delta.notes.size());  // no regrowth of a 100k list
  std::unordered_map<std::string_view, bool> gone;
  for (const std::string& p : delta.deleted) gone[p] = true;
  for (const IndexEntry& e : index.entries) {
    if (e.server_sha256.empty()) continue;
    if ((!gone.empty() && gone.contains(e.path)) || (!written.empty() && written.contains(e.path))) continue;
    (e.attachment ? m.attachments : m.notes).push_back({e.path, e.server_sha256, ""});
  }
  // Written paths are few; merge them in and keep the lists sorted.
  for (auto [list, from] : {std::pair{&m.notes, &delta.notes}, std::pair{&m.attachments, &delta.attachments}}) {
    size_t mid = list->size();
    list->insert(list->end(), from->begin(), from->end());
    std::sort(list->begin() + static_cast<std::ptrdiff_t>(mid), list->end(), ByPath);
    std::inplace_merge(list->begin(), list->begin() + static_cast<std::ptrdiff_t>(mid), list->end(), ByPath);
  }
  return m;
}

Result<ServerView> LoadServerView(const Index* index, std::string_view server_url, bool full,
                                  const FetchManifestFn& fetch) {
  ServerView view;
  auto sorted = [&view](Manifest m) {
    std::sort(m.notes.begin(), m.notes.end(), ByPath);
    std::sort(m.attachments.begin(), m.attachments.end(), ByPath);
    view.manifest = std::move(m);
    return view;
  };
  if (index != nullptr && !full && index->server == server_url) {
    Result<Manifest> delta = fetch(index->version);
    std::string why;
    if (!delta.ok()) {
      if (delta.status().code() != Code::kInvalidArgument) return delta.status();
      why = delta.status().message();  // e.g. since newer than the server's version
    } else if (!delta->delta) {
      return sorted(std::move(delta).value());  // a server without deltas answered in full
    } else if (why = Unusable(*index, *delta); why.empty()) {
      Manifest m = ApplyDelta(*index, *delta);
      auto matches = [](int64_t said, size_t have) { return said < 0 || said == static_cast<int64_t>(have); };
      if (matches(delta->note_count, m.notes.size()) && matches(delta->attachment_count, m.attachments.size())) {
        view.manifest = std::move(m);
        view.from_delta = true;
        return view;
      }
      why = "the index does not match the server's file counts";
    }
    view.note = why + "; fetching the full manifest";
  } else if (index != nullptr && !full) {
    view.note = "the index belongs to another server; fetching the full manifest";
  }
  Result<Manifest> m = fetch(-1);
  if (!m.ok()) return m.status();
  return sorted(std::move(m).value());
}

namespace {

// The files of two lists sorted by path, merged by path, each with its kind.
template <typename File>
std::vector<std::pair<const File*, bool>> Merged(const std::vector<File>& notes, const std::vector<File>& attachments) {
  std::vector<std::pair<const File*, bool>> out;
  out.reserve(notes.size() + attachments.size());
  size_t i = 0, j = 0;
  while (i < notes.size() || j < attachments.size()) {
    bool take_note = j == attachments.size() || (i < notes.size() && notes[i].path < attachments[j].path);
    out.emplace_back(take_note ? &notes[i++] : &attachments[j++], !take_note);
  }
  return out;
}

IndexRow* Find(std::vector<IndexRow>* rows, std::string_view path) {
  auto it = std::lower_bound(rows->begin(), rows->end(), path,
                             [](const IndexRow& e, std::string_view p) { return e.path < p; });
  return it != rows->end() && it->path == path ? &*it : nullptr;
}

}  // namespace

// Sorted merges and binary searches: a 100k-file vault costs no tree of
// nodes and no copy of its paths and hashes (issue 26).
std::vector<IndexRow> IndexRowsAfterPush(const Vault& vault, const Manifest& view, const PushPlan& plan,
                                         const PushOutcome& outcome) {
  auto remote = Merged(view.notes, view.attachments);
  auto local = Merged(vault.notes, vault.attachments);
  std::vector<IndexRow> rows;
  rows.reserve(std::max(remote.size(), local.size()));
  size_t i = 0, j = 0;
  while (i < remote.size() || j < local.size()) {
    bool has_r = i < remote.size(), has_l = j < local.size();
    std::string_view path = !has_l || (has_r && remote[i].first->path < local[j].first->path)
                                ? remote[i].first->path
                                : local[j].first->path;
    IndexRow e;
    e.path = path;
    if (has_r && remote[i].first->path == path) {
      e.attachment = remote[i].second;
      e.server_sha256 = remote[i++].first->sha256;
    }
    if (has_l && local[j].first->path == path) {
      const LocalFile& f = *local[j].first;
      e.attachment = local[j++].second;
      e.stat = f.stat;
      if (f.stat.size >= 0) e.sha256 = f.sha256;
    }
    rows.push_back(e);
  }
  for (const FileChanges* c : {&plan.notes, &plan.attachments}) {
    for (const LocalFile& f : c->to_send) {
      if (outcome.not_sent.contains(f.path)) continue;
      IndexRow* e = Find(&rows, f.path);
      if (e == nullptr) continue;  // not from this walk; REQUIRES says it is
      auto sent = outcome.sent_sha256.find(f.path);
      e->server_sha256 = sent == outcome.sent_sha256.end() ? std::string_view(f.sha256) : sent->second;
    }
  }
  for (const std::string& p : plan.to_delete) {
    if (IndexRow* e = Find(&rows, p)) e->server_sha256 = {};
  }
  std::erase_if(rows, [](const IndexRow& e) { return e.server_sha256.empty() && e.stat.size < 0; });
  return rows;
}

Index IndexAfterPush(const Vault& vault, const Manifest& view, const PushPlan& plan, const PushOutcome& outcome,
                     std::string server_url, int64_t walked_ns) {
  Index index;
  index.server = std::move(server_url);
  index.site = view.site;
  index.epoch = view.epoch;
  index.version = outcome.version;
  index.walked_ns = walked_ns;
  for (const IndexRow& r : IndexRowsAfterPush(vault, view, plan, outcome)) {
    index.entries.push_back({std::string(r.path), r.attachment, r.stat, std::string(r.sha256),
                             std::string(r.server_sha256), 0});
  }
  return index;
}

}  // namespace folio::cli
