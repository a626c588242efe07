// The commit of a change: PushAssembler turns a push's plan, its change to
// the model and its rendered pages into one Commit (note rows, pages,
// redirects and 410s, deletions, assets, note events for search) and its
// report; CommitChange writes a Commit in one SQLite transaction (with the
// version bump and the outbox) and, once it holds, keeps the change in the
// model (StateTxn::Committed).
//
// Ownership: SiteWriter owns the PushAssembler, which borrows its
// SiteOptions, Store, SiteState and PageRenderer for its lifetime.
// Threads: ingest's writer thread only.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "folio/core/status.h"
#include "page_renderer.h"
#include "push_plan.h"
#include "push_request.h"
#include "push_summary.h"
#include "site_options.h"
#include "site_state.h"
#include "store.h"

namespace folio::ingest {

class PushAssembler {
 public:
  PushAssembler(const SiteOptions* options, Store* store, const SiteState* state, const PageRenderer* renderer)
      : options_(options), store_(store), state_(state), renderer_(renderer) {}

  // Adds to *c the rendered pages (their warnings into change->warnings),
  // the rows of the changed notes and of those with new warnings, the
  // redirects (301) and Gone pages (410) of the URLs notes left, the
  // deletions (a deleted note's related list through *txn) and the assets.
  // Not the listings (ListingBuilder). Cannot fail.
  void Assemble(const PushRequest& req, const PushPlan& plan, VaultChange* change, std::vector<Rendered>* out,
                const Sources& sources, int64_t now_s, StateTxn* txn, Commit* c) const;
  // Note events for search: changed and deleted notes (unpublished =
  // deleted for readers), packed into few messages. Cannot fail.
  void AddNoteEvents(const PushRequest& req, const PushPlan& plan, const VaultChange& change, Commit* c) const;
  // The report of each pushed note and attachment, then of the notes
  // re-rendered without being pushed. Warnings: this push's, else (a pushed
  // note this push does not rewrite) those the site holds.
  std::vector<NoteReport> Reports(const PushRequest& req, const WarningsByPath& warnings,
                                  const std::set<std::string>& rewritten) const;

 private:
  // The 301s and 410s of the URLs notes left, unless a page took the URL.
  void AddLeftUrls(const VaultChange& change, int64_t now_s, const std::set<std::string>& taken, Commit* c) const;
  // Attachments written and deleted; asset pages (without storage) and
  // the deletion of asset URLs no attachment uses.
  void AddAssets(const PushPlan& plan, const VaultChange& change, int64_t now_s, std::set<std::string>* taken,
                 Commit* c) const;

  const SiteOptions* options_;
  Store* store_;
  const SiteState* state_;
  const PageRenderer* renderer_;
};

// Writes *c in one transaction (Store::Apply); once it holds, *txn keeps
// the change (StateTxn::Committed). On failure nothing is kept (the caller
// drops *txn, which undoes the change); a full disk is kNoSpace with a
// message saying so; other store errors as they are.
Status CommitChange(Store* store, Commit* c, StateTxn* txn);

}  // namespace folio::ingest
