// SiteWriter: applies pushes to one site. Validated notes go through two
// parallel md4c passes (metadata and links; then full pages for exactly the
// notes the change affects), one SQLite transaction, then JetStream publish.
// Related-note lists from search (ApplyRelated) take the same way: stored,
// and the pages whose shown list changed re-rendered, committed, published.
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
#include "folio/site/layout.h"
#include "folio/site/listings.h"
#include "folio/site/vault.h"
#include "push_request.h"
#include "related.h"
#include "storage_client.h"
#include "store.h"

namespace folio::ingest {

struct SiteOptions {
  std::string site = "default";        // namespace of keys and rows
  std::string site_name = "folio";     // shown on pages
  std::string base_url;                // "https://notes.example.com": absolute links in RSS, sitemap, OG; "" = relative
  std::string mermaid_url = std::string(site::kMermaidUrl);  // script loaded only by pages with a
                                       // mermaid diagram; checked by site::CheckMermaidSource
  std::string mermaid_integrity = std::string(site::kMermaidIntegrity);  // its SRI ("" for a path on the site)
  StorageAccess storage;               // folio-storage's URL ("http://127.0.0.1:8083") and write token:
                                       // attachment bytes go there, not to SQLite or the bus; url ""
                                       // (default) = as before
};

struct PushSummary {
  int64_t version = 0;
  size_t received = 0, changed = 0, rendered = 0, deleted = 0;
  size_t listings = 0;     // generated pages (listings, feeds, redirects) re-rendered or removed
  bool published = false;  // false: committed, publish pending (retried)
  std::string phases;      // "hash=1 meta=3 ..." milliseconds per phase, for the log
  std::string notes_json;  // [{"path","url","warnings":[...]}...]
};

// The fields of a push's JSON reply that a retry replays unchanged:
// "version":N,"received":N,"changed":N,"rendered":N,"listings":N,
// "deleted":N,"notes":[...] (no braces; the handler adds "published",
// "took_ms" and, for a replay, "replayed").
std::string PushReplyFields(const PushSummary& sum);

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
  // With `key` (its key and body_sha256 set), the reply's fields
  // (PushReplyFields) are recorded under the key in the push's own
  // transaction (a push that changes nothing: in one of its own), so a
  // retry finds them with FindPush. kConflict if the key is recorded already.
  Result<PushSummary> Push(PushRequest req, const PushRecord* key = nullptr);
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

  // {"version":N,"limits":{"max_note_bytes":N,"max_attachment_bytes":N},
  //  "notes":[{"path","sha256","url"}],"attachments":[{"path","sha256","url"}]}
  // limits are what a push accepts, so a client can leave out (and name)
  // the files over them instead of having the whole push refused.
  std::string ManifestJson(const PushLimits& limits) const;

  // Publishes the outbox; true when it is empty afterwards.
  bool PublishPending();
  // If the bus lost its data (no marker for our version), republishes every page.
  Status ResyncIfNeeded();
  const std::string& site() const { return options_.site; }

 private:
  // One page produced by pass 2.
  struct Rendered {
    std::string path;
    std::vector<std::string> warnings;
    std::string record;  // bus::EncodePageRecord
  };
  // Note sources available to a render pass: pushed content and everything
  // preloaded from the store (the store is not thread-safe; renders are).
  using Sources = std::map<std::string, const std::string*, std::less<>>;
  // How the notes a change touches appeared in related lists before it.
  using RelatedBefore = std::map<std::string, std::optional<site::LinkItem>, std::less<>>;

  // (Re)loads the vault, attachments and related lists from the store.
  Status LoadState();
  // LoadState after a failed commit (the in-memory state moved ahead); logs errors.
  void ReloadState();
  // Adds to *sources the stored text of every note in `render` not there
  // yet, and of every note they embed, transitively (kept in *stored).
  Status LoadSources(const std::vector<std::string>& render, std::map<std::string, std::string>* stored,
                     Sources* sources);
  // Pass 2: full pages of `render` (published notes of the vault), in parallel.
  std::vector<Rendered> RenderNotes(const std::vector<std::string>& render, const Sources& sources,
                                    int64_t version, int64_t now_s) const;
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
  // `csp`: the page's Content-Security-Policy (site/csp.h), sent by the edge.
  void AddPage(Commit* c, std::string url, uint16_t status, std::string content_type,
               std::string cache_control, std::string_view csp, std::string body, int64_t last_modified_s,
               std::string location = "");
  // Adds every generated page whose content changed since the last commit
  // (all of them when `force`); returns how many were added or removed.
  // Only the listings `only` selects are built and diffed (null: all of them).
  size_t AddChangedListings(Commit* c, int64_t now_s, bool force, const site::ListingFilter* only,
                            std::map<std::string, std::pair<uint64_t, uint16_t>>* next_fingerprints);
  site::SiteInfo Info() const;
  // The "notes" array of a push's reply: each pushed note and attachment,
  // then the notes re-rendered without being pushed. Warnings come from
  // `warnings`, else (for a note not among `rewritten`, whose row this push
  // does not rewrite) from the store.
  std::string NotesJson(const PushRequest& req, const std::map<std::string, std::vector<std::string>>& warnings,
                        const std::set<std::string>& rewritten) const;

  SiteOptions options_;
  Store* store_;
  ThreadPool* pool_;
  bus::Bus* bus_ = nullptr;
  site::Vault vault_;
  RelatedIndex related_;
  int64_t version_ = 0;
  // Generated page URL -> (fingerprint, status) as last published.
  std::map<std::string, std::pair<uint64_t, uint16_t>> listing_fp_;
  metrics::Counter* rendered_total_;
  metrics::Counter* publish_failures_;
  metrics::Gauge* outbox_pending_;
  metrics::Counter* related_lists_;
  metrics::Counter* related_rerendered_;
};

}  // namespace folio::ingest
