// Renames with edits (rename_match.h).
#include "rename_match.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "folio/core/hash.h"
#include "store.h"

namespace folio::ingest {
namespace {

bool WordByte(unsigned char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80; }

}  // namespace

std::vector<uint64_t> Shingles(std::string_view text) {
  text = text.substr(0, kRenameTextBytes);
  std::vector<std::string> words;
  for (size_t i = 0; i < text.size();) {
    while (i < text.size() && !WordByte(static_cast<unsigned char>(text[i]))) ++i;
    size_t start = i;
    while (i < text.size() && WordByte(static_cast<unsigned char>(text[i]))) ++i;
    if (i > start) {
      std::string w(text.substr(start, i - start));
      for (char& c : w) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
      words.push_back(std::move(w));
    }
  }
  std::vector<uint64_t> out;
  const size_t n = std::min<size_t>(3, words.size());
  for (size_t i = 0; n > 0 && i + n <= words.size(); ++i) {
    uint64_t h = Fnv1a64("");
    for (size_t k = 0; k < n; ++k) h = Fnv1a64(" ", Fnv1a64(words[i + k], h));
    out.push_back(h);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double Similarity(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  if (a.empty() && b.empty()) return 1.0;
  size_t common = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++common;
      ++i;
      ++j;
    }
  }
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

std::map<std::string, std::string> MatchRenames(const std::vector<RenameSide>& deleted,
                                                const std::vector<RenameSide>& added) {
  const size_t nd = std::min(deleted.size(), kRenameMaxNotes), na = std::min(added.size(), kRenameMaxNotes);
  std::vector<std::vector<uint64_t>> d(nd), a(na);
  for (size_t i = 0; i < nd; ++i) d[i] = Shingles(deleted[i].text);
  for (size_t j = 0; j < na; ++j) a[j] = Shingles(added[j].text);
  // (score, deleted, added) of every pair at or above the threshold.
  std::vector<std::tuple<double, size_t, size_t>> pairs;
  for (size_t i = 0; i < nd; ++i) {
    for (size_t j = 0; j < na; ++j) {
      const double small = static_cast<double>(std::min(d[i].size(), a[j].size()));
      const double large = static_cast<double>(std::max(d[i].size(), a[j].size()));
      if (large > 0 && small / large < kRenameSimilarity) continue;  // Jaccard <= small / large
      double s = Similarity(d[i], a[j]);
      if (s >= kRenameSimilarity) pairs.emplace_back(s, i, j);
    }
  }
  std::sort(pairs.begin(), pairs.end(), [&](const auto& x, const auto& y) {
    if (std::get<0>(x) != std::get<0>(y)) return std::get<0>(x) > std::get<0>(y);
    return std::tie(deleted[std::get<1>(x)].path, added[std::get<2>(x)].path) <
           std::tie(deleted[std::get<1>(y)].path, added[std::get<2>(y)].path);
  });
  std::map<std::string, std::string> out;
  std::set<size_t> used;
  for (const auto& [score, i, j] : pairs) {
    if (used.count(i) || out.count(added[j].path)) continue;
    used.insert(i);
    out.emplace(added[j].path, deleted[i].path);
  }
  return out;
}

Status FindRenames(const PushRequest& req, const site::Vault& vault, Store* store, const std::string& site,
                   PushPlan* plan) {
  if (plan->deletes.empty() || plan->changed.empty()) return Status::Ok();
  std::vector<RenameSide> added;
  std::set<std::string_view> added_sha;
  for (size_t i : plan->changed) {
    if (vault.Find(req.notes[i].path)) continue;  // an edit, not a new note
    added_sha.insert(plan->sha[i]);
    if (added.size() < kRenameMaxNotes) added.push_back({req.notes[i].path, req.notes[i].content});
  }
  if (added.empty()) return Status::Ok();
  std::vector<std::string> texts;  // the deleted notes' stored text, owned here
  std::vector<std::string> paths;
  for (const auto& path : plan->deletes) {
    const site::NoteMeta* n = vault.Find(path);
    if (!n || !n->published || added_sha.count(n->sha256)) continue;  // unpublished, or an exact rename
    auto text = store->NoteContent(site, path);
    if (!text.ok()) return text.status();
    texts.push_back(std::move(*text));
    paths.push_back(path);
    if (paths.size() == kRenameMaxNotes) break;
  }
  std::vector<RenameSide> deleted;
  for (size_t i = 0; i < paths.size(); ++i) deleted.push_back({paths[i], texts[i]});
  plan->renamed_from = MatchRenames(deleted, added);
  return Status::Ok();
}

}  // namespace folio::ingest
