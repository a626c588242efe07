#include "site_writer.h"

#include <algorithm>
#include <map>
#include <set>

#include "folio/bus/schema.h"
#include "folio/core/gzip.h"
#include "folio/core/hash.h"
#include "folio/core/json.h"
#include "folio/core/text.h"
#include "folio/core/log.h"
#include "folio/core/time.h"
#include "folio/markdown/render.h"
#include "folio/markdown/slug.h"
#include "folio/site/layout.h"
#include "folio/site/listings.h"

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

// Note sources available to a render pass: pushed content and everything
// preloaded from the store (the store is not thread-safe; renders are).
using Sources = std::map<std::string, const std::string*, std::less<>>;

constexpr int kMaxEmbedDepth = 8;

// Resolves links of one note against the vault during rendering, and
// renders note embeds (recursively, with cycle detection).
class VaultResolver : public markdown::LinkResolver {
 public:
  VaultResolver(const site::Vault& v, const Sources& sources, std::string_view from,
                std::vector<std::string>* warnings, std::vector<std::string> stack = {})
      : vault_(v), sources_(sources), from_(from), warnings_(warnings), stack_(std::move(stack)) {
    stack_.emplace_back(from);
  }
  std::optional<std::string> Resolve(std::string_view target) override {
    auto r = vault_.Resolve(target, from_);
    if (!r) return std::nullopt;
    if (r->ambiguous && warnings_) {
      warnings_->push_back("ambiguous link [[" + std::string(target) + "]]: several notes match; linked to " + r->path);
    }
    const site::NoteMeta* n = vault_.Find(r->path);
    return n && n->published ? std::optional<std::string>(n->url) : std::nullopt;
  }
  std::optional<std::string> ResolveAttachment(std::string_view target) override {
    return vault_.AttachmentUrl(target, from_);
  }
  std::optional<std::string> EmbedNote(std::string_view target, std::string_view anchor) override {
    auto r = vault_.Resolve(target, from_);
    if (!r) return std::nullopt;
    const site::NoteMeta* n = vault_.Find(r->path);
    if (!n || !n->published) return std::nullopt;
    if (std::find(stack_.begin(), stack_.end(), r->path) != stack_.end() || stack_.size() > kMaxEmbedDepth) {
      if (warnings_) warnings_->push_back("embed cycle: ![[" + std::string(target) + "]] would include itself");
      return std::string("<p class=\"embed-cycle\">Embed cycle: this note is already shown above.</p>");
    }
    auto src = sources_.find(r->path);
    if (src == sources_.end()) return std::nullopt;
    std::optional<std::string> part;
    if (anchor.empty()) {
      part = *src->second;
    } else if (anchor[0] == '^') {
      part = markdown::ExtractBlock(*src->second, anchor.substr(1));
    } else {
      part = markdown::ExtractSection(*src->second, anchor);
    }
    if (!part) {
      if (warnings_) warnings_->push_back("embed ![[" + std::string(target) + "#" + std::string(anchor) + "]]: no such heading or block");
      return std::string("<p class=\"embed-missing\">Nothing matches this embed.</p>");
    }
    VaultResolver inner(vault_, sources_, r->path, nullptr, stack_);
    markdown::RenderOptions opts;
    opts.resolver = &inner;
    return markdown::RenderNote(*part, r->path, opts).html;
  }

 private:
  const site::Vault& vault_;
  const Sources& sources_;
  std::string_view from_;
  std::vector<std::string>* warnings_;  // null inside embeds: the embedded note reports its own
  std::vector<std::string> stack_;      // notes being embedded, outermost first
};

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

std::vector<std::string> UniqueTargets(const std::vector<markdown::LinkRef>& links, bool embeds_only) {
  std::vector<std::string> out;
  for (const auto& l : links) {
    if (embeds_only && !l.embed) continue;
    if (std::find(out.begin(), out.end(), l.target) == out.end()) out.push_back(l.target);
  }
  return out;
}

// [[note#Heading]] / [[note#^block]] whose target has no such heading or
// block still links to the note, with a warning (OBSIDIAN.md "Anchors").
void CheckAnchors(const site::Vault& vault, const std::string& from, const std::vector<markdown::LinkRef>& links,
                  std::vector<std::string>* warnings) {
  for (const auto& l : links) {
    if (l.anchor.empty() || l.embed) continue;
    const site::NoteMeta* target = nullptr;
    if (l.target.empty()) {
      target = vault.Find(from);
    } else if (auto r = vault.Resolve(l.target, from)) {
      target = vault.Find(r->path);
    }
    if (!target) continue;
    std::string want;
    if (l.anchor[0] == '^') {
      want = "^" + AsciiLower(l.anchor.substr(1));
    } else {
      std::string_view last = l.anchor;
      if (size_t hash = last.rfind('#'); hash != std::string_view::npos) last.remove_prefix(hash + 1);
      want = markdown::HeadingId(last);
    }
    if (std::find(target->anchors.begin(), target->anchors.end(), want) == target->anchors.end()) {
      warnings->push_back("link [[" + l.target + "#" + l.anchor + "]]: '" + target->path +
                          "' has no such heading or block; linking to the note");
    }
  }
}

// Content-Type of an attachment, by extension.
std::string ContentTypeOf(std::string_view path) {
  static const std::map<std::string, std::string, std::less<>> kTypes = {
      {"png", "image/png"}, {"jpg", "image/jpeg"}, {"jpeg", "image/jpeg"}, {"gif", "image/gif"},
      {"bmp", "image/bmp"}, {"svg", "image/svg+xml"}, {"webp", "image/webp"}, {"avif", "image/avif"},
      {"mp3", "audio/mpeg"}, {"wav", "audio/wav"}, {"m4a", "audio/mp4"}, {"ogg", "audio/ogg"},
      {"flac", "audio/flac"}, {"opus", "audio/opus"}, {"mp4", "video/mp4"}, {"webm", "video/webm"},
      {"ogv", "video/ogg"}, {"mov", "video/quicktime"}, {"mkv", "video/x-matroska"}, {"pdf", "application/pdf"},
      {"txt", "text/plain; charset=utf-8"}, {"css", "text/css; charset=utf-8"}, {"json", "application/json"}};
  size_t dot = path.rfind('.');
  if (dot == std::string_view::npos) return "application/octet-stream";
  auto it = kTypes.find(AsciiLower(path.substr(dot + 1)));
  return it == kTypes.end() ? "application/octet-stream" : it->second;
}

// "A/B/Note.md" -> [A -> /a/, A/B -> /a/b/]
std::vector<site::LinkItem> Breadcrumbs(std::string_view path) {
  std::vector<site::LinkItem> out;
  size_t slash = 0;
  while ((slash = path.find('/', slash)) != std::string_view::npos) {
    std::string dir(path.substr(0, slash));
    size_t prev = dir.rfind('/');
    out.push_back({prev == std::string::npos ? dir : dir.substr(prev + 1), site::FolderUrl(dir), ""});
    ++slash;
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

site::SiteInfo SiteWriter::Info() const {
  site::SiteInfo info;
  info.name = options_.site_name;
  info.base_url = options_.base_url;
  while (!info.base_url.empty() && info.base_url.back() == '/') info.base_url.pop_back();
  info.mermaid_url = options_.mermaid_url;
  return info;
}

Status SiteWriter::Start() {
  auto v = store_->Version(options_.site);
  if (!v.ok()) return v.status();
  version_ = *v;
  if (Status s = store_->LoadVault(options_.site, &vault_); !s.ok()) return s;
  if (Status s = store_->LoadAttachments(options_.site, &vault_); !s.ok()) return s;

  // Fixed and generated pages: rewrite those missing or different from what
  // this build renders (a new layout, a new --site-name).
  Commit c;
  c.site = options_.site;
  c.version = version_;
  int64_t now_s = NowUnixMs() / 1000;
  AddPage(&c, site::StyleSheetUrl(), 200, "text/css; charset=utf-8", kAssetCache, site::StyleSheet(), now_s);
  AddPage(&c, k404Url, 404, kHtml, "no-store", site::Assemble404Page(options_.site_name), now_s);
  std::map<std::string, std::pair<uint64_t, uint16_t>> fps;
  AddChangedListings(&c, now_s, /*force=*/true, nullptr, &fps);
  listing_fp_ = std::move(fps);
  std::vector<PageRow> stale;
  for (auto& p : c.pages) {
    auto have = store_->PageRecord(options_.site, p.url);
    bus::PageRecord a, b;
    if (have.ok() && bus::DecodePageRecord(*have, &a).ok() && bus::DecodePageRecord(p.record, &b).ok() &&
        a.etag == b.etag && a.status == b.status && a.location == b.location) {
      continue;
    }
    stale.push_back(std::move(p));
  }
  std::vector<std::string> gone;
  for (const auto& url : c.deleted_pages) gone.push_back(url);
  if (stale.empty() && gone.empty()) return Status::Ok();
  c.pages = std::move(stale);
  c.outbox.clear();
  for (const auto& url : gone) c.outbox.push_back({0, OutboxMsg::kKvDelete, bus::PageKey(c.site, url), "", ""});
  for (const auto& p : c.pages) c.outbox.push_back({0, OutboxMsg::kKvPut, bus::PageKey(c.site, p.url), p.record, ""});
  c.outbox.push_back({0, OutboxMsg::kKvPut, MetaKey(c.site), std::to_string(version_), ""});
  return store_->Apply(&c);
}

void SiteWriter::AddPage(Commit* c, std::string url, uint16_t status, std::string content_type,
                         std::string cache_control, std::string body, int64_t last_modified_s,
                         std::string location) {
  bus::PageRecord r;
  r.status = status;
  r.content_type = std::move(content_type);
  r.cache_control = std::move(cache_control);
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
    AddPage(c, url, g.status, g.content_type, cache, g.Render(), now_s, g.location);
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

Result<PushSummary> SiteWriter::Push(PushRequest req) {
  PushSummary sum;
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

    // Sources for pass 2: pushed notes, plus stored text of every other note
    // rendered or embedded (transitively) by a rendered note.
    std::map<std::string, std::string> stored;
    Sources sources;
    for (size_t i : changed) sources[req.notes[i].path] = &req.notes[i].content;
    std::vector<std::string> render(impact.render.begin(), impact.render.end());
    std::vector<std::string> todo = render;
    std::set<std::string> seen(todo.begin(), todo.end());
    while (!todo.empty()) {
      std::string path = std::move(todo.back());
      todo.pop_back();
      if (!sources.count(path)) {
        auto c = store_->NoteContent(options_.site, path);
        if (!c.ok()) return c.status();
        auto [it, _] = stored.emplace(path, std::move(*c));
        sources[path] = &it->second;
      }
      if (const site::NoteMeta* m = vault_.Find(path)) {
        for (const auto& e : m->embeds_out) {
          if (seen.insert(e).second) todo.push_back(e);
        }
      }
    }

    phase("apply");
    // Pass 2: full pages for exactly the affected notes.
    std::vector<Rendered> out(render.size());
    const int64_t now_s = now_ms / 1000;
    const site::SiteInfo info = Info();
    pool_->ParallelFor(render.size(), [&](size_t k) {
      const std::string& path = render[k];
      const site::NoteMeta* note = vault_.Find(path);
      Rendered& r = out[k];
      r.path = path;
      VaultResolver resolver(vault_, sources, path, &r.warnings);
      markdown::RenderOptions opts;
      opts.resolver = &resolver;
      markdown::RenderResult res = markdown::RenderNote(*sources.find(path)->second, path, opts);
      for (auto& w : res.warnings) r.warnings.push_back(std::move(w));
      CheckAnchors(vault_, path, res.links, &r.warnings);
      if (!res.frontmatter.error.empty()) r.warnings.push_back(path + ": " + res.frontmatter.error);
      const markdown::Frontmatter& fm = res.frontmatter;
      site::NotePage page;
      page.site = info;
      page.url = note->url;
      page.title = note->title;
      page.body_html = std::move(res.html);
      page.description = fm.description.empty() ? Summary(res.text) : fm.description;
      page.created = fm.date;
      page.updated = fm.updated.empty() ? site::DayOf(note->updated_ms) : fm.updated;
      page.image = fm.image;
      page.lang = fm.lang;
      page.cssclasses = fm.cssclasses;
      page.tags = res.tags;
      page.breadcrumbs = Breadcrumbs(path);
      for (const auto& h : res.headings) {
        if (h.level >= 2) page.toc.push_back({h.level, h.text, h.id});
      }
      page.has_mermaid = res.has_mermaid;
      for (const auto& b : vault_.Backlinks(path)) {
        const site::NoteMeta* src = vault_.Find(b);
        if (src && src->published) page.backlinks.push_back({src->title, src->url, ""});
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

    phase("render");
    Commit c;
    c.site = options_.site;
    c.version = next_version;
    std::set<std::string> pushed_paths;
    for (size_t i : changed) pushed_paths.insert(req.notes[i].path);
    for (auto& r : out) {
      const site::NoteMeta* note = vault_.Find(r.path);
      auto& w = warnings[r.path];  // created even when empty: "no warnings now" is news
      w.insert(w.end(), r.warnings.begin(), r.warnings.end());
      c.outbox.push_back({0, OutboxMsg::kKvPut, bus::PageKey(c.site, note->url), r.record, ""});
      c.pages.push_back({note->url, std::move(r.record)});
    }
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
      AddPage(&c, from, 301, kHtml, "public, max-age=300", site::AssembleRedirectPage(to), now_s, to);
    }
    for (const auto& url : impact.deleted_urls) {
      if (taken.count(url) || impact.moved.count(url)) continue;
      c.deleted_pages.push_back(url);
      c.outbox.insert(c.outbox.begin(), {0, OutboxMsg::kKvDelete, bus::PageKey(c.site, url), "", ""});
    }
    for (const auto& d : deletes) c.deleted_notes.push_back(d);
    // Assets: immutable, content-addressed URLs; an old URL goes once unused.
    for (size_t k = 0; k < att_upserts.size(); ++k) {
      const site::AttachmentMeta* m = vault_.FindAttachment(att_upserts[k].path);
      if (!taken.count(m->url)) {
        AddPage(&c, m->url, 200, ContentTypeOf(m->path), kAssetCache, att_bytes[k]->data, now_s);
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
                       note->published ? m->text : ""};
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
    phase("commit");
    listing_fp_ = std::move(fps);
    version_ = next_version;
    sum.rendered = out.size();
    rendered_total_->Increment(static_cast<double>(out.size() + sum.listings));
    sum.published = PublishPending();
    phase("publish");
  } else {
    sum.published = true;
  }
  sum.version = version_;

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
  w.EndArray().Key("attachments").BeginArray();
  for (const auto& [path, a] : vault_.attachments()) {
    w.BeginObject().Key("path").String(path).Key("sha256").String(a.sha256).Key("url").String(a.url).EndObject();
  }
  w.EndArray().EndObject();
  return w.Take();
}

}  // namespace folio::ingest
