// ListingBuilder: the generated pages of a site (home, folders, tags,
// recent, RSS, sitemap, graph data, alias redirects) a change alters: it
// builds those a ListingFilter selects from the model, compares their
// fingerprints with the ones last published (SiteState::listing_fp) and
// adds to a Commit the pages that changed and the deletions of those gone.
// The new fingerprints go to a ListingDelta, which the change's StateTxn
// applies once the commit holds.
//
// Ownership: owned by SiteWriter; borrows its SiteOptions and SiteState for
// its lifetime. Threads: ingest's writer thread only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "folio/site/listings.h"
#include "site_options.h"
#include "site_state.h"
#include "store.h"

namespace folio::ingest {

// What the feeds show of one note page: its body and description
// (site::NotePageParts); ok false when the page has none.
struct FeedParts {
  bool ok = false;
  std::string body, description;
};
// By the page record's ETag (the hash of its identity body, so an entry
// never goes stale): the feed's notes' parts, kept between changes so a
// one-note push decompresses one page, not fifty.
using FeedPartsCache = std::map<std::string, FeedParts>;

class ListingBuilder {
 public:
  ListingBuilder(const SiteOptions* options, const SiteState* state, Store* store)
      : options_(options), state_(state), store_(store) {}

  // Adds to *c every generated page whose content changed since the last
  // commit (all of them when `force`) and the deletion of each one gone
  // (unless a note now has its URL). The feeds (/rss.xml, /feed.json) are
  // also built when *c holds any note page, and written when one of their
  // notes' pages is among them showing another body or summary than the
  // stored page; their summaries and bodies come from those pages (in *c,
  // else the stored ones: no note is rendered for them).
  // Returns how many were added or removed. Only the listings `only` selects are built and diffed (null:
  // all of them); the work is what those pages show, never a walk over
  // every listing. *delta: what to apply to the fingerprints once the
  // commit holds (StateTxn::SetListings). Cannot fail.
  size_t AddChanged(Commit* c, int64_t now_s, bool force, const site::ListingFilter* only, ListingDelta* delta) const;

 private:
  const SiteOptions* options_;
  const SiteState* state_;
  Store* store_;
  // The feed notes' parts as last read (bounded: the last feed's pages plus
  // those one change compared). Writer thread only, like every call here.
  mutable FeedPartsCache feed_parts_;
};

}  // namespace folio::ingest
