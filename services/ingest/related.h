// RelatedIndex: one site's related-note lists as search last published them
// (stream "related", bus::RelatedUpdate), kept in memory so pages can show
// them and so a push can find the pages that show a note whose title, URL
// or presence changed (like backlinks do for links).
//
// A list holds vault paths, best first. Paths that name no published note
// (deleted since, drafts) stay in the list and are skipped when a page is
// rendered (ShownRelated): the page shows the first kMaxRelatedShown that
// exist.
//
// Ownership: each SiteWriter owns one. Threading: mutate on ingest's writer
// thread; const methods may run on render threads while nobody mutates.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "folio/bus/related_schema.h"
#include "folio/site/layout.h"

namespace folio::ingest {

// Entries of a list kept (stored and in memory); search sends at most
// bus::kMaxRelatedK. Room to skip deleted notes and still fill a page.
inline constexpr size_t kMaxRelatedKept = 20;
// Related notes a page shows at most.
inline constexpr size_t kMaxRelatedShown = 8;

// A list as search sent it, made safe to keep: entries whose path is not a
// valid vault path, names the note itself or repeats an earlier entry are
// dropped; at most kMaxRelatedKept remain, in the order given.
std::vector<bus::RelatedEntry> NormalizeRelated(std::string_view self, const std::vector<bus::RelatedEntry>& in);

// How a note appears in another note's related list: its title and URL,
// or nullopt when it has no page (missing or unpublished).
using RelatedLookup = std::function<std::optional<site::LinkItem>(std::string_view path)>;

// What a page shows for `list`: the first kMaxRelatedShown entries that
// `lookup` finds, in list order.
std::vector<site::LinkItem> ShownRelated(const std::vector<std::string>& list, const RelatedLookup& lookup);
// Same titles and URLs in the same order.
bool SameLinks(const std::vector<site::LinkItem>& a, const std::vector<site::LinkItem>& b);

class RelatedIndex {
 public:
  // Replaces path's list (paths only, best first); an empty list removes
  // it. Returns true when the sequence of paths changed.
  bool Set(const std::string& path, std::vector<std::string> related);
  void Clear();

  // path's list, or nullptr if it has none.
  const std::vector<std::string>* Find(std::string_view path) const;
  // Notes whose list names `target`, or nullptr if none does.
  const std::set<std::string>* ListedBy(std::string_view target) const;
  size_t size() const { return lists_.size(); }

 private:
  std::map<std::string, std::vector<std::string>, std::less<>> lists_;
  std::map<std::string, std::set<std::string>, std::less<>> listed_by_;  // target -> notes listing it
};

}  // namespace folio::ingest
