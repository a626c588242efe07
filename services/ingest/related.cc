#include "related.h"

#include <algorithm>

#include "folio/core/text.h"

namespace folio::ingest {

std::vector<bus::RelatedEntry> NormalizeRelated(std::string_view self, const std::vector<bus::RelatedEntry>& in) {
  std::vector<bus::RelatedEntry> out;
  std::set<std::string_view> seen;
  for (const auto& e : in) {
    if (out.size() >= kMaxRelatedKept) break;
    if (e.path == self || !CheckVaultPath(e.path).ok()) continue;
    if (!seen.insert(e.path).second) continue;
    out.push_back(e);
  }
  return out;
}

std::vector<site::LinkItem> ShownRelated(const std::vector<std::string>& list, const RelatedLookup& lookup) {
  std::vector<site::LinkItem> out;
  for (const auto& path : list) {
    if (out.size() >= kMaxRelatedShown) break;
    if (auto item = lookup(path)) out.push_back(std::move(*item));
  }
  return out;
}

bool SameLinks(const std::vector<site::LinkItem>& a, const std::vector<site::LinkItem>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const site::LinkItem& x, const site::LinkItem& y) {
    return x.title == y.title && x.url == y.url && x.date == y.date;
  });
}

bool RelatedIndex::Set(const std::string& path, std::vector<std::string> related) {
  auto it = lists_.find(path);
  if (it != lists_.end() && it->second == related) return false;
  if (it == lists_.end() && related.empty()) return false;
  if (it != lists_.end()) {
    for (const auto& t : it->second) {
      auto by = listed_by_.find(t);
      if (by == listed_by_.end()) continue;
      by->second.erase(path);
      if (by->second.empty()) listed_by_.erase(by);
    }
  }
  if (related.empty()) {
    lists_.erase(it);
    return true;
  }
  for (const auto& t : related) listed_by_[t].insert(path);
  if (it == lists_.end()) lists_.emplace(path, std::move(related));
  else it->second = std::move(related);
  return true;
}

void RelatedIndex::Clear() {
  lists_.clear();
  listed_by_.clear();
}

const std::vector<std::string>* RelatedIndex::Find(std::string_view path) const {
  auto it = lists_.find(path);
  return it == lists_.end() ? nullptr : &it->second;
}

const std::set<std::string>* RelatedIndex::ListedBy(std::string_view target) const {
  auto it = listed_by_.find(target);
  return it == listed_by_.end() ? nullptr : &it->second;
}

}  // namespace folio::ingest
