#include "site_writer.h"

#include <algorithm>
#include <map>
#include <set>

#include "folio/bus/schema.h"
#include "folio/core/gzip.h"
#include "folio/core/hash.h"
#include "folio/core/json.h"
#include "folio/core/log.h"
#include "folio/core/time.h"
#include "folio/markdown/render.h"
#include "folio/site/layout.h"

namespace folio::ingest {
namespace {

constexpr const char* kHtml = "text/html; charset=utf-8";
constexpr const char* kPageCache = "public, max-age=0, must-revalidate";
constexpr const char* kAssetCache = "public, max-age=31536000, immutable";
constexpr const char* k404Url = "/_folio/404";
constexpr int64_t kAckTimeoutMs = 10'000;
// NATS's default max payload is 1 MiB; keep room for headers and the subject.
constexpr size_t kMaxPublishedPage = (1u << 20) - 8192;
// A page lists at most this many backlinks (a hub note can have thousands).
constexpr size_t kMaxBacklinks = 500;

std::string MetaKey(std::string_view site) { return "_meta." + std::string(site); }

// Resolves links of one note against the vault during rendering.
class VaultResolver : public markdown::LinkResolver {
 public:
  VaultResolver(const site::Vault& v, std::string_view from, std::vector<std::string>* warnings)
      : vault_(v), from_(from), warnings_(warnings) {}
  std::optional<std::string> Resolve(std::string_view target) override {
    auto r = vault_.Resolve(target, from_);
    if (!r) return std::nullopt;
    if (r->ambiguous) {
      warnings_->push_back("ambiguous link [[" + std::string(target) + "]]: several notes match; linked to " + r->path);
    }
    const site::NoteMeta* n = vault_.Find(r->path);
    return n ? std::optional<std::string>(n->url) : std::nullopt;
  }

 private:
  const site::Vault& vault_;
  std::string_view from_;
  std::vector<std::string>* warnings_;
};

std::string Day(int64_t unix_ms) { return Iso8601Ms(unix_ms).substr(0, 10); }

std::string Summary(std::string_view text, size_t max = 200) {
  std::string s;
  for (char c : text) {
    if (s.size() >= max) break;
    s += (c == '\n' || c == '\t') ? ' ' : c;
  }
  // Do not cut a UTF-8 sequence in half.
  while (!s.empty() && (static_cast<unsigned char>(s.back()) & 0xC0) == 0x80) s.pop_back();
  if (!s.empty() && static_cast<unsigned char>(s.back()) >= 0xC0) s.pop_back();
  return s;
}

std::vector<std::string> UniqueTargets(const std::vector<markdown::LinkRef>& links) {
  std::vector<std::string> out;
  for (const auto& l : links) {
    if (std::find(out.begin(), out.end(), l.target) == out.end()) out.push_back(l.target);
  }
  return out;
}

}  // namespace

// One page produced by pass 2.
struct SiteWriter::Rendered {
  std::string path;
  std::vector<std::string> warnings;
  std::string record;
};

SiteWriter::SiteWriter(SiteOptions options, Store* store, ThreadPool* pool, metrics::Registry* registry)
    : options_(std::move(options)), store_(store), pool_(pool) {
  metrics::Labels l{{"site", options_.site}};
  rendered_total_ = &registry->NewCounter("folio_ingest_pages_rendered_total", "Pages rendered", l);
  publish_failures_ = &registry->NewCounter("folio_ingest_publish_failures_total", "Failed outbox publish rounds", l);
  outbox_pending_ = &registry->NewGauge("folio_ingest_outbox_pending", "Committed messages not yet acknowledged", l);
}

Status SiteWriter::Start() {
  auto v = store_->Version(options_.site);
  if (!v.ok()) return v.status();
  version_ = *v;
  if (Status s = store_->LoadVault(options_.site, &vault_); !s.ok()) return s;

  // Fixed pages: rewrite them when missing or different (e.g. a new build).
  Commit c;
  c.site = options_.site;
  c.version = version_;
  int64_t now_s = NowUnixMs() / 1000;
  AddPage(&c, site::StyleSheetUrl(), 200, "text/css; charset=utf-8", kAssetCache, site::StyleSheet(), now_s);
  AddPage(&c, k404Url, 404, kHtml, "no-store", site::Assemble404Page(options_.site_name), now_s);
  if (!vault_.HasIndexNote()) AddPage(&c, "/", 200, kHtml, kPageCache, RenderHome(), now_s);
  std::vector<PageRow> stale;
  for (auto& p : c.pages) {
    auto have = store_->PageRecord(options_.site, p.url);
    bus::PageRecord a, b;
    if (have.ok() && bus::DecodePageRecord(*have, &a).ok() && bus::DecodePageRecord(p.record, &b).ok() &&
        a.etag == b.etag && a.status == b.status) {
      continue;
    }
    stale.push_back(std::move(p));
  }
  if (stale.empty()) return Status::Ok();
  c.pages = std::move(stale);
  c.outbox.clear();
  for (const auto& p : c.pages) c.outbox.push_back({0, OutboxMsg::kKvPut, bus::PageKey(c.site, p.url), p.record, ""});
  c.outbox.push_back({0, OutboxMsg::kKvPut, MetaKey(c.site), std::to_string(version_), ""});
  return store_->Apply(&c);
}

void SiteWriter::AddPage(Commit* c, std::string url, uint16_t status, std::string content_type,
                         std::string cache_control, std::string body, int64_t last_modified_s) {
  bus::PageRecord r;
  r.status = status;
  r.content_type = std::move(content_type);
  r.cache_control = std::move(cache_control);
  r.etag = "\"" + Sha256Hex(body).substr(0, 20) + "\"";
  r.last_modified_s = last_modified_s;
  r.version = c->version;
  r.body_gzip = GzipCompress(body);
  std::string rec = bus::EncodePageRecord(r);
  c->outbox.push_back({0, OutboxMsg::kKvPut, bus::PageKey(c->site, url), rec, ""});
  c->pages.push_back({std::move(url), std::move(rec)});
}

std::string SiteWriter::RenderHome() {
  std::vector<site::LinkItem> items;
  for (const auto& [path, n] : vault_.notes()) items.push_back({n.title, n.url});
  std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    return a.title != b.title ? a.title < b.title : a.url < b.url;
  });
  size_t total = items.size();
  if (items.size() > options_.home_listing_limit) items.resize(options_.home_listing_limit);
  return site::AssembleHomePage(options_.site_name, items, total);
}

Result<PushSummary> SiteWriter::Push(PushRequest req) {
  PushSummary sum;
  sum.received = req.notes.size();
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
  sum.changed = changed.size();
  sum.deleted = deletes.size();

  std::map<std::string, std::vector<std::string>> warnings;  // per pushed path, this push
  if (!changed.empty() || !deletes.empty()) {
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
      m.targets = UniqueTargets(meta[k].links);
      m.aliases = meta[k].frontmatter.aliases;
      m.updated_ms = now_ms;
      m.version = next_version;
      meta_of[m.path] = &meta[k];
      upserts.push_back(std::move(m));
    }
    std::vector<std::string> old_urls;
    for (const auto& d : deletes) old_urls.push_back(vault_.Find(d)->url);

    site::Impact impact = vault_.Apply(std::move(upserts), deletes);
    for (auto& [path, w] : impact.url_warnings) warnings[path] = w;

    // Pass 2: full pages for exactly the affected notes.
    std::map<std::string, const std::string*> pushed_content;
    for (size_t i : changed) pushed_content[req.notes[i].path] = &req.notes[i].content;
    std::vector<std::string> render(impact.render.begin(), impact.render.end());
    std::vector<std::string> stored(render.size());
    for (size_t k = 0; k < render.size(); ++k) {
      if (pushed_content.count(render[k])) continue;
      auto c = store_->NoteContent(options_.site, render[k]);
      if (!c.ok()) return c.status();
      stored[k] = std::move(*c);
    }
    std::vector<Rendered> out(render.size());
    const int64_t now_s = now_ms / 1000;
    pool_->ParallelFor(render.size(), [&](size_t k) {
      const std::string& path = render[k];
      auto pc = pushed_content.find(path);
      const std::string& content = pc != pushed_content.end() ? *pc->second : stored[k];
      const site::NoteMeta* note = vault_.Find(path);
      Rendered& r = out[k];
      r.path = path;
      VaultResolver resolver(vault_, path, &r.warnings);
      markdown::RenderOptions opts;
      opts.resolver = &resolver;
      markdown::RenderResult res = markdown::RenderNote(content, path, opts);
      for (auto& w : res.warnings) r.warnings.push_back(std::move(w));
      if (!res.frontmatter.error.empty()) r.warnings.push_back(res.frontmatter.error);
      site::NotePage page;
      page.site_name = options_.site_name;
      page.title = note->title;
      page.body_html = std::move(res.html);
      page.description = res.frontmatter.description.empty() ? Summary(res.text) : res.frontmatter.description;
      page.updated = Day(note->updated_ms);
      for (const auto& b : vault_.Backlinks(path)) {
        const site::NoteMeta* src = vault_.Find(b);
        page.backlinks.push_back({src->title, src->url});
      }
      page.backlinks_total = page.backlinks.size();
      auto by_title = [](const auto& a, const auto& b) { return a.title != b.title ? a.title < b.title : a.url < b.url; };
      if (page.backlinks.size() > kMaxBacklinks) {
        std::partial_sort(page.backlinks.begin(), page.backlinks.begin() + kMaxBacklinks, page.backlinks.end(), by_title);
        page.backlinks.resize(kMaxBacklinks);
      } else {
        std::sort(page.backlinks.begin(), page.backlinks.end(), by_title);
      }
      std::string html = site::AssembleNotePage(page);
      thread_local GzipCompressor gz;
      bus::PageRecord rec;
      rec.status = 200;
      rec.content_type = kHtml;
      rec.cache_control = kPageCache;
      rec.etag = "\"" + Sha256Hex(html).substr(0, 20) + "\"";
      rec.last_modified_s = now_s;
      rec.version = next_version;
      gz.Compress(html, &rec.body_gzip);
      r.record = bus::EncodePageRecord(rec);
      if (r.record.size() > kMaxPublishedPage) {
        r.warnings.push_back("the page is " + std::to_string(r.record.size()) +
                             " bytes compressed, over the bus limit of " + std::to_string(kMaxPublishedPage) +
                             "; it is stored but cannot be served: split the note");
      }
    });

    Commit c;
    c.site = options_.site;
    c.version = next_version;
    // Deletions first so a note re-created at the same URL ends up present.
    for (size_t k = 0; k < deletes.size(); ++k) {
      c.deleted_notes.push_back(deletes[k]);
      bool home_regenerated = old_urls[k] == "/" && !vault_.HasIndexNote();
      if (home_regenerated) continue;
      c.deleted_pages.push_back(old_urls[k]);
      c.outbox.push_back({0, OutboxMsg::kKvDelete, bus::PageKey(c.site, old_urls[k]), "", ""});
    }
    for (auto& r : out) {
      const site::NoteMeta* note = vault_.Find(r.path);
      auto& w = warnings[r.path];  // created even when empty: "no warnings now" is news
      w.insert(w.end(), r.warnings.begin(), r.warnings.end());
      NoteRow row;
      row.meta = *note;
      row.content_changed = pushed_content.count(r.path) > 0;
      if (row.content_changed) row.content = *pushed_content[r.path];
      for (size_t i = 0; i < w.size(); ++i) row.warnings += (i ? "\n" : "") + w[i];
      c.notes.push_back(std::move(row));
      c.outbox.push_back({0, OutboxMsg::kKvPut, bus::PageKey(c.site, note->url), r.record, ""});
      c.pages.push_back({note->url, std::move(r.record)});
    }
    if (impact.home_changed && !vault_.HasIndexNote()) {
      AddPage(&c, "/", 200, kHtml, kPageCache, RenderHome(), now_s);
    }
    // Note events for search: changed and deleted notes.
    for (size_t k = 0; k < changed.size(); ++k) {
      const PushNote& pn = req.notes[changed[k]];
      const site::NoteMeta* note = vault_.Find(pn.path);
      const markdown::RenderResult* m = meta_of[pn.path];
      bus::NoteEvent e{c.site, pn.path, note->url, next_version, false, note->title, m->frontmatter.tags, m->text};
      c.outbox.push_back({0, OutboxMsg::kStream, bus::NotesSubject(c.site), bus::EncodeNoteEvent(e),
                          c.site + ":" + pn.path + ":" + std::to_string(next_version)});
    }
    for (size_t k = 0; k < deletes.size(); ++k) {
      bus::NoteEvent e{c.site, deletes[k], old_urls[k], next_version, true, "", {}, ""};
      c.outbox.push_back({0, OutboxMsg::kStream, bus::NotesSubject(c.site), bus::EncodeNoteEvent(e),
                          c.site + ":" + deletes[k] + ":" + std::to_string(next_version)});
    }
    c.outbox.push_back({0, OutboxMsg::kKvPut, MetaKey(c.site), std::to_string(next_version), ""});

    if (Status s = store_->Apply(&c); !s.ok()) {
      // The in-memory vault already moved; rebuild it from what is committed.
      vault_ = site::Vault();
      Status reload = store_->LoadVault(options_.site, &vault_);
      if (!reload.ok()) log::Error("vault reload failed", {{"error", reload.message()}});
      return s;
    }
    version_ = next_version;
    sum.rendered = out.size();
    rendered_total_->Increment(static_cast<double>(out.size()));
    sum.published = PublishPending();
  } else {
    sum.published = true;
  }
  sum.version = version_;

  JsonWriter w;
  w.BeginArray();
  for (const auto& note : req.notes) {
    const site::NoteMeta* m = vault_.Find(note.path);
    w.BeginObject().Key("path").String(note.path).Key("url").String(m ? m->url : "");
    w.Key("warnings").BeginArray();
    auto it = warnings.find(note.path);
    if (it != warnings.end()) {
      for (const auto& s : it->second) w.String(s);
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
  sum.notes_json = w.Take();
  return sum;
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

std::string SiteWriter::ManifestJson() const {
  JsonWriter w;
  w.BeginObject().Key("version").Int(version_).Key("notes").BeginArray();
  for (const auto& [path, n] : vault_.notes()) {
    w.BeginObject().Key("path").String(path).Key("sha256").String(n.sha256).Key("url").String(n.url).EndObject();
  }
  w.EndArray().EndObject();
  return w.Take();
}

}  // namespace folio::ingest
