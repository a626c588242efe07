#include "site_writer.h"

#include <algorithm>
#include <map>
#include <set>

#include "folio/bus/page_schema.h"
#include "folio/core/json.h"
#include "folio/core/log.h"
#include "folio/core/time.h"
#include "folio/markdown/slug.h"
#include "folio/site/csp.h"
#include "folio/site/layout.h"
#include "folio/site/listings.h"
#include "bundled_mermaid.h"
#include "site_writer_internal.h"

namespace folio::ingest {
namespace {

using internal::kAssetCache;
using internal::kHtml;
using internal::kPageCache;
using internal::MetaKey;
using internal::PhaseLog;

constexpr const char* k404Url = "/_folio/404";
constexpr int64_t kAckTimeoutMs = 10'000;

}  // namespace

SiteWriter::SiteWriter(SiteOptions options, Store* store, ThreadPool* pool, metrics::Registry* registry)
    : options_(std::move(options)), store_(store), pool_(pool) {
  metrics::Labels l{{"site", options_.site}};
  rendered_total_ = &registry->NewCounter("folio_ingest_pages_rendered_total", "Pages rendered", l);
  rows_written_total_ = &registry->NewCounter("folio_ingest_sql_rows_written_total",
                                              "SQLite rows inserted, updated or deleted by commits", l);
  publish_failures_ = &registry->NewCounter("folio_ingest_publish_failures_total", "Failed outbox publish rounds", l);
  outbox_pending_ = &registry->NewGauge("folio_ingest_outbox_pending", "Committed messages not yet acknowledged", l);
  related_lists_ = &registry->NewCounter("folio_ingest_related_lists_changed_total",
                                         "Related-note lists stored because their sequence of notes changed", l);
  related_rerendered_ = &registry->NewCounter("folio_ingest_related_rerendered_total",
                                              "Note pages re-rendered because what their related list shows changed", l);
}

Status SiteWriter::LoadState() {
  vault_ = site::Vault();
  related_.Clear();
  if (Status s = store_->LoadVault(options_.site, &vault_); !s.ok()) return s;
  if (Status s = store_->LoadAttachments(options_.site, &vault_); !s.ok()) return s;
  auto warnings = store_->LoadWarnings(options_.site);
  if (!warnings.ok()) return warnings.status();
  warnings_.clear();
  for (auto& [path, list] : *warnings) warnings_[path] = std::move(list);
  auto strict = store_->StrictLineBreaks(options_.site);
  if (!strict.ok()) return strict.status();
  strict_line_breaks_ = strict->value_or(options_.strict_line_breaks);
  auto lists = store_->LoadRelated(options_.site);
  if (!lists.ok()) return lists.status();
  for (auto& l : *lists) {
    std::vector<std::string> paths;
    for (auto& e : l.related) paths.push_back(std::move(e.path));
    related_.Set(l.path, std::move(paths));
  }
  return Status::Ok();
}

void SiteWriter::ReloadState() {
  if (Status s = LoadState(); !s.ok()) log::Error("vault reload failed", {{"site", options_.site}, {"error", s.message()}});
}

site::SiteInfo SiteWriter::Info() const {
  site::SiteInfo info;
  info.name = options_.site_name;
  info.base_url = options_.base_url;
  while (!info.base_url.empty() && info.base_url.back() == '/') info.base_url.pop_back();
  info.mermaid_url = options_.mermaid_url;
  info.mermaid_integrity = options_.mermaid_integrity;
  if (vault_.FindAttachment(site::kPublishCssPath)) info.publish_css_url = std::string(site::kPublishCssUrl);
  return info;
}

std::string SiteWriter::Layout() const {
  std::string settings = strict_line_breaks_ ? "strict-line-breaks" : "";
  // Another mermaid source changes every page with a diagram (the pinned CDN
  // build adds nothing: fingerprints from before the bundled one stay).
  if (options_.mermaid_url != site::kMermaidUrl) settings += "\nmermaid " + options_.mermaid_url;
  return site::LayoutFingerprint(options_.site_name, settings);
}

Status SiteWriter::Start() {
  auto v = store_->Version(options_.site);
  if (!v.ok()) return v.status();
  version_ = *v;
  if (Status s = LoadState(); !s.ok()) return s;

  // Fixed and generated pages: rewrite those missing or different from what
  // this build renders (a new layout, a new --site-name).
  Commit c;
  c.site = options_.site;
  c.version = version_;
  int64_t now_s = NowUnixMs() / 1000;
  AddPage(&c, site::StyleSheetUrl(), {200, "text/css; charset=utf-8", kAssetCache, site::PageCsp(), "", now_s, version_},
          site::StyleSheet());
  AddPage(&c, site::SiteScriptUrl(),
          {200, "text/javascript; charset=utf-8", kAssetCache, site::PageCsp(), "", now_s, version_}, site::SiteScript());
  AddPage(&c, k404Url, {404, kHtml, "no-store", site::PageCsp(), "", now_s, version_},
          site::Assemble404Page(options_.site_name));
  if (!options_.mermaid_blob.empty()) {  // the bundled mermaid, its bytes in storage (bundled_mermaid.h)
    c.AddPage(options_.mermaid_url,
              MakeBlobPageRecord({200, std::string(kMermaidContentType), kAssetCache, site::PageCsp(), "", now_s,
                                  version_},
                                 options_.mermaid_blob)
                  .record);
  }
  ListingDelta fps;
  AddChangedListings(&c, now_s, /*force=*/true, nullptr, &fps);
  ApplyListingDelta(/*force=*/true, std::move(fps));
  std::vector<PageRow> stale;
  for (auto& p : c.pages) {
    auto have = store_->PageRecord(options_.site, p.url);
    bus::PageRecord a, b;
    if (have.ok() && bus::DecodePageRecord(*have, &a).ok() && bus::DecodePageRecord(p.record, &b).ok() &&
        a.etag == b.etag && a.status == b.status && a.location == b.location && a.csp == b.csp) {
      continue;
    }
    stale.push_back(std::move(p));
  }
  // A new layout (this build renders pages differently): every note page again.
  std::string layout = Layout();
  auto had_layout = store_->LayoutFingerprint(options_.site);
  if (!had_layout.ok()) return had_layout.status();
  if (stale.empty() && c.deleted_pages.empty() && *had_layout == layout) return Status::Ok();
  c.layout_fingerprint = layout;
  c.pages = std::move(stale);
  c.outbox.clear();
  for (const auto& url : c.deleted_pages) c.outbox.push_back({0, OutboxMsg::kKvDelete, bus::PageKey(c.site, url), "", ""});
  for (size_t i = 0; i < c.pages.size(); ++i) c.AddPagePut(i);
  if (*had_layout != layout) {
    std::vector<std::string> paths;
    for (const auto& [path, note] : vault_.notes()) {
      if (note.published) paths.push_back(path);
    }
    if (!paths.empty()) {
      log::Info("layout changed: re-rendering every note page", {{"site", options_.site},
                                                               {"notes", std::to_string(paths.size())}});
    }
    if (Status s = RenderInto(paths, now_s, &c); !s.ok()) return s;
  }
  c.outbox.push_back({0, OutboxMsg::kKvPut, MetaKey(c.site), std::to_string(version_), ""});
  bool published = false;
  return CommitAndPublish(&c, &published);
}

void SiteWriter::AddPage(Commit* c, std::string url, PageHead head, std::string_view body) {
  PageRecordOut rec = MakePageRecord(head, body);
  if (!rec.warning.empty()) log::Warn("generated page too large for the bus", {{"url", url}, {"error", rec.warning}});
  c->AddPage(std::move(url), std::move(rec.record));
}

namespace {

// The published generated pages a filtered build may have dropped: those of
// the categories it rebuilds, found by key and by prefix range, not by a
// walk over every listing (an alias-wide rebuild is the exception).
template <typename Map>
std::vector<std::string> CoveredUrls(const site::ListingFilter& f, const Map& published) {
  std::set<std::string> urls;
  auto exact = [&](const std::string& url) {
    if (published.count(url)) urls.insert(url);
  };
  auto prefixed = [&](std::string_view prefix) {
    for (auto it = published.lower_bound(std::string(prefix));
         it != published.end() && std::string_view(it->first).substr(0, prefix.size()) == prefix; ++it) {
      urls.insert(it->first);
    }
  };
  for (std::string_view url : {std::string_view("/"), markdown::kTagsUrl, std::string_view("/rss.xml"),
                               std::string_view("/sitemap.xml"), std::string_view("/robots.txt")}) {
    exact(std::string(url));
  }
  for (const auto& d : f.folders) {
    exact(site::FolderUrl(d));
    exact(site::TreeUrl(site::FolderUrl(d)));
  }
  exact(site::TreeUrl("/"));
  exact(std::string(markdown::kGraphDataUrl));
  exact(std::string(site::kPublishCssUrl));
  if (f.graph) prefixed(markdown::kGraphChunkPrefix);
  for (const auto& t : f.tags) exact(site::TagUrl(t));
  for (const auto& a : f.alias_urls) exact(a);
  if (f.recent) prefixed(markdown::kRecentUrl);
  if (f.sitemap) prefixed("/sitemap-");
  if (f.aliases) {
    for (const auto& [url, fp] : published) {
      if (fp.second == 301) urls.insert(url);
    }
  }
  std::vector<std::string> out;
  for (const auto& url : urls) {
    if (f.Covers(url, published.at(url).second)) out.push_back(url);
  }
  return out;
}

}  // namespace

size_t SiteWriter::AddChangedListings(Commit* c, int64_t now_s, bool force, const site::ListingFilter* only,
                                      ListingDelta* delta) {
  site::ListingOptions opt;
  opt.recent_max_pages = options_.recent_pages;
  auto pages = site::BuildListings(vault_, Info(), opt, only);
  size_t n = 0;
  std::set<std::string> note_urls;
  for (const auto& p : c->pages) note_urls.insert(p.url);
  for (const auto& [url, g] : pages) {
    auto old = listing_fp_.find(url);
    if (!force && old != listing_fp_.end() && old->second.first == g.fingerprint) continue;
    (*delta)[url] = ListingFp{g.fingerprint, g.status};
    if (note_urls.count(url)) continue;  // a note took this URL in this very push
    const char* cache = g.status == 301 ? "public, max-age=300" : kPageCache;
    AddPage(c, url, {g.status, g.content_type, cache, site::PageCsp(), g.location, now_s, c->version}, g.Render());
    ++n;
  }
  // Generated pages of the rebuilt categories that no longer exist (a tag
  // nobody uses, a folder emptied), unless a note now has the URL.
  std::vector<std::string> gone;
  if (only) {
    gone = CoveredUrls(*only, listing_fp_);
  } else {
    for (const auto& [url, fp] : listing_fp_) gone.push_back(url);
  }
  for (const auto& url : gone) {
    if (pages.count(url) || note_urls.count(url)) continue;
    (*delta)[url] = std::nullopt;
    if (vault_.UrlOwner(url)) continue;  // now a note's URL: its page replaces the listing
    c->deleted_pages.push_back(url);
    c->outbox.push_back({0, OutboxMsg::kKvDelete, bus::PageKey(c->site, url), "", ""});
    ++n;
  }
  return n;
}

void SiteWriter::ApplyListingDelta(bool force, ListingDelta delta) {
  if (force) listing_fp_.clear();
  for (auto& [url, fp] : delta) {
    if (fp) listing_fp_[url] = *fp;
    else listing_fp_.erase(url);
  }
}

Result<PushSummary> SiteWriter::Push(PushRequest req, const PushKey* key, const std::string& stage) {
  PushSummary sum;
  PhaseLog phase(&sum.phases);
  const int64_t now_ms = NowUnixMs(), now_s = now_ms / 1000;
  sum.received = req.notes.size() + req.attachments.size();
  const PushPlan plan = PlanPush(req);
  sum.changed = plan.changed.size() + plan.att_upserts.size();
  sum.deleted = plan.deletes.size() + plan.att_deletes.size();
  sum.att_received = req.attachments.size();
  sum.att_changed = plan.att_upserts.size();
  sum.att_deleted = plan.att_deletes.size();
  phase("hash");
  const std::optional<bool> strict = req.settings.strict_line_breaks;
  sum.settings_changed = strict && *strict != strict_line_breaks_;
  sum.strict_line_breaks = strict.value_or(strict_line_breaks_);
  if (plan.empty() && !sum.settings_changed) return Unchanged(req, key, stage, std::move(sum), now_ms);

  Commit c;
  c.site = options_.site;
  c.version = version_ + 1;
  c.drop_stage = stage;
  std::vector<markdown::RenderResult> meta = ParseChanged(req, plan);
  phase("meta");
  VaultChange change = ApplyToVault(req, plan, std::move(meta), now_ms, c.version);
  if (sum.settings_changed) {  // every note page renders anew (a failed commit reloads the old value)
    strict_line_breaks_ = *strict;
    c.strict_line_breaks = strict;
    c.layout_fingerprint = Layout();
    for (const auto& [path, note] : vault_.notes()) {
      if (note.published) change.impact.render.insert(path);
    }
    log::Info("strict line breaks changed: re-rendering every note page",
              {{"site", options_.site}, {"strict_line_breaks", *strict ? "true" : "false"}});
  }
  // Sources of the render pass: pushed notes, plus the stored text of every
  // other note rendered or embedded (transitively) by a rendered note.
  std::map<std::string, std::string> stored;
  Sources sources;
  for (size_t i : plan.changed) sources[req.notes[i].path] = &req.notes[i].content;
  std::vector<std::string> render(change.impact.render.begin(), change.impact.render.end());
  if (Status s = LoadSources(render, &stored, &sources); !s.ok()) {
    ReloadState();
    return s;
  }
  phase("apply");
  std::vector<Rendered> out = RenderNotes(render, sources, c.version, now_s);
  sum.rendered = out.size();
  phase("render");
  AssembleCommit(req, plan, &change, &out, sources, now_s, &c);
  phase("assemble");
  ListingDelta fps;
  // publish.css arrived or left: every generated page links it or stops.
  const bool every_listing = change.publish_css_toggled;
  sum.listings = AddChangedListings(&c, now_s, every_listing, every_listing ? nullptr : &change.dirty, &fps);
  phase("listings");
  AddNoteEvents(req, plan, change, &c);
  c.outbox.push_back({0, OutboxMsg::kKvPut, MetaKey(c.site), std::to_string(c.version), ""});
  // The reply is known before the commit, so that it commits with the push.
  sum.version = c.version;
  std::set<std::string> rewritten;
  for (size_t i : plan.changed) rewritten.insert(req.notes[i].path);
  sum.notes = Reports(req, change.warnings, rewritten);
  if (key) c.push_record = PushRecord{key->key, key->body_sha256, key->encode_reply(sum), now_ms};

  if (Status s = CommitAndPublish(&c, &sum.published, &phase); !s.ok()) return s;
  sum.rows = c.rows_written;
  ApplyListingDelta(/*force=*/false, std::move(fps));
  rendered_total_->Increment(static_cast<double>(out.size() + sum.listings));
  related_rerendered_->Increment(static_cast<double>(change.related_renders));
  return sum;
}

Result<PushSummary> SiteWriter::Unchanged(const PushRequest& req, const PushKey* key, const std::string& stage,
                                          PushSummary sum, int64_t now_ms) {
  sum.published = true;
  sum.version = version_;
  sum.notes = Reports(req, {}, {});
  if (!stage.empty()) {
    if (Status s = store_->DropStage(options_.site, stage); !s.ok()) return s;
  }
  if (key) {
    PushRecord rec{key->key, key->body_sha256, key->encode_reply(sum), now_ms};
    if (Status s = store_->RecordPush(options_.site, rec); !s.ok()) return s;
  }
  return sum;
}

Status SiteWriter::CommitAndPublish(Commit* c, bool* published, PhaseLog* phase) {
  if (Status s = store_->Apply(c); !s.ok()) {
    ReloadState();  // the in-memory vault already moved
    if (s.code() == Code::kNoSpace) {
      log::Error("change not committed: the disk is full", {{"site", options_.site}, {"error", s.message()}});
      return Status::NoSpace("ingest's disk is full: the push was not applied and nothing was changed; "
                             "retry once space returns");
    }
    return s;
  }
  rows_written_total_->Increment(static_cast<double>(c->rows_written));
  version_ = c->version;
  for (const NoteRow& row : c->notes) {
    if (row.warnings.empty()) {
      warnings_.erase(row.meta.path);
    } else {
      warnings_[row.meta.path] = row.warnings;
    }
  }
  for (const auto& path : c->deleted_notes) warnings_.erase(path);
  if (phase) (*phase)("commit");
  *published = c->outbox_was_empty ? PublishCommitted(*c) : PublishPending();
  if (phase) (*phase)("publish");
  return Status::Ok();
}

Result<std::optional<PushRecord>> SiteWriter::FindPush(const std::string& key) {
  return store_->FindPush(options_.site, key);
}

// One outbox message to the bus, without waiting for its ack. False when
// the round must stop (the bus refused it; the outbox keeps it for a retry).
bool SiteWriter::SendOutboxMsg(int kind, const std::string& subject, const std::string& payload,
                               const std::string& msg_id) {
  Status s;
  switch (kind) {
    case OutboxMsg::kKvPut: s = bus_->KvPutAsync(bus::kPagesBucket, subject, payload); break;
    case OutboxMsg::kKvDelete: s = bus_->KvDeleteAsync(bus::kPagesBucket, subject); break;
    case OutboxMsg::kPagePut: return true;  // the page is gone; a later message deletes it
    default: s = bus_->PublishAsync(subject, payload, msg_id); break;
  }
  if (s.code() == Code::kTooLarge) {
    // Permanent: retrying would wedge the outbox. The push that made it
    // already warned the author (kMaxPublishedPage); skip it.
    log::Error("page too large for the bus; not published", {{"subject", subject}, {"error", s.message()}});
    publish_failures_->Increment();
    return true;
  }
  if (!s.ok()) {
    log::Warn("publish failed; will retry", {{"subject", subject}, {"error", s.message()}});
    publish_failures_->Increment();
    (void)bus_->WaitForAcks(kAckTimeoutMs);
    return false;
  }
  return true;
}

// Waits for the round's acks, then drops the outbox through `upto_seq`.
bool SiteWriter::AckRound(int64_t upto_seq) {
  if (Status s = bus_->WaitForAcks(kAckTimeoutMs); !s.ok()) {
    log::Warn("publish not acknowledged; will retry", {{"error", s.message()}});
    publish_failures_->Increment();
    return false;
  }
  if (Status s = store_->AckOutbox(upto_seq); !s.ok()) {
    log::Error("outbox ack failed", {{"error", s.message()}});
    return false;
  }
  return true;
}

bool SiteWriter::PublishCommitted(const Commit& c) {
  // The commit's messages are the whole outbox: send them from memory
  // instead of reading back what was just written. Same order, same acks,
  // same rows dropped as PublishPending's rounds.
  if (!bus_ || !bus_->connected() || c.outbox.empty()) return PublishPending();
  size_t round_start = 0;
  for (size_t i = 0; i < c.outbox.size(); ++i) {
    const OutboxMsg& m = c.outbox[i];
    const std::string& payload = m.page >= 0 ? c.pages[static_cast<size_t>(m.page)].record : m.payload;
    if (!SendOutboxMsg(m.kind, m.subject, payload, m.msg_id)) return false;
    if (i + 1 - round_start == kOutboxRound || i + 1 == c.outbox.size()) {
      if (!AckRound(m.seq)) return false;
      round_start = i + 1;
    }
  }
  outbox_pending_->Set(0);
  return true;
}

bool SiteWriter::PublishPending() {
  auto size = store_->OutboxSize();
  if (size.ok()) outbox_pending_->Set(static_cast<double>(*size));
  if (!bus_ || !bus_->connected()) return size.ok() && *size == 0;
  for (;;) {
    auto msgs = store_->PendingOutbox(kOutboxRound);
    if (!msgs.ok()) {
      log::Error("outbox read failed", {{"error", msgs.status().message()}});
      return false;
    }
    if (msgs->empty()) {
      outbox_pending_->Set(0);
      return true;
    }
    for (const auto& m : *msgs) {
      if (!SendOutboxMsg(m.kind, m.subject, m.payload, m.msg_id)) return false;
    }
    if (!AckRound(msgs->back().seq)) return false;
  }
}

Status SiteWriter::ResyncIfNeeded() {
  if (!bus_) return Status::Unavailable("not connected to NATS");
  auto marker = bus_->KvGet(bus::kPagesBucket, MetaKey(options_.site));
  if (marker.ok() && *marker == std::to_string(version_)) return Status::Ok();
  if (!marker.ok() && marker.status().code() != Code::kNotFound) return marker.status();
  // The bucket does not hold our latest version (a new or wiped NATS): republish everything.
  auto pages = store_->AllPages(options_.site);
  if (!pages.ok()) return pages.status();
  log::Info("republishing all pages", {{"site", options_.site}, {"pages", std::to_string(pages->size())}});
  size_t i = 0;
  for (const auto& p : *pages) {
    if (Status s = bus_->KvPutAsync(bus::kPagesBucket, bus::PageKey(options_.site, p.url), p.record); !s.ok()) return s;
    if (++i % 4096 == 0) {
      if (Status s = bus_->WaitForAcks(kAckTimeoutMs); !s.ok()) return s;
    }
  }
  if (Status s = bus_->KvPutAsync(bus::kPagesBucket, MetaKey(options_.site), std::to_string(version_)); !s.ok()) return s;
  return bus_->WaitForAcks(kAckTimeoutMs);
}

}  // namespace folio::ingest
