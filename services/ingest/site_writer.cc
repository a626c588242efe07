#include "site_writer.h"

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "folio/bus/note_schema.h"
#include "folio/bus/page_schema.h"
#include "folio/core/gzip.h"
#include "folio/core/hash.h"
#include "folio/core/json.h"
#include "folio/core/text.h"
#include "folio/core/log.h"
#include "folio/core/time.h"
#include "folio/http/attachment.h"
#include "folio/http/client.h"
#include "folio/markdown/render.h"
#include "folio/markdown/slug.h"
#include "folio/site/csp.h"
#include "folio/site/layout.h"
#include "folio/site/listings.h"
#include "site_writer_internal.h"

namespace folio::ingest {
namespace {

using internal::kHtml;
using internal::kPageCache;
using internal::MetaKey;

constexpr const char* kAssetCache = "public, max-age=31536000, immutable";
constexpr const char* k404Url = "/_folio/404";
constexpr int64_t kAckTimeoutMs = 10'000;

std::vector<std::string> UniqueTargets(const std::vector<markdown::LinkRef>& links, bool embeds_only) {
  std::vector<std::string> out;
  for (const auto& l : links) {
    if (embeds_only && !l.embed) continue;
    if (std::find(out.begin(), out.end(), l.target) == out.end()) out.push_back(l.target);
  }
  return out;
}

// Content-Type of an attachment, by extension (the table the edge serves
// attachments by); application/octet-stream if unknown, not "": a PUT
// without one would be stored as curl's default for a body,
// application/x-www-form-urlencoded.
std::string ContentTypeOf(std::string_view path) {
  std::string_view t = http::ContentTypeForName(path);
  return t.empty() ? "application/octet-stream" : std::string(t);
}

// Puts each attachment into folio-storage unless it is there already (HEAD
// first, so a known blob is not sent again). kPutThreads requests run at
// once: storage's group commit shares one fsync among concurrent PUTs (a
// push of 3,000 4 KiB images took 2.0 s with one at a time, 1.4 s now).
// The calls block the writer loop until all are done (the push commits
// after them).
// kUnavailable when storage cannot take a blob; the first failure stops the
// remaining uploads.
constexpr size_t kPutThreads = 8;

Status PutBlob(const StorageAccess& storage, const site::AttachmentMeta& meta, const PushAttachment& bytes) {
  const storage_client::Client client = StorageClientFor(storage);
  auto have = client.HeadBlob(meta.sha256, 10'000);
  if (have.ok() && have->status == 200) return Status::Ok();
  auto r = client.PutBlob(meta.sha256, bytes.data, ContentTypeOf(meta.path), 120'000);
  if (!r.ok() || (r->status != 200 && r->status != 201)) {
    Status why = client.Error("attachment storage failed on " + meta.path, r);
    log::Warn("storage refused an attachment", {{"path", meta.path}, {"error", why.message()}});
    if (r.ok() && r->status == 507) {
      return Status::NoSpace("attachment storage is full (" + meta.path +
                             "); nothing was changed, retry the push once it has space");
    }
    return Status::Unavailable(why.message() + "; nothing was changed, retry the push");
  }
  return Status::Ok();
}

Status PutBlobs(const StorageAccess& storage, const std::vector<site::AttachmentMeta>& metas,
                const std::vector<const PushAttachment*>& bytes) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  Status first_error;  // GUARDED_BY(mu)
  auto work = [&] {
    for (size_t k = next++; k < metas.size() && !failed.load(); k = next++) {
      Status s = PutBlob(storage, metas[k], *bytes[k]);
      if (s.ok()) continue;
      std::lock_guard<std::mutex> lock(mu);
      if (!failed.exchange(true)) first_error = std::move(s);
    }
  };
  std::vector<std::thread> threads;
  for (size_t t = 1; t < std::min(kPutThreads, metas.size()); ++t) threads.emplace_back(work);
  work();
  for (std::thread& t : threads) t.join();
  return failed.load() ? first_error : Status::Ok();
}

}  // namespace

SiteWriter::SiteWriter(SiteOptions options, Store* store, ThreadPool* pool, metrics::Registry* registry)
    : options_(std::move(options)), store_(store), pool_(pool) {
  metrics::Labels l{{"site", options_.site}};
  rendered_total_ = &registry->NewCounter("folio_ingest_pages_rendered_total", "Pages rendered", l);
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
  return info;
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
  AddPage(&c, site::StyleSheetUrl(), 200, "text/css; charset=utf-8", kAssetCache, site::PageCsp(), site::StyleSheet(),
          now_s);
  AddPage(&c, k404Url, 404, kHtml, "no-store", site::PageCsp(), site::Assemble404Page(options_.site_name), now_s);
  std::map<std::string, std::pair<uint64_t, uint16_t>> fps;
  AddChangedListings(&c, now_s, /*force=*/true, nullptr, &fps);
  listing_fp_ = std::move(fps);
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
  std::vector<std::string> gone;
  for (const auto& url : c.deleted_pages) gone.push_back(url);
  // A new layout (this build renders pages differently): every note page again.
  std::string layout = site::LayoutFingerprint(options_.site_name);
  auto had_layout = store_->LayoutFingerprint(options_.site);
  if (!had_layout.ok()) return had_layout.status();
  std::vector<Rendered> rerendered;
  if (*had_layout != layout) {
    std::vector<std::string> paths;
    for (const auto& [path, note] : vault_.notes()) {
      if (note.published) paths.push_back(path);
    }
    if (!paths.empty()) {
      std::map<std::string, std::string> stored;
      Sources sources;
      if (Status s = LoadSources(paths, &stored, &sources); !s.ok()) return s;
      rerendered = RenderNotes(paths, sources, version_, now_s);
      log::Info("layout changed: re-rendering every note page", {{"site", options_.site},
                                                               {"notes", std::to_string(paths.size())}});
    }
  }
  if (stale.empty() && gone.empty() && *had_layout == layout) return Status::Ok();
  c.layout_fingerprint = layout;
  c.pages = std::move(stale);
  c.outbox.clear();

  for (const auto& url : gone) c.outbox.push_back({0, OutboxMsg::kKvDelete, bus::PageKey(c.site, url), "", ""});
  for (const auto& p : c.pages) c.outbox.push_back({0, OutboxMsg::kKvPut, bus::PageKey(c.site, p.url), p.record, ""});
  if (!rerendered.empty()) {
    std::map<std::string, std::vector<std::string>> warnings;  // unchanged by the layout; not stored
    AddRendered(&c, &rerendered, &warnings);
  }
  c.outbox.push_back({0, OutboxMsg::kKvPut, MetaKey(c.site), std::to_string(version_), ""});
  return store_->Apply(&c);
}

void SiteWriter::AddPage(Commit* c, std::string url, uint16_t status, std::string content_type,
                         std::string cache_control, std::string_view csp, std::string body, int64_t last_modified_s,
                         std::string location) {
  bus::PageRecord r;
  r.status = status;
  r.content_type = std::move(content_type);
  r.cache_control = std::move(cache_control);
  r.csp = std::string(csp);
  r.location = std::move(location);
  r.etag = "\"" + Sha256Hex(body).substr(0, 20) + "\"";
  r.last_modified_s = last_modified_s;
  r.version = c->version;
  r.body_gzip = GzipCompress(body);
  std::string rec = bus::EncodePageRecord(r);
  c->outbox.push_back({0, OutboxMsg::kKvPut, bus::PageKey(c->site, url), rec, ""});
  c->pages.push_back({std::move(url), std::move(rec)});
}

size_t SiteWriter::AddChangedListings(Commit* c, int64_t now_s, bool force, const site::ListingFilter* only,
                                      std::map<std::string, std::pair<uint64_t, uint16_t>>* next) {
  auto pages = site::BuildListings(vault_, Info(), {}, only);
  *next = force ? std::map<std::string, std::pair<uint64_t, uint16_t>>{} : listing_fp_;
  size_t n = 0;
  std::set<std::string> note_urls;
  for (const auto& p : c->pages) note_urls.insert(p.url);
  for (const auto& [url, g] : pages) {
    (*next)[url] = {g.fingerprint, g.status};
    auto old = listing_fp_.find(url);
    if (!force && old != listing_fp_.end() && old->second.first == g.fingerprint) continue;
    if (note_urls.count(url)) continue;  // a note took this URL in this very push
    const char* cache = g.status == 301 ? "public, max-age=300" : kPageCache;
    AddPage(c, url, g.status, g.content_type, cache, site::PageCsp(), g.Render(), now_s, g.location);
    ++n;
  }
  // Generated pages of the rebuilt categories that no longer exist (a tag
  // nobody uses, a folder emptied), unless a note now has the URL.
  for (const auto& [url, fp] : listing_fp_) {
    if (pages.count(url) || note_urls.count(url)) continue;
    if (only && !only->Covers(url, fp.second)) continue;
    next->erase(url);
    if (vault_.UrlOwner(url)) continue;  // now a note's URL: its page replaces the listing
    c->deleted_pages.push_back(url);
    c->outbox.push_back({0, OutboxMsg::kKvDelete, bus::PageKey(c->site, url), "", ""});
    ++n;
  }
  return n;
}

namespace {

// What a note looked like to listings before a change.
struct ListedAs {
  bool present = false;  // published
  std::string title, url, day, dir;
  std::vector<std::string> tags, aliases;
  int64_t updated_ms = 0;
};

ListedAs ListedNow(const site::Vault& v, std::string_view path) {
  ListedAs l;
  const site::NoteMeta* n = v.Find(path);
  if (!n || !n->published) return l;
  l.present = true;
  l.title = n->title;
  l.url = n->url;
  l.day = site::DayOf(n->updated_ms);
  l.dir = PathDir(n->path);
  l.tags = n->tags;
  l.aliases = n->aliases;
  l.updated_ms = n->updated_ms;
  return l;
}

void AddTagPrefixes(const std::vector<std::string>& tags, std::set<std::string, std::less<>>* out) {
  for (const auto& t : tags) {
    for (size_t slash = 0;; ++slash) {
      slash = t.find('/', slash);
      out->insert(AsciiLower(t.substr(0, slash)));
      if (slash == std::string::npos) break;
    }
  }
}

void AddFolderAndAncestors(const std::string& dir, bool ancestors, std::set<std::string, std::less<>>* out) {
  if (dir.empty()) return;
  out->insert(dir);
  for (size_t slash = dir.rfind('/'); ancestors && slash != std::string::npos; slash = dir.rfind('/', slash - 1)) {
    out->insert(dir.substr(0, slash));
    if (slash == 0) break;
  }
}

// The listings a note's change can alter (OBSIDIAN/README "Incremental").
void MarkDirty(const ListedAs& before, const ListedAs& after, site::ListingFilter* f) {
  bool presence = before.present != after.present;
  bool shown = presence || before.title != after.title || before.url != after.url || before.day != after.day;
  if (!presence && !shown && before.updated_ms == after.updated_ms && before.tags == after.tags &&
      before.aliases == after.aliases) {
    return;
  }
  if (presence || before.updated_ms != after.updated_ms || shown) f->recent = f->rss = true;
  if (shown) {
    f->home = true;
    f->sitemap = true;
    AddFolderAndAncestors(before.dir, presence, &f->folders);
    AddFolderAndAncestors(after.dir, presence, &f->folders);
    AddTagPrefixes(before.tags, &f->tags);
    AddTagPrefixes(after.tags, &f->tags);
  }
  if (before.tags != after.tags || (presence && (!before.tags.empty() || !after.tags.empty()))) {
    f->tags_index = true;
    AddTagPrefixes(before.tags, &f->tags);
    AddTagPrefixes(after.tags, &f->tags);
  }
  if (presence || before.url != after.url || before.aliases != after.aliases) f->aliases = true;
}

}  // namespace

Result<PushSummary> SiteWriter::Push(PushRequest req, const PushRecord* key) {
  PushSummary sum;
  bool committed_record = false;
  int64_t phase_start = MonotonicUs();
  auto phase = [&](const char* name) {
    int64_t now = MonotonicUs();
    sum.phases += std::string(sum.phases.empty() ? "" : " ") + name + "=" + std::to_string((now - phase_start) / 1000);
    phase_start = now;
  };
  sum.received = req.notes.size() + req.attachments.size();
  const size_t n = req.notes.size();
  const int64_t now_ms = NowUnixMs();
  const int64_t next_version = version_ + 1;

  // Pass 0: hashes decide what changed; unchanged notes are never rendered.
  std::vector<std::string> sha(n);
  pool_->ParallelFor(n, [&](size_t i) { sha[i] = Sha256Hex(req.notes[i].content); });
  std::vector<size_t> changed;
  for (size_t i = 0; i < n; ++i) {
    const site::NoteMeta* old = vault_.Find(req.notes[i].path);
    if (!old || old->sha256 != sha[i]) changed.push_back(i);
  }
  std::vector<std::string> deletes;
  for (auto& d : req.deletes) {
    if (vault_.Find(d)) deletes.push_back(std::move(d));
  }
  // Attachments: new or changed bytes, and removals.
  std::vector<site::AttachmentMeta> att_upserts;
  std::vector<const PushAttachment*> att_bytes;
  for (const auto& a : req.attachments) {
    std::string h = Sha256Hex(a.data);
    const site::AttachmentMeta* old = vault_.FindAttachment(a.path);
    if (old && old->sha256 == h) continue;
    att_upserts.push_back({a.path, h, ""});
    att_bytes.push_back(&a);
  }
  std::vector<std::string> att_deletes;
  for (const auto& d : req.delete_attachments) {
    if (vault_.FindAttachment(d)) att_deletes.push_back(d);
  }
  // Storage first: a committed page never references a blob storage lacks.
  if (!options_.storage.url.empty() && !att_upserts.empty()) {
    if (Status s = PutBlobs(options_.storage, att_upserts, att_bytes); !s.ok()) return s;
  }
  phase("hash");
  sum.changed = changed.size() + att_upserts.size();
  sum.deleted = deletes.size() + att_deletes.size();

  std::map<std::string, std::vector<std::string>> warnings;  // per path, this push
  if (!changed.empty() || !deletes.empty() || !att_upserts.empty() || !att_deletes.empty()) {
    std::vector<std::string> unused_asset_urls;
    std::set<std::string> attachment_users =
        vault_.ApplyAttachments(att_upserts, att_deletes, &unused_asset_urls);
    // Pass 1: metadata and link targets of changed notes (no resolution yet).
    std::vector<markdown::RenderResult> meta(changed.size());
    pool_->ParallelFor(changed.size(), [&](size_t k) {
      const PushNote& note = req.notes[changed[k]];
      meta[k] = markdown::RenderNote(note.content, note.path, {});
    });
    std::vector<site::NoteMeta> upserts;
    std::map<std::string, const markdown::RenderResult*> meta_of;
    for (size_t k = 0; k < changed.size(); ++k) {
      site::NoteMeta m;
      m.path = req.notes[changed[k]].path;
      m.sha256 = sha[changed[k]];
      m.title = meta[k].title;
      m.targets = UniqueTargets(meta[k].links, false);
      m.embeds = UniqueTargets(meta[k].links, true);
      m.aliases = meta[k].frontmatter.aliases;
      m.tags = meta[k].tags;
      m.permalink = meta[k].frontmatter.permalink;
      m.published = meta[k].frontmatter.publish;
      for (const auto& h : meta[k].headings) m.anchors.push_back(h.id);
      for (const auto& b : meta[k].block_ids) m.anchors.push_back("^" + AsciiLower(b));
      m.updated_ms = now_ms;
      m.version = next_version;
      meta_of[m.path] = &meta[k];
      upserts.push_back(std::move(m));
    }
    std::vector<std::string> old_urls;
    std::vector<bool> old_published;
    for (const auto& d : deletes) {
      old_urls.push_back(vault_.Find(d)->url);
      old_published.push_back(vault_.Find(d)->published);
    }

    phase("meta");
    std::vector<std::string> touched;
    for (const auto& u : upserts) touched.push_back(u.path);
    touched.insert(touched.end(), deletes.begin(), deletes.end());
    RelatedBefore related_before = CaptureRelatedBefore(touched);
    std::vector<std::pair<std::string, ListedAs>> listed_before;
    for (const auto& u : upserts) listed_before.push_back({u.path, ListedNow(vault_, u.path)});
    for (const auto& d : deletes) listed_before.push_back({d, ListedNow(vault_, d)});
    site::Impact impact = vault_.Apply(std::move(upserts), deletes);
    site::ListingFilter dirty;
    for (const auto& [path, before] : listed_before) MarkDirty(before, ListedNow(vault_, path), &dirty);
    for (const auto& p : attachment_users) {
      const site::NoteMeta* m = vault_.Find(p);
      if (m && m->published) impact.render.insert(p);
    }
    for (auto& [path, w] : impact.url_warnings) {
      if (!w.empty()) warnings[path] = w;
    }

    const size_t related_renders = AddRelatedImpact(related_before, &impact.render);

    // Sources for pass 2: pushed notes, plus stored text of every other note
    // rendered or embedded (transitively) by a rendered note.
    std::map<std::string, std::string> stored;
    Sources sources;
    for (size_t i : changed) sources[req.notes[i].path] = &req.notes[i].content;
    std::vector<std::string> render(impact.render.begin(), impact.render.end());
    if (Status s = LoadSources(render, &stored, &sources); !s.ok()) {
      ReloadState();
      return s;
    }

    phase("apply");
    // Pass 2: full pages for exactly the affected notes.
    const int64_t now_s = now_ms / 1000;
    std::vector<Rendered> out = RenderNotes(render, sources, next_version, now_s);

    phase("render");
    Commit c;
    c.site = options_.site;
    c.version = next_version;
    std::set<std::string> pushed_paths;
    for (size_t i : changed) pushed_paths.insert(req.notes[i].path);
    AddRendered(&c, &out, &warnings);
    // Rows for every changed note (unpublished ones too: the manifest lists
    // them) and the new warnings of re-rendered ones.
    for (const auto& [path, m] : vault_.notes()) {
      bool pushed = pushed_paths.count(path) > 0;
      auto w = warnings.find(path);
      if (!pushed && w == warnings.end()) continue;
      NoteRow row;
      row.meta = m;
      row.content_changed = pushed;
      if (pushed) row.content = *sources[path];
      if (w != warnings.end()) {
        for (size_t i = 0; i < w->second.size(); ++i) row.warnings += (i ? "\n" : "") + w->second[i];
      }
      c.notes.push_back(std::move(row));
    }
    // Pages a note left: a 301 where it moved (new permalink), else deleted.
    std::set<std::string> taken;
    for (const auto& p : c.pages) taken.insert(p.url);
    for (const auto& [from, to] : impact.moved) {
      if (taken.count(from)) continue;
      AddPage(&c, from, 301, kHtml, "public, max-age=300", site::PageCsp(), site::AssembleRedirectPage(to), now_s, to);
    }
    for (const auto& url : impact.deleted_urls) {
      if (taken.count(url) || impact.moved.count(url)) continue;
      c.deleted_pages.push_back(url);
      c.outbox.insert(c.outbox.begin(), {0, OutboxMsg::kKvDelete, bus::PageKey(c.site, url), "", ""});
    }
    for (const auto& d : deletes) {
      c.deleted_notes.push_back(d);
      if (related_.Set(d, {})) c.related.push_back({d, {}});  // search drops it too
    }
    // Assets: immutable, content-addressed URLs; an old URL goes once unused.
    for (size_t k = 0; k < att_upserts.size(); ++k) {
      const site::AttachmentMeta* m = vault_.FindAttachment(att_upserts[k].path);
      if (!options_.storage.url.empty()) {
        c.attachments.push_back({*m, ""});  // the bytes live in storage; edges fetch them from there
        continue;
      }
      if (!taken.count(m->url)) {
        AddPage(&c, m->url, 200, ContentTypeOf(m->path), kAssetCache, std::string(http::kUntrustedCsp), att_bytes[k]->data, now_s);
        taken.insert(m->url);
      }
      c.attachments.push_back({*m, att_bytes[k]->data});
    }
    for (const auto& url : unused_asset_urls) {
      if (taken.count(url)) continue;
      c.deleted_pages.push_back(url);
      c.outbox.push_back({0, OutboxMsg::kKvDelete, bus::PageKey(c.site, url), "", ""});
    }
    c.deleted_attachments = att_deletes;
    std::map<std::string, std::pair<uint64_t, uint16_t>> fps;
    phase("assemble");
    sum.listings = AddChangedListings(&c, now_s, false, &dirty, &fps);
    phase("listings");
    // Note events for search: changed and deleted notes (unpublished = deleted for readers).
    for (size_t k = 0; k < changed.size(); ++k) {
      const PushNote& pn = req.notes[changed[k]];
      const site::NoteMeta* note = vault_.Find(pn.path);
      const markdown::RenderResult* m = meta_of[pn.path];
      bus::NoteEvent e{c.site, pn.path, note->url, next_version, !note->published, note->title, m->tags,
                       note->published ? m->text : "", {}};
      if (note->published) {
        for (const markdown::Heading& h : m->headings) {
          e.sections.push_back({h.text, h.id, static_cast<uint32_t>(std::min<size_t>(h.text_offset, m->text.size()))});
        }
      }
      c.outbox.push_back({0, OutboxMsg::kStream, bus::NotesSubject(c.site), bus::EncodeNoteEvent(e),
                          c.site + ":" + pn.path + ":" + std::to_string(next_version)});
    }
    for (size_t k = 0; k < deletes.size(); ++k) {
      bus::NoteEvent e{c.site, deletes[k], old_urls[k], next_version, true, "", {}, "", {}};
      c.outbox.push_back({0, OutboxMsg::kStream, bus::NotesSubject(c.site), bus::EncodeNoteEvent(e),
                          c.site + ":" + deletes[k] + ":" + std::to_string(next_version)});
    }
    c.outbox.push_back({0, OutboxMsg::kKvPut, MetaKey(c.site), std::to_string(next_version), ""});
    // The reply is known before the commit, so that it commits with the push.
    sum.version = next_version;
    sum.rendered = out.size();
    sum.notes_json = NotesJson(req, warnings, pushed_paths);
    if (key) {
      c.push_record = PushRecord{key->key, key->body_sha256, PushReplyFields(sum), now_ms};
      committed_record = true;
    }

    if (Status s = store_->Apply(&c); !s.ok()) {
      ReloadState();  // the in-memory vault already moved
      if (s.code() == Code::kNoSpace) {
        log::Error("push not committed: the disk is full", {{"site", options_.site}, {"error", s.message()}});
        return Status::NoSpace("ingest's disk is full: the push was not applied and nothing was changed; "
                               "retry once space returns");
      }
      return s;
    }
    phase("commit");
    listing_fp_ = std::move(fps);
    version_ = next_version;
    sum.rendered = out.size();
    rendered_total_->Increment(static_cast<double>(out.size() + sum.listings));
    related_rerendered_->Increment(static_cast<double>(related_renders));
    sum.published = PublishPending();
    phase("publish");
  } else {
    sum.published = true;
  }
  sum.version = version_;

  if (sum.notes_json.empty()) sum.notes_json = NotesJson(req, warnings, {});
  if (key && !committed_record) {  // nothing changed: recorded on its own
    PushRecord rec{key->key, key->body_sha256, PushReplyFields(sum), now_ms};
    if (Status s = store_->RecordPush(options_.site, rec); !s.ok()) return s;
  }
  return sum;
}

std::string SiteWriter::NotesJson(const PushRequest& req,
                                  const std::map<std::string, std::vector<std::string>>& warnings,
                                  const std::set<std::string>& rewritten) const {
  JsonWriter w;
  w.BeginArray();
  for (const auto& note : req.notes) {
    const site::NoteMeta* m = vault_.Find(note.path);
    w.BeginObject().Key("path").String(note.path).Key("url").String(m ? m->url : "");
    if (m && !m->published) w.Key("published").Bool(false);
    w.Key("warnings").BeginArray();
    auto it = warnings.find(note.path);
    if (it != warnings.end()) {
      for (const auto& s : it->second) w.String(s);
    } else if (rewritten.count(note.path)) {
      // its row is rewritten with no warnings
    } else if (auto stored = store_->NoteWarnings(options_.site, note.path); stored.ok() && !stored->empty()) {
      std::string_view rest = *stored;
      while (!rest.empty()) {
        size_t nl = rest.find('\n');
        w.String(rest.substr(0, nl));
        if (nl == std::string_view::npos) break;
        rest.remove_prefix(nl + 1);
      }
    }
    w.EndArray().EndObject();
  }
  for (const auto& a : req.attachments) {
    const site::AttachmentMeta* m = vault_.FindAttachment(a.path);
    w.BeginObject().Key("path").String(a.path).Key("url").String(m ? m->url : "").Key("attachment").Bool(true);
    w.Key("warnings").BeginArray().EndArray().EndObject();
  }
  // Notes re-rendered by this push without being in it (their links now
  // resolve elsewhere, say): their warnings changed, so report them too.
  // A client pushing in batches lets the latest report for a path win.
  std::set<std::string_view> pushed;
  for (const auto& note : req.notes) pushed.insert(note.path);
  for (const auto& [path, list] : warnings) {
    if (pushed.count(path)) continue;
    const site::NoteMeta* m = vault_.Find(path);
    if (!m) continue;
    w.BeginObject().Key("path").String(path).Key("url").String(m->url).Key("rerendered").Bool(true);
    w.Key("warnings").BeginArray();
    for (const auto& s : list) w.String(s);
    w.EndArray().EndObject();
  }
  w.EndArray();
  return w.Take();
}

Result<std::optional<PushRecord>> SiteWriter::FindPush(const std::string& key) {
  return store_->FindPush(options_.site, key);
}

std::string PushReplyFields(const PushSummary& sum) {
  return "\"version\":" + std::to_string(sum.version) + ",\"received\":" + std::to_string(sum.received) +
         ",\"changed\":" + std::to_string(sum.changed) + ",\"rendered\":" + std::to_string(sum.rendered) +
         ",\"listings\":" + std::to_string(sum.listings) + ",\"deleted\":" + std::to_string(sum.deleted) +
         ",\"notes\":" + sum.notes_json;
}

bool SiteWriter::PublishPending() {
  auto size = store_->OutboxSize();
  if (size.ok()) outbox_pending_->Set(static_cast<double>(*size));
  if (!bus_ || !bus_->connected()) return size.ok() && *size == 0;
  for (;;) {
    auto msgs = store_->PendingOutbox(4096);
    if (!msgs.ok()) {
      log::Error("outbox read failed", {{"error", msgs.status().message()}});
      return false;
    }
    if (msgs->empty()) {
      outbox_pending_->Set(0);
      return true;
    }
    for (const auto& m : *msgs) {
      Status s;
      switch (m.kind) {
        case OutboxMsg::kKvPut: s = bus_->KvPutAsync(bus::kPagesBucket, m.subject, m.payload); break;
        case OutboxMsg::kKvDelete: s = bus_->KvDeleteAsync(bus::kPagesBucket, m.subject); break;
        default: s = bus_->PublishAsync(m.subject, m.payload, m.msg_id); break;
      }
      if (s.code() == Code::kTooLarge) {
        // Permanent: retrying would wedge the outbox. The push that made it
        // already warned the author (kMaxPublishedPage); skip it.
        log::Error("page too large for the bus; not published", {{"subject", m.subject}, {"error", s.message()}});
        publish_failures_->Increment();
        continue;
      }
      if (!s.ok()) {
        log::Warn("publish failed; will retry", {{"subject", m.subject}, {"error", s.message()}});
        publish_failures_->Increment();
        (void)bus_->WaitForAcks(kAckTimeoutMs);
        return false;
      }
    }
    if (Status s = bus_->WaitForAcks(kAckTimeoutMs); !s.ok()) {
      log::Warn("publish not acknowledged; will retry", {{"error", s.message()}});
      publish_failures_->Increment();
      return false;
    }
    if (Status s = store_->AckOutbox(msgs->back().seq); !s.ok()) {
      log::Error("outbox ack failed", {{"error", s.message()}});
      return false;
    }
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

std::string SiteWriter::ManifestJson(const PushLimits& limits) const {
  JsonWriter w;
  w.BeginObject().Key("version").Int(version_);
  w.Key("limits").BeginObject();
  w.Key("max_note_bytes").Int(static_cast<int64_t>(limits.max_note_bytes));
  w.Key("max_attachment_bytes").Int(static_cast<int64_t>(limits.max_attachment_bytes));
  w.EndObject();
  w.Key("notes").BeginArray();
  for (const auto& [path, n] : vault_.notes()) {
    w.BeginObject().Key("path").String(path).Key("sha256").String(n.sha256).Key("url").String(n.url).EndObject();
  }
  w.EndArray().Key("attachments").BeginArray();
  for (const auto& [path, a] : vault_.attachments()) {
    w.BeginObject().Key("path").String(path).Key("sha256").String(a.sha256).Key("url").String(a.url).EndObject();
  }
  w.EndArray().EndObject();
  return w.Take();
}

}  // namespace folio::ingest
