// SiteWriter: applies pushes to one site. A push goes through named stages
// (Push reads as the list):
//   plan       hashes decide which notes and attachments changed (PlanPush);
//   meta       one md4c pass over the changed notes for their metadata and
//              links, applied to the in-memory vault, which says what else
//              must change: pages linking to them, listings, related lists
//              (ParseChanged, ApplyToVault);
//   render     full pages of exactly those notes, in parallel (RenderNotes);
//              each page's record is made in one place (page_record.h);
//   assemble   the commit: rows, pages, redirects, deletions, assets,
//              listings, note events for search (AssembleCommit, ...);
//   commit and publish: one SQLite transaction with the version bump and
//              outbox, then JetStream publish (CommitAndPublish, the ending
//              Push, Start and ApplyRelated share).
// Attachment bytes are already in folio-storage when a push gets here
// (blob_upload.h, run before the writer task). The reply's data is a
// PushSummary; handlers.cc writes it as JSON.
//
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
#include "folio/metrics/metrics.h"
#include "folio/markdown/render.h"
#include "folio/site/layout.h"
#include "folio/site/listings.h"
#include "folio/site/vault.h"
#include "page_record.h"
#include "folio/ingest_api/manifest.h"
#include "push_request.h"
#include "related.h"
#include "storage_client.h"
#include "store.h"

namespace folio::ingest {

namespace internal {
class PhaseLog;
}  // namespace internal

struct SiteOptions {
  std::string site = "default";        // namespace of keys and rows
  std::string site_name = "folio";     // shown on pages
  std::string base_url;                // "https://notes.example.com": absolute links in RSS, sitemap, OG; "" = relative
  bool strict_line_breaks = false;     // markdown::RenderOptions::strict_line_breaks of a site that never
                                       // sent its own (PushSettings, stored per site: issue 13)
  size_t recent_pages = 1;             // site::ListingOptions::recent_max_pages (--recent-pages)
  std::string mermaid_url = std::string(site::kMermaidUrl);  // script loaded only by pages with a
                                       // mermaid diagram; checked by site::CheckMermaidSource
  std::string mermaid_integrity = std::string(site::kMermaidIntegrity);  // its SRI ("" for a path on the site)
  std::string mermaid_blob;            // "" (default), or the full hex SHA-256 of the bundled mermaid in
                                       // storage: Start publishes a page at mermaid_url whose body is
                                       // that blob (bundled_mermaid.h)
  StorageAccess storage;               // folio-storage's URL ("http://127.0.0.1:8083") and write token:
                                       // attachment bytes go there, not to SQLite or the bus; url ""
                                       // (default) = as before
};

// One entry of a push's report: a pushed note or attachment, or a note
// this push re-rendered without it being pushed (its links now resolve
// elsewhere, say), with the warnings it has now.
struct NoteReport {
  enum class Kind { kPushed, kAttachment, kRerendered };
  Kind kind = Kind::kPushed;
  std::string path;
  std::string url;         // "" when it has none
  bool published = true;   // kPushed: false when its front matter says publish: false
  std::vector<std::string> warnings;
};

struct PushSummary {
  int64_t version = 0;
  size_t received = 0, changed = 0, rendered = 0, deleted = 0;  // notes and attachments
  size_t att_received = 0, att_changed = 0, att_deleted = 0;    // the attachments among them
  size_t listings = 0;     // generated pages (listings, feeds, redirects) re-rendered or removed
  int64_t rows = 0;        // SQLite rows the commit wrote (Commit::rows_written)
  bool published = false;  // false: committed, publish pending (retried)
  bool strict_line_breaks = false;  // the site's setting after the push
  bool settings_changed = false;    // this push changed it: every note page was re-rendered
  std::string phases;      // "hash=1 meta=3 ..." milliseconds per phase, for the log
  std::vector<NoteReport> notes;  // pushed notes, attachments, then re-rendered notes
};

// A push sent with an Idempotency-Key: its reply is recorded with the push
// (in the same transaction) so that a retry gets it again.
struct PushKey {
  std::string key;
  std::string body_sha256;
  // The reply's recorded part, as the API writes it (handlers.cc).
  std::string (*encode_reply)(const PushSummary&) = nullptr;
};

class SiteWriter {
 public:
  SiteWriter(SiteOptions options, Store* store, ThreadPool* pool, metrics::Registry* registry);

  // Loads the vault and the related lists and writes the site's fixed pages
  // (stylesheet, 404) if they are missing or stale.
  Status Start();
  // Sets the bus (once connected); nullptr while disconnected.
  void SetBus(bus::Bus* bus) { bus_ = bus; }

  // Besides the pushed notes, re-renders the pages that link to, embed or
  // list as related (within what they show) a note whose title, URL or
  // presence changed; a deleted note's own related list is dropped.
  // Attachments carry their sha256 and, with storage, are in storage
  // already (UploadAttachments). With `key`, key->encode_reply(summary) is
  // recorded under the key in the push's own transaction (a push that
  // changes nothing: in one of its own), so a retry finds it with FindPush.
  // A setting in req.settings that differs from the site's is stored with
  // the push and re-renders every published note page in the same commit.
  // kConflict if the key is recorded already. A non-empty `stage` (the
  // commit of a staged import) drops that stage's batches in the push's own
  // transaction (a push that changes nothing: in one of its own).
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
    out.reserve(vault_.attachments().size());
    for (const auto& [path, meta] : vault_.attachments()) out.emplace_back(path, meta.sha256);
    return out;
  }
  // Store::Epoch of this site. Store errors as Status.
  Result<std::string> Epoch() const { return store_->Epoch(options_.site); }
  // GET /api/v1/export (handlers.cc): Store::PageUrls of this site.
  Result<std::vector<std::string>> PageUrls(const std::string& after, int limit) const {
    return store_->PageUrls(options_.site, after, limit);
  }

  // Publishes the outbox; true when it is empty afterwards.
  bool PublishPending();
  // If the bus lost its data (no marker for our version), republishes every page.
  Status ResyncIfNeeded();
  const std::string& site() const { return options_.site; }

 private:
  // Messages sent per round before waiting for their acks.
  static constexpr size_t kOutboxRound = 4096;
  // PublishPending's work for a commit whose messages are the whole outbox,
  // taken from memory (Commit::outbox_was_empty).
  bool PublishCommitted(const Commit& c);
  bool SendOutboxMsg(int kind, const std::string& subject, const std::string& payload, const std::string& msg_id);
  bool AckRound(int64_t upto_seq);
  // Plan: what a push changes, decided by hashes alone.
  struct PushPlan {
    std::vector<std::string> sha;        // of each req.notes[i]
    std::vector<size_t> changed;         // indexes into req.notes of new or changed notes
    std::vector<std::string> deletes;    // notes to delete that the vault has
    std::vector<site::AttachmentMeta> att_upserts;  // new or changed attachments
    std::vector<const PushAttachment*> att_bytes;   // their bytes (parallel to att_upserts)
    std::vector<std::string> att_deletes;           // attachments to delete that the vault has
    bool empty() const { return changed.empty() && deletes.empty() && att_upserts.empty() && att_deletes.empty(); }
  };
  // What applying a plan to the vault did, and what it asks for.
  struct VaultChange {
    std::vector<markdown::RenderResult> meta;   // metadata pass of each plan.changed note
    std::vector<std::string> deleted_urls;      // URL each plan.deletes note had
    std::vector<std::string> unused_asset_urls; // asset URLs no attachment has any more
    site::Impact impact;                        // notes to render, URLs moved or gone
    site::ListingFilter dirty;                  // listings the change can alter
    size_t related_renders = 0;                 // of impact.render, added for related lists
    bool publish_css_toggled = false;           // publish.css arrived or left: every page changes
    std::map<std::string, std::vector<std::string>> warnings;  // per path, this push
  };
  // One page produced by the render pass.
  struct Rendered {
    std::string path;
    std::vector<std::string> warnings;
    std::string record;  // MakePageRecord
  };
  // Note sources available to a render pass: pushed content and everything
  // preloaded from the store (the store is not thread-safe; renders are).
  using Sources = std::map<std::string, const std::string*, std::less<>>;
  // How the notes a change touches appeared in related lists before it.
  using RelatedBefore = std::map<std::string, std::optional<site::LinkItem>, std::less<>>;

  // (Re)loads the vault, attachments, warnings and related lists from the store.
  Status LoadState();
  // LoadState after a failed commit (the in-memory state moved ahead); logs errors.
  void ReloadState();

  // Push's stages, in order (push_stages.cc).
  PushPlan PlanPush(const PushRequest& req) const;
  std::vector<markdown::RenderResult> ParseChanged(const PushRequest& req, const PushPlan& plan) const;
  VaultChange ApplyToVault(const PushRequest& req, const PushPlan& plan, std::vector<markdown::RenderResult> meta,
                           int64_t now_ms, int64_t version);
  // Rows, pages, redirects, deletions and assets of a push (not listings).
  void AssembleCommit(const PushRequest& req, const PushPlan& plan, VaultChange* change, std::vector<Rendered>* out,
                      const Sources& sources, int64_t now_s, Commit* c);
  // Note events for search: changed and deleted notes (unpublished = deleted for readers).
  void AddNoteEvents(const PushRequest& req, const PushPlan& plan, const VaultChange& change, Commit* c) const;
  // The report of each pushed note and attachment, then of the notes
  // re-rendered without being pushed. Warnings: this push's, else (a pushed
  // note this push does not rewrite) those the site holds.
  std::vector<NoteReport> Reports(const PushRequest& req, const std::map<std::string, std::vector<std::string>>& warnings,
                                  const std::set<std::string>& rewritten) const;
  // A push that changes nothing: its summary, recorded under `key` on its own.
  Result<PushSummary> Unchanged(const PushRequest& req, const PushKey* key, const std::string& stage,
                                PushSummary sum, int64_t now_ms);

  // The ending every change shares: commits c (its version becomes the
  // site's), then publishes the outbox (*published: all acknowledged). On a
  // failed commit the in-memory state is reloaded and nothing is kept; a
  // full disk is kNoSpace with a message saying so.
  // `phase` (may be null) logs "commit" and "publish".
  Status CommitAndPublish(Commit* c, bool* published, internal::PhaseLog* phase = nullptr);

  // Adds to *sources the stored text of every note in `render` not there
  // yet, and of every note they embed, transitively (kept in *stored).
  Status LoadSources(const std::vector<std::string>& render, std::map<std::string, std::string>* stored,
                     Sources* sources);
  // Full pages of `render` (published notes of the vault), in parallel.
  std::vector<Rendered> RenderNotes(const std::vector<std::string>& render, const Sources& sources,
                                    int64_t version, int64_t now_s) const;
  // Renders `paths` (loading their sources) into *c: the ending of a change
  // that re-renders pages without pushing notes (Start, ApplyRelated).
  Status RenderInto(const std::vector<std::string>& paths, int64_t now_s, Commit* c);
  // Adds each rendered page (record and outbox put) to *c and its warnings
  // to *warnings (an entry even when empty: "no warnings now" is news).
  void AddRendered(Commit* c, std::vector<Rendered>* out, std::map<std::string, std::vector<std::string>>* warnings);
  // How a note appears in related lists now (nullopt: it has no page).
  std::optional<site::LinkItem> RelatedItem(std::string_view path) const;
  // The related-list appearance of those `paths` some list names, before a change.
  RelatedBefore CaptureRelatedBefore(const std::vector<std::string>& paths) const;
  // After the vault changed: adds to *render the published notes whose shown
  // related list differs from before; returns how many it added.
  size_t AddRelatedImpact(const RelatedBefore& before, std::set<std::string>* render) const;
  // A generated or fixed page (not a note's): its record and outbox put.
  void AddPage(Commit* c, std::string url, PageHead head, std::string_view body);
  // Generated page URL -> (fingerprint, status); in a delta, nullopt = gone.
  using ListingFp = std::pair<uint64_t, uint16_t>;
  using ListingDelta = std::map<std::string, std::optional<ListingFp>>;
  // Adds every generated page whose content changed since the last commit
  // (all of them when `force`); returns how many were added or removed.
  // Only the listings `only` selects are built and diffed (null: all of
  // them); the work is what those pages show, never a walk over every
  // listing. *delta: what to apply to listing_fp_ once the commit holds.
  size_t AddChangedListings(Commit* c, int64_t now_s, bool force, const site::ListingFilter* only,
                            ListingDelta* delta);
  void ApplyListingDelta(bool force, ListingDelta delta);
  site::SiteInfo Info() const;
  // The layout fingerprint of the site's settings and this build's layout.
  std::string Layout() const;

  SiteOptions options_;
  Store* store_;
  ThreadPool* pool_;
  bus::Bus* bus_ = nullptr;
  site::Vault vault_;
  RelatedIndex related_;
  int64_t version_ = 0;
  // The site's own setting, else options_.strict_line_breaks (LoadState).
  bool strict_line_breaks_ = false;
  // Generated page URL -> (fingerprint, status) as last published.
  std::map<std::string, ListingFp> listing_fp_;
  // Each note's warnings as committed (notes without warnings absent), so a
  // push's report reads no row.
  std::map<std::string, std::vector<std::string>, std::less<>> warnings_;
  metrics::Counter* rendered_total_;
  metrics::Counter* rows_written_total_;
  metrics::Counter* publish_failures_;
  metrics::Gauge* outbox_pending_;
  metrics::Counter* related_lists_;
  metrics::Counter* related_rerendered_;
};

}  // namespace folio::ingest
