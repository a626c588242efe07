// SiteWriter: applies pushes to one site. It composes parts with one job
// each; Push reads as a push's phases, each in its part's file:
//   plan       hashes decide which notes and attachments changed
//              (PlanPush, push_plan.h);
//   meta       one md4c pass over the changed notes for their metadata and
//              links (ParseChanged, push_plan.h), applied to the model
//              through the push's StateTxn (ApplyToVault, push_plan.h;
//              SiteState and StateTxn, site_state.h), which says what else
//              must change: pages linking to them, listings, related lists;
//   render     full pages of exactly those notes, in parallel
//              (PageRenderer, page_renderer.h); each page's record is made
//              in one place (page_record.h);
//   assemble   the commit: rows, pages, redirects, deletions, assets
//              (PushAssembler, push_commit.h); the listings that changed
//              (ListingBuilder, site_listings.h); note events for search
//              and the report (PushAssembler);
//   commit     one SQLite transaction with the version bump and outbox
//              (CommitChange, push_commit.h); only then does the StateTxn
//              keep the change in the model; a push that fails before (or
//              at) its commit drops the StateTxn, which undoes it;
//   publish    JetStream publish of the outbox (OutboxPublisher,
//              outbox_publisher.h).
// Start and ApplyRelated (site_related.cc) end like a push: commit, publish.
// Attachment bytes are already in folio-storage when a push gets here
// (blob_upload.h, run before the writer task). The reply's data is a
// PushSummary (push_summary.h); handlers_push.cc encodes it (libs/ingest_api).
//
// Ownership: Sites owns each SiteWriter; a SiteWriter owns its parts and
// borrows the Store, ThreadPool and Registry (and the Bus while set).
// Threading: every method runs on ingest's writer thread; rendering fans
// out to the ThreadPool and joins before returning.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "folio/bus/bus.h"
#include "folio/core/status.h"
#include "folio/core/thread_pool.h"
#include "folio/ingest_api/manifest.h"
#include "folio/metrics/metrics.h"
#include "folio/site/vault.h"
#include "outbox_publisher.h"
#include "page_renderer.h"
#include "push_commit.h"
#include "push_plan.h"
#include "push_request.h"
#include "push_summary.h"
#include "site_listings.h"
#include "site_options.h"
#include "site_state.h"
#include "store.h"

namespace folio::ingest {

namespace internal {
class PhaseLog;
}  // namespace internal

class SiteWriter {
 public:
  SiteWriter(SiteOptions options, Store* store, ThreadPool* pool, metrics::Registry* registry);

  // Loads the vault and the related lists and writes the site's fixed pages
  // (stylesheet, 404) if they are missing or stale; at a new layout, every
  // note page again, after retitling the notes stored under another title
  // rule (Retitle).
  Status Start();
  // Sets the bus (once connected); nullptr while disconnected.
  void SetBus(bus::Bus* bus) { publisher_.SetBus(bus); }

  // Besides the pushed notes, re-renders the pages that link to, embed or
  // list as related (within what they show) a note whose title, URL or
  // presence changed; a deleted note's own related list is dropped.
  // Attachments carry their sha256 and, with storage, are in storage
  // already (UploadAttachments). With `key`, RecordedReply(summary) is
  // recorded under the key in the push's own transaction (a push that
  // changes nothing: in one of its own), so a retry finds it with FindPush.
  // A setting in req.settings that differs from the site's is stored with
  // the push and re-renders every published note page in the same commit.
  // kConflict if the key is recorded already. A non-empty `stage` (the
  // commit of a staged import) drops that stage's batches in the push's own
  // transaction (a push that changes nothing: in one of its own). On any
  // failure (store errors as Status; a full disk as kNoSpace) nothing is
  // kept, in the store or in memory (the push's StateTxn undoes it).
  Result<PushSummary> Push(PushRequest req, const PushKey* key = nullptr, const std::string& stage = "");
  // The push recorded under `key` for this site, or nullopt. Store errors as Status.
  Result<std::optional<PushRecord>> FindPush(const std::string& key);

  // Stores the related lists of `update` (each NormalizeRelated, replacing
  // the note's list; an empty list clears it) and re-renders the pages whose
  // shown list (ShownRelated: titles and URLs) changes, in one transaction
  // with a version bump, like a push; then publishes. A list whose sequence
  // of paths is unchanged (scores may differ) is ignored. Lists of notes
  // without a page are stored for when they get one. Returns how many pages
  // were re-rendered (0: nothing to publish). Store errors as Status; on
  // failure nothing is kept. REQUIRES: update.site == site().
  Result<size_t> ApplyRelated(const bus::RelatedUpdate& update);

  // GET /api/v1/manifest (site_manifest.cc): every note and attachment,
  // with the limits a push accepts (`limits`), the site's name, settings,
  // site_url (options' base_url without a trailing '/'; "" when unset), each
  // note's warnings as committed and `epoch` (Store::Epoch; may be empty).
  // The wire shape is libs/ingest_api's (folio/ingest_api/manifest.h);
  // handlers add missing_attachments (blob_census.h) and encode it.
  ingest_api::Manifest FullManifest(const PushLimits& limits, std::string_view epoch = {}) const;
  // GET /api/v1/manifest?since=SINCE (site_manifest.cc): what changed after
  // version `since`, read through the store's (site, version) indexes
  // (content written after SINCE, deletions after SINCE not undone, the
  // counts held now), or too_old when the tombstones of deletions since
  // SINCE were pruned. A URL that moved without a content change is not
  // listed. Fails with kInvalidArgument if since > the site's version;
  // store errors as Status. REQUIRES: since >= 0.
  Result<ingest_api::Manifest> ManifestSince(const PushLimits& limits, int64_t since) const;
  // Every attachment of the site as (path, sha256), sorted by path, for
  // the manifest's check that storage holds their bytes (blob_census.h).
  std::vector<std::pair<std::string, std::string>> AttachmentHashes() const {
    std::vector<std::pair<std::string, std::string>> out;
    out.reserve(state_.vault().attachments().size());
    for (const auto& [path, meta] : state_.vault().attachments()) out.emplace_back(path, meta.sha256);
    return out;
  }
  // Store::Epoch of this site. Store errors as Status.
  Result<std::string> Epoch() const { return store_->Epoch(options_.site); }
  // GET /api/v1/export (handlers_read.cc): Store::PageUrls of this site.
  Result<std::vector<std::string>> PageUrls(const std::string& after, int limit) const {
    return store_->PageUrls(options_.site, after, limit);
  }

  // Publishes the outbox; true when it is empty afterwards (OutboxPublisher).
  bool PublishPending() { return publisher_.PublishPending(); }
  // If the bus lost its data (no marker for our version), republishes every page.
  Status ResyncIfNeeded() { return publisher_.ResyncIfNeeded(state_.version()); }
  const std::string& site() const { return options_.site; }

 private:
  // A push that changes nothing: its summary, recorded under `key` on its own.
  Result<PushSummary> Unchanged(const PushRequest& req, const PushKey* key, const std::string& stage,
                                PushSummary sum, int64_t now_ms);
  // The counts of a push's plan, into *sum.
  static void Count(const PushRequest& req, const PushPlan& plan, PushSummary* sum);
  // A new settings value: stored with the commit, every note page re-rendered.
  void ChangeSettings(bool strict, StateTxn* txn, Commit* c, VaultChange* change);
  // Start's fixed pages (stylesheet, script, 404, the bundled mermaid) and
  // listings: only those the store does not hold as they are now stay in
  // *c, with their puts and the deletions; the listings' fingerprints go
  // to *txn. Cannot fail (a page the store cannot read is rewritten).
  void Add404Page(int64_t now_s, Commit* c) const;
  // site_writer_access.cc (issue 29). The sign-in page (site::kSignInUrl,
  // public) of a site that is private or has readers; for any other site,
  // its deletion when one is stored.
  void AddSignInPage(int64_t now_s, Commit* c) const;
  // Every stored page of the site that *c does not write or delete and whose
  // access is not c->access (but the sign-in page and folio's stylesheet,
  // public always) is added to *c with c->access: turning a site private
  // or public reaches every URL; a private site's stored feeds and sitemaps
  // are deleted instead. Store errors as Status.
  Status RestampStored(Commit* c) const;
  void AddFixedPages(int64_t now_s, StateTxn* txn, Commit* c);
  // Notes retitled at Start, kept for their search events (the request
  // holds their stored text; the plan and change borrow it).
  struct Retitled {
    PushRequest req;
    PushPlan plan;
    VaultChange change;
  };
  // At a new layout (a new build): each published note whose stored title
  // is not the one this build derives from its stored text (a title rule
  // changed, issue 28), or whose `publish: private` it does not reflect
  // (stored by a build before private notes), gets it as a push changing its title would: the
  // push's first pass (ParseChanged) titles it, the vault's NoteMeta
  // changes through *txn (the listings Start rebuilds read it; every note
  // page is rendered again anyway) and its row goes into *c. Only
  // out->req's notes are kept. Store errors as Status.
  Status Retitle(StateTxn* txn, Commit* c, Retitled* out);
  // The ending every change shares: commits c (CommitChange: its version
  // becomes the site's and *txn keeps the change; on failure nothing is
  // kept), then publishes the outbox (*published: all acknowledged).
  // `phase` (may be null) logs "commit" and "publish".
  Status CommitAndPublish(Commit* c, StateTxn* txn, bool* published, internal::PhaseLog* phase = nullptr);

  SiteOptions options_;
  Store* store_;
  ThreadPool* pool_;
  SiteState state_;
  PageRenderer renderer_;
  ListingBuilder listings_;
  PushAssembler assembler_;
  OutboxPublisher publisher_;
  // Read-only views of the model for site_manifest.cc (owned by the API
  // work of issue 25; it reads them as members): state_'s own fields.
  const site::Vault& vault_;
  const int64_t& version_;
  const bool& strict_line_breaks_;
  metrics::Counter* rendered_total_;
  metrics::Counter* rows_written_total_;
  metrics::Counter* related_lists_;
  metrics::Counter* related_rerendered_;
  metrics::Counter* parsed_twice_;
};

}  // namespace folio::ingest
