// SiteWriter (site_writer.h): the composition of the parts, Start, Push
// as its phases, and the manifest.
#include "site_writer.h"

#include <algorithm>
#include <map>
#include <set>

#include "folio/bus/page_schema.h"
#include "folio/core/log.h"
#include "folio/core/time.h"
#include "folio/markdown/frontmatter.h"
#include "folio/markdown/render.h"
#include "folio/site/csp.h"
#include "folio/site/layout.h"
#include "rename_match.h"
#include "writer_parts.h"

namespace folio::ingest {
namespace {

using internal::kAssetCache;
using internal::kHtml;
using internal::MetaKey;
using internal::PhaseLog;

constexpr const char* k404Url = "/_folio/404";

// The record in the store of `p.url` serves the same as `p` (same ETag, status, location, CSP, access).
bool SameAsStored(Store* store, const std::string& site, const PageRow& p) {
  auto have = store->PageRecord(site, p.url);
  bus::PageRecord a, b;
  return have.ok() && bus::DecodePageRecord(*have, &a).ok() && bus::DecodePageRecord(p.record, &b).ok() &&
         a.etag == b.etag && a.status == b.status && a.location == b.location && a.csp == b.csp &&
         a.access == b.access;
}

std::vector<std::string> PublishedNotes(const site::Vault& vault) {
  std::vector<std::string> paths;
  for (const auto& [path, note] : vault.notes()) {
    if (note.published) paths.push_back(path);
  }
  return paths;
}

}  // namespace

SiteWriter::SiteWriter(SiteOptions options, Store* store, ThreadPool* pool, metrics::Registry* registry)
    : options_(std::move(options)),
      store_(store),
      pool_(pool),
      renderer_(&options_, store_, pool_, &state_),
      listings_(&options_, &state_, store_),
      assembler_(&options_, store_, &state_, &renderer_),
      publisher_(options_.site, store_, registry, options_.feed_snapshot_bytes),
      vault_(state_.vault()),
      version_(state_.version()),
      strict_line_breaks_(state_.strict_line_breaks()) {
  metrics::Labels l{{"site", options_.site}};
  rendered_total_ = &registry->NewCounter("folio_ingest_pages_rendered_total", "Pages rendered", l);
  rows_written_total_ = &registry->NewCounter("folio_ingest_sql_rows_written_total",
                                              "SQLite rows inserted, updated or deleted by commits", l);
  related_lists_ = &registry->NewCounter("folio_ingest_related_lists_changed_total",
                                         "Related-note lists stored because their sequence of notes changed", l);
  related_rerendered_ = &registry->NewCounter("folio_ingest_related_rerendered_total",
                                              "Note pages re-rendered because what their related list shows changed", l);
  parsed_twice_ = &registry->NewCounter("folio_ingest_notes_parsed_twice_total",
                                        "Pushed notes whose first render could not become their page (a link that "
                                        "dangles, a note embed): rendered again", l);
}

// The 404 page links the vault's publish.css like every page: written at
// start and again when a push adds or removes publish.css.
void SiteWriter::Add404Page(int64_t now_s, Commit* c) const {
  const site::SiteInfo info = renderer_.Info();
  internal::AddPage(c, k404Url, {404, kHtml, "no-store", site::PageCsp(info), "", now_s, c->version},
                    site::Assemble404Page(info));
}

void SiteWriter::AddFixedPages(int64_t now_s, StateTxn* txn, Commit* c) {
  const int64_t v = c->version;
  // folio's own stylesheet, the same on every site, stays public: the sign-in page links it.
  c->AddPage(site::StyleSheetUrl(), MakePageRecord({200, "text/css; charset=utf-8", kAssetCache, site::PageCsp(), "",
                                                    now_s, v}, site::StyleSheet()).record);
  internal::AddPage(c, site::SiteScriptUrl(),
                    {200, "text/javascript; charset=utf-8", kAssetCache, site::PageCsp(), "", now_s, v},
                    site::SiteScript());
  Add404Page(now_s, c);
  AddSignInPage(now_s, c);
  if (!options_.mermaid_blob.empty()) {  // the bundled mermaid, its bytes in storage (bundled_mermaid.h)
    PageHead head{200, std::string(internal::kMermaidContentType), kAssetCache, site::PageCsp(), "", now_s, v,
                  c->access};
    c->AddPage(options_.mermaid_url, MakeBlobPageRecord(head, options_.mermaid_blob).record);
  }
  ListingDelta fps;
  listings_.AddChanged(c, now_s, /*force=*/true, nullptr, &fps);
  txn->SetListings(/*force=*/true, std::move(fps));
  std::vector<PageRow> stale;
  for (auto& p : c->pages) {
    if (!SameAsStored(store_, options_.site, p)) stale.push_back(std::move(p));
  }
  c->pages = std::move(stale);
  c->outbox.clear();
  for (const auto& url : c->deleted_pages) {
    c->outbox.push_back({0, OutboxMsg::kKvDelete, bus::PageKey(c->site, url), "", ""});
  }
  for (size_t i = 0; i < c->pages.size(); ++i) c->AddPagePut(i);
}

Status SiteWriter::Start() {
  if (Status s = state_.Load(store_, options_.site, options_.strict_line_breaks); !s.ok()) return s;
  // Fixed and generated pages: rewrite those missing or different from what
  // this build renders (a new layout, a new --site-name).
  StateTxn txn(&state_);
  Commit c;
  c.site = options_.site;
  c.access = PageAccessOf(options_.prefs);
  c.version = state_.version();
  const int64_t now_s = NowUnixMs() / 1000;
  const std::string layout = renderer_.Layout();
  auto had_layout = store_->LayoutFingerprint(options_.site);
  if (!had_layout.ok()) return had_layout.status();
  // A new build may title notes by another rule: before the listings, which show the titles.
  Retitled retitled;
  if (*had_layout != layout) {
    if (Status s = Retitle(&txn, &c, &retitled); !s.ok()) return s;
  }
  AddFixedPages(now_s, &txn, &c);
  // Search learns the new titles like a push's (after AddFixedPages, which rebuilds the outbox).
  if (!retitled.plan.changed.empty()) assembler_.AddNoteEvents(retitled.req, retitled.plan, retitled.change, &c);
  // A new layout (this build renders pages differently): every note page again.
  if (c.pages.empty() && c.deleted_pages.empty() && *had_layout == layout) {
    txn.Committed(c);  // nothing to write: the listings built are those published
    return Status::Ok();
  }
  c.layout_fingerprint = layout;
  if (*had_layout != layout) {
    std::vector<std::string> paths = PublishedNotes(state_.vault());
    if (!paths.empty()) {
      log::Info("layout changed: re-rendering every note page", {{"site", options_.site},
                                                               {"notes", std::to_string(paths.size())}});
    }
    if (Status s = renderer_.RenderInto(paths, now_s, &c); !s.ok()) return s;
    // The pages no render rewrites (attachments, redirects, 410s) take the site's access too.
    if (Status s = RestampStored(&c); !s.ok()) return s;
  }
  c.outbox.push_back({0, OutboxMsg::kKvPut, MetaKey(c.site), std::to_string(c.version), ""});
  bool published = false;
  return CommitAndPublish(&c, &txn, &published);
}

Status SiteWriter::Retitle(StateTxn* txn, Commit* c, Retitled* out) {
  const site::Vault& vault = state_.vault();
  for (const std::string& path : PublishedNotes(vault)) {
    auto text = store_->NoteContent(options_.site, path);
    if (!text.ok()) return text.status();
    const site::NoteMeta* m = vault.Find(path);
    const markdown::Frontmatter fm = markdown::ParseFrontmatter(*text);
    // A build from before `publish: private` stored such notes as public.
    if (markdown::NoteTitle(fm, path) == m->title && fm.private_note == m->private_note) continue;
    out->plan.changed.push_back(out->req.notes.size());
    out->plan.sha.push_back(m->sha256);
    out->req.notes.push_back({path, std::move(*text)});
  }
  if (out->plan.changed.empty()) return Status::Ok();
  // Newer than anything search holds, and a new id for its events.
  c->version = state_.version() + 1;
  FirstPass first = ParseChanged(out->req, out->plan, options_.site, state_.strict_line_breaks(), pool_);
  std::vector<site::NoteMeta> upserts;
  for (size_t k = 0; k < out->plan.changed.size(); ++k) {
    site::NoteMeta m = *vault.Find(out->req.notes[k].path);  // the rest as stored: dates, version, renames
    m.title = first.meta[k].title;
    m.private_note = first.meta[k].frontmatter.private_note;
    upserts.push_back(std::move(m));
  }
  std::vector<NoteRow> rows;
  for (size_t k = 0; k < upserts.size(); ++k) {
    NoteRow row{upserts[k], out->req.notes[k].content, {}, true};
    if (auto w = state_.warnings().find(row.meta.path); w != state_.warnings().end()) row.warnings = w->second;
    rows.push_back(std::move(row));
  }
  // What the title change impacts (the pages linking to them, listings) is
  // every note page and listing, which Start renders at a new layout.
  txn->ApplyNotes(std::move(upserts), {});
  for (auto& row : rows) c->notes.push_back(std::move(row));
  out->change.meta = std::move(first.meta);
  out->change.links = std::move(first.links);
  log::Info("notes retitled by this build's title rule", {{"site", options_.site},
                                                          {"notes", std::to_string(out->plan.changed.size())}});
  return Status::Ok();
}

void SiteWriter::Count(const PushRequest& req, const PushPlan& plan, PushSummary* sum) {
  sum->received = req.notes.size() + req.attachments.size();
  sum->changed = plan.changed.size() + plan.att_upserts.size();
  sum->deleted = plan.deletes.size() + plan.att_deletes.size();
  sum->att_received = req.attachments.size();
  sum->att_changed = plan.att_upserts.size();
  sum->att_deleted = plan.att_deletes.size();
}

void SiteWriter::ChangeSettings(bool strict, StateTxn* txn, Commit* c, VaultChange* change) {
  txn->SetStrictLineBreaks(strict);
  c->strict_line_breaks = strict;
  c->layout_fingerprint = renderer_.Layout();
  for (auto& path : PublishedNotes(state_.vault())) change->impact.render.insert(std::move(path));
  log::Info("strict line breaks changed: re-rendering every note page",
            {{"site", options_.site}, {"strict_line_breaks", strict ? "true" : "false"}});
}

Result<PushSummary> SiteWriter::Push(PushRequest req, const PushKey* key, const std::string& stage) {
  PushSummary sum;
  PhaseLog phase(&sum.phases, &sum.phases_cpu);
  const int64_t now_ms = NowUnixMs(), now_s = now_ms / 1000;
  PushPlan plan = PlanPush(req, state_.vault(), pool_);
  if (Status s = FindRenames(req, state_.vault(), store_, options_.site, &plan); !s.ok()) return s;
  Count(req, plan, &sum);
  phase("hash");
  const std::optional<bool> strict = req.settings.strict_line_breaks;
  sum.settings_changed = strict && *strict != state_.strict_line_breaks();
  sum.strict_line_breaks = strict.value_or(state_.strict_line_breaks());
  if (plan.empty() && !sum.settings_changed) return Unchanged(req, key, stage, std::move(sum), now_ms);

  StateTxn txn(&state_);  // every return before the commit holds undoes the change
  Commit c;
  c.site = options_.site;
  c.access = PageAccessOf(options_.prefs);
  c.version = state_.version() + 1;
  c.drop_stage = stage;
  FirstPass first = ParseChanged(req, plan, options_.site, sum.strict_line_breaks, pool_);
  phase("meta");
  VaultChange change = ApplyToVault(req, plan, std::move(first), now_ms, c.version, &txn);
  if (sum.settings_changed) ChangeSettings(*strict, &txn, &c, &change);
  // Sources of the render pass: pushed notes, plus the stored text of every
  // other note rendered or embedded (transitively) by a rendered note.
  std::map<std::string, std::string> stored;
  Sources sources;
  for (size_t i : plan.changed) sources[req.notes[i].path] = &req.notes[i].content;
  const std::vector<std::string> render(change.impact.render.begin(), change.impact.render.end());
  if (Status s = renderer_.LoadSources(render, &stored, &sources); !s.ok()) return s;
  phase("apply");
  // The pushed notes' pages are the first pass's renders with their links filled in.
  FirstRenders firsts;
  if (change.strict_line_breaks == state_.strict_line_breaks()) {
    for (size_t k = 0; k < plan.changed.size(); ++k) {
      firsts.emplace(req.notes[plan.changed[k]].path, FirstRender{&change.meta[k], &change.links[k]});
    }
  }
  std::vector<Rendered> out = renderer_.RenderNotes(render, sources, c.version, now_s, &firsts);
  sum.rendered = out.size();
  parsed_twice_->Increment(static_cast<double>(
      std::count_if(out.begin(), out.end(), [](const Rendered& r) { return r.parsed_twice; })));
  phase("render");
  assembler_.Assemble(req, plan, &change, &out, sources, now_s, &txn, &c);
  phase("assemble");
  ListingDelta fps;
  const bool every_listing = change.publish_css_toggled;  // every generated page links it or stops
  if (every_listing) Add404Page(now_s, &c);
  sum.listings = listings_.AddChanged(&c, now_s, every_listing, every_listing ? nullptr : &change.dirty, &fps);
  txn.SetListings(/*force=*/false, std::move(fps));
  phase("listings");
  assembler_.AddNoteEvents(req, plan, change, &c);
  c.outbox.push_back({0, OutboxMsg::kKvPut, MetaKey(c.site), std::to_string(c.version), ""});
  // The reply is known before the commit, so that it commits with the push.
  sum.version = c.version;
  std::set<std::string> rewritten;
  for (size_t i : plan.changed) rewritten.insert(req.notes[i].path);
  sum.notes = assembler_.Reports(req, change.warnings, rewritten);
  if (key) c.push_record = PushRecord{key->key, key->body_sha256, RecordedReply(sum), now_ms};

  if (Status s = CommitAndPublish(&c, &txn, &sum.published, &phase); !s.ok()) return s;
  sum.rows = c.rows_written;
  rendered_total_->Increment(static_cast<double>(out.size() + sum.listings));
  related_rerendered_->Increment(static_cast<double>(change.related_renders));
  return sum;
}

Result<PushSummary> SiteWriter::Unchanged(const PushRequest& req, const PushKey* key, const std::string& stage,
                                          PushSummary sum, int64_t now_ms) {
  sum.published = true;
  sum.version = state_.version();
  sum.notes = assembler_.Reports(req, {}, {});
  if (!stage.empty()) {
    if (Status s = store_->DropStage(options_.site, stage); !s.ok()) return s;
  }
  if (key) {
    PushRecord rec{key->key, key->body_sha256, RecordedReply(sum), now_ms};
    if (Status s = store_->RecordPush(options_.site, rec); !s.ok()) return s;
  }
  return sum;
}

Status SiteWriter::CommitAndPublish(Commit* c, StateTxn* txn, bool* published, PhaseLog* phase) {
  if (Status s = CommitChange(store_, c, txn); !s.ok()) return s;
  rows_written_total_->Increment(static_cast<double>(c->rows_written));
  if (phase) (*phase)("commit");
  *published = c->outbox_was_empty ? publisher_.PublishCommitted(*c) : publisher_.PublishPending();
  if (phase) (*phase)("publish");
  return Status::Ok();
}

Result<std::optional<PushRecord>> SiteWriter::FindPush(const std::string& key) {
  return store_->FindPush(options_.site, key);
}

}  // namespace folio::ingest
