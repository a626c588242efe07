// PageRenderer: renders the full pages of a set of notes (a push's, a
// related-list update's, every note's at a new layout) against the model
// as it stands: loads their sources (and, transitively, what they embed)
// from the store, renders them in parallel, and adds the records to a
// Commit. Also the site's SiteInfo and layout fingerprint, which every
// page depends on.
//
// Ownership: owned by SiteWriter; borrows its SiteOptions, Store, ThreadPool
// and SiteState for its lifetime. Threads: call on ingest's writer thread;
// RenderNotes fans out to the ThreadPool (reading the model, which nobody
// mutates meanwhile) and joins before returning.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "folio/core/status.h"
#include "folio/core/thread_pool.h"
#include "folio/markdown/deferred.h"
#include "folio/site/layout.h"
#include "site_options.h"
#include "site_state.h"
#include "store.h"

namespace folio::ingest {

// Note sources available to a render pass: pushed content and everything
// preloaded from the store (the store is not thread-safe; renders are).
// The pointers borrow the request's notes or a LoadSources *stored map.
using Sources = std::map<std::string, const std::string*, std::less<>>;
// Warnings per note path, of one change.
using WarningsByPath = std::map<std::string, std::vector<std::string>>;

// A pushed note's render from the first pass (push_plan.h), its links
// still open (folio/markdown/deferred.h); borrowed from the VaultChange.
struct FirstRender {
  const markdown::RenderResult* result;
  const markdown::DeferredLinks* links;
};
// By note path. Every one must have been rendered with the site's current
// strict-line-breaks setting.
using FirstRenders = std::map<std::string, FirstRender, std::less<>>;

// One page produced by the render pass.
struct Rendered {
  std::string path;
  std::vector<std::string> warnings;
  std::string record;  // MakePageRecord
  bool parsed_twice = false;  // in FirstRenders, but rendered anew (a link dangles now, or a note embed)
};

// What every page shows of the site (name, base URL, mermaid, publish.css).
site::SiteInfo SiteInfoOf(const SiteOptions& options, const site::Vault& vault);
// The layout fingerprint of the site's settings and this build's layout.
std::string LayoutOf(const SiteOptions& options, bool strict_line_breaks);

class PageRenderer {
 public:
  PageRenderer(const SiteOptions* options, Store* store, ThreadPool* pool, const SiteState* state)
      : options_(options), store_(store), pool_(pool), state_(state) {}

  // Adds to *sources the stored text of every note in `render` not there
  // yet, and of every note they embed, transitively (kept in *stored).
  // Store errors as Status.
  Status LoadSources(const std::vector<std::string>& render, std::map<std::string, std::string>* stored,
                     Sources* sources) const;
  // Full pages of `render` (published notes of the vault), in parallel.
  // A note in `firsts` is not rendered again when its links all resolve
  // and it embeds no note: its first render gets the links' URLs.
  // REQUIRES: every path of `render` in `sources`. Cannot fail.
  std::vector<Rendered> RenderNotes(const std::vector<std::string>& render, const Sources& sources, int64_t version,
                                    int64_t now_s, const FirstRenders* firsts = nullptr) const;
  // Renders `paths` (loading their sources) into *c: the ending of a change
  // that re-renders pages without pushing notes (Start, ApplyRelated).
  // Store errors as Status.
  Status RenderInto(const std::vector<std::string>& paths, int64_t now_s, Commit* c) const;
  // Adds each rendered page (record and outbox put) to *c and its warnings
  // to *warnings (an entry even when empty: "no warnings now" is news).
  void AddRendered(Commit* c, std::vector<Rendered>* out, WarningsByPath* warnings) const;

  site::SiteInfo Info() const { return SiteInfoOf(*options_, state_->vault()); }
  std::string Layout() const { return LayoutOf(*options_, state_->strict_line_breaks()); }

 private:
  const SiteOptions* options_;
  Store* store_;
  ThreadPool* pool_;
  const SiteState* state_;
};

}  // namespace folio::ingest
