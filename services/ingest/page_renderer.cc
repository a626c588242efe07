// PageRenderer (page_renderer.h): full pages for the notes whose pages
// must change, rendered in parallel on the ThreadPool.
#include "page_renderer.h"

#include <algorithm>
#include <map>
#include <set>

#include "folio/bus/page_schema.h"
#include "folio/core/crash_marks.h"
#include "folio/core/hash.h"
#include "folio/core/text.h"
#include "folio/core/utf8.h"
#include "folio/markdown/render.h"
#include "folio/markdown/slug.h"
#include "folio/site/analytics.h"
#include "folio/site/csp.h"
#include "folio/site/feeds.h"
#include "folio/site/layout.h"
#include "folio/site/listings.h"
#include "folio/site/summary.h"
#include "crashed_notes.h"
#include "page_record.h"
#include "writer_parts.h"

namespace folio::ingest {
namespace {

// A page lists at most this many backlinks (a hub note can have thousands).
constexpr size_t kMaxBacklinks = 500;

constexpr int kMaxEmbedDepth = 8;

// Resolves links of one note against the vault during rendering, and
// renders note embeds (recursively, with cycle detection).
class VaultResolver : public markdown::LinkResolver {
 public:
  VaultResolver(const site::Vault& v, const Sources& sources, std::string_view from,
                std::vector<std::string>* warnings, std::vector<std::string> stack = {},
                std::string id_prefix = {})
      : vault_(v), sources_(sources), from_(from), warnings_(warnings), stack_(std::move(stack)),
        id_prefix_(std::move(id_prefix)) {
    stack_.emplace_back(from);
    const site::NoteMeta* top = vault_.Find(stack_.front());
    top_private_ = top != nullptr && top->private_note;
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
  std::optional<std::string> EmbedNote(std::string_view target, std::string_view anchor,
                                       const markdown::RenderOptions& nested) override {
    auto r = vault_.Resolve(target, from_);
    if (!r) return std::nullopt;
    const site::NoteMeta* n = vault_.Find(r->path);
    if (!n || !n->published) return std::nullopt;
    // A public page never shows a private note's text: the embed is a link
    // (its text as the author wrote it) to the signed-in page.
    if (n->private_note && !top_private_) return std::nullopt;
    if (std::find(stack_.begin(), stack_.end(), r->path) != stack_.end()) {
      if (warnings_) warnings_->push_back("embed cycle: ![[" + std::string(target) + "]] would include itself");
      return std::string("<p class=\"embed-cycle\">Embed cycle: this note is already shown above.</p>");
    }
    if (stack_.size() > kMaxEmbedDepth) {
      if (warnings_) {
        warnings_->push_back("embed ![[" + std::string(target) + "]] is nested more than " +
                             std::to_string(kMaxEmbedDepth) + " embeds deep: shown as a link");
      }
      return std::nullopt;
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
    // Footnote ids of the embedded part: "fn-e1-1", "fn-e1e2-1" (nested), so
    // they never clash with the host's or another embed's.
    std::string prefix = id_prefix_ + "e" + std::to_string(++embeds_);
    VaultResolver inner(vault_, sources_, r->path, nullptr, stack_, prefix);
    markdown::RenderOptions opts = nested;
    opts.resolver = &inner;
    std::string id_prefix = prefix + "-";
    opts.id_prefix = id_prefix;
    return markdown::RenderNote(*part, r->path, opts).html;
  }

 private:
  const site::Vault& vault_;
  const Sources& sources_;
  std::string_view from_;
  std::vector<std::string>* warnings_;  // null inside embeds: the embedded note reports its own
  std::vector<std::string> stack_;      // notes being embedded, outermost first
  std::string id_prefix_;               // this note's footnote prefix ("" at the top)
  int embeds_ = 0;                      // note embeds rendered so far
  bool top_private_ = false;            // the page rendered is a private note's (README "Private notes")
};

// Words of a note's plain text, for the reading time: runs of non-space
// characters, each CJK character counting as a word (no spaces there).
size_t CountWords(std::string_view text) {
  size_t words = 0, i = 0;
  bool in_word = false;
  while (i < text.size()) {
    uint32_t cp = DecodeUtf8(text, &i);
    bool space = cp == ' ' || cp == '\n' || cp == '\t' || cp == '\r' || cp == 0xA0 || cp == 0x3000;
    bool cjk = (cp >= 0x2E80 && cp <= 0x9FFF) || (cp >= 0xAC00 && cp <= 0xD7AF) || (cp >= 0xF900 && cp <= 0xFAFF) ||
               (cp >= 0x20000 && cp <= 0x2FFFF);
    if (cjk) {
      ++words;
      in_word = false;
    } else if (space) {
      in_word = false;
    } else if (!in_word) {
      ++words;
      in_word = true;
    }
  }
  return words;
}

// The OpenGraph image a note's frontmatter names: an http(s) URL as is, or
// a vault attachment ("cover.png", "[[cover.png]]") as its /assets/ URL.
std::string ResolveImage(const site::Vault& vault, std::string_view image, const std::string& from,
                         std::vector<std::string>* warnings) {
  std::string_view v = image;
  if (v.size() > 4 && v.substr(0, 2) == "[[" && v.substr(v.size() - 2) == "]]") v = v.substr(2, v.size() - 4);
  if (v.empty() || StartsWith(AsciiLower(v), "http://") || StartsWith(AsciiLower(v), "https://")) {
    return std::string(v);
  }
  std::string target;
  if (!PercentDecode(v, &target)) target = std::string(v);
  if (auto url = vault.AttachmentUrl(target, from)) return *url;
  // The report names the note already: no path in front.
  warnings->push_back("frontmatter image '" + std::string(image) + "' is no attachment of the vault");
  return "";
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

// "A/B/Note.md" -> [A -> /a/, A/B -> /a/b/]. A folder's own note (A/B/B.md
// or A/B/index.md at /a/b/) is folder B itself: its crumbs stop at A, so the
// trail never reads "B / B" (issue 28).
std::vector<site::LinkItem> Breadcrumbs(std::string_view path, std::string_view url) {
  std::vector<site::LinkItem> out;
  size_t slash = 0;
  while ((slash = path.find('/', slash)) != std::string_view::npos) {
    std::string dir(path.substr(0, slash));
    size_t prev = dir.rfind('/');
    out.push_back({prev == std::string::npos ? dir : dir.substr(prev + 1), site::FolderUrl(dir), ""});
    ++slash;
  }
  if (!out.empty() && out.back().url == url) out.pop_back();
  return out;
}


// The page of `note` from its render `res`: what the layout shows besides
// the body (description, dates, image, TOC, backlinks, related notes).
site::NotePage NotePageOf(const SiteState& state, const site::SiteInfo& info, const site::NoteMeta& note,
                          std::string_view source, markdown::RenderResult res, std::vector<std::string>* warnings) {
  const site::Vault& vault = state.vault();
  const std::string& path = note.path;
  // res.warnings holds a frontmatter problem already: adding it again here
  // made the CLI print it twice.
  const markdown::Frontmatter& fm = res.frontmatter;
  site::NotePage page;
  page.site = info;
  page.url = note.url;
  page.title = note.title;
  page.body_html = std::move(res.html);
  // Without `description:`, the first paragraph: never the title again (issue 28).
  page.description =
      fm.description.empty() ? site::NoteDescription(source.substr(std::min(fm.body_offset, source.size())))
                             : fm.description;
  page.created = fm.date;
  page.updated = fm.updated.empty() ? site::DayOf(note.updated_ms) : fm.updated;
  page.image = ResolveImage(vault, fm.image, path, warnings);
  // Without `image:`, the note's first image (an attachment or an http(s) URL).
  if (page.image.empty()) page.image = site::FirstImage(page.body_html);
  page.words = CountWords(res.text);
  page.lang = fm.lang;
  page.cssclasses = fm.cssclasses;
  page.tags = res.tags;
  page.breadcrumbs = Breadcrumbs(path, note.url);
  for (const auto& h : res.headings) {
    if (h.level >= 2) page.toc.push_back({h.level, h.text, h.id});
  }
  page.has_mermaid = res.has_mermaid;
  // The first kMaxBacklinks by title, chosen among pointers: a hub note
  // has a backlink from most of the vault, and only those shown are copied.
  std::vector<const site::NoteMeta*> sources;
  // A public page never names a private note; a private page may name any.
  vault.ForEachBacklink(path, [&](const site::NoteMeta& src) {
    if (src.published && (note.private_note || !src.private_note)) sources.push_back(&src);
  });
  page.backlinks_total = sources.size();
  auto by_title = [](const site::NoteMeta* a, const site::NoteMeta* b) {
    return a->title != b->title ? a->title < b->title : a->url < b->url;
  };
  const size_t shown = std::min(sources.size(), kMaxBacklinks);
  std::partial_sort(sources.begin(), sources.begin() + static_cast<ptrdiff_t>(shown), sources.end(), by_title);
  page.backlinks.reserve(shown);
  for (size_t i = 0; i < shown; ++i) page.backlinks.push_back({sources[i]->title, sources[i]->url, ""});
  auto related_item = [&state](std::string_view p) { return state.RelatedItem(p); };
  if (const std::vector<std::string>* list = state.related().Find(path)) {
    page.related = ShownRelated(*list, related_item);
  }
  return page;
}

// The page of a pushed note from its first render (push_plan.h), when every
// link resolves and it embeds no note; false (nothing added): render it.
bool FinishFirst(const FirstRenders* firsts, const std::string& path, markdown::LinkResolver* resolver,
                 markdown::RenderResult* res, std::vector<std::string>* warnings) {
  if (firsts == nullptr) return false;
  auto it = firsts->find(path);
  if (it == firsts->end()) return false;
  const size_t had = warnings->size();  // the resolver's (ambiguous links), as a render adds them
  std::optional<std::string> html = markdown::FillLinks(it->second.result->html, *it->second.links, resolver);
  if (!html) {
    warnings->resize(had);
    return false;
  }
  const markdown::RenderResult& first = *it->second.result;
  res->title = first.title;
  res->text = first.text;
  res->frontmatter = first.frontmatter;
  res->links = first.links;
  res->headings = first.headings;
  res->warnings = first.warnings;
  res->tags = first.tags;
  res->block_ids = first.block_ids;
  res->has_math = first.has_math;
  res->has_mermaid = first.has_mermaid;
  res->html = std::move(*html);
  return true;
}

}  // namespace

site::SiteInfo SiteInfoOf(const SiteOptions& options, const site::Vault& vault) {
  site::SiteInfo info;
  info.name = options.site_name;
  info.base_url = options.base_url;
  while (!info.base_url.empty() && info.base_url.back() == '/') info.base_url.pop_back();
  info.mermaid_url = options.mermaid_url;
  info.mermaid_integrity = options.mermaid_integrity;
  if (vault.FindAttachment(site::kPublishCssPath)) info.publish_css_url = std::string(site::kPublishCssUrl);
  info.private_site = options.prefs.private_site;
  // The owner's settings (issue 29; site_prefs.h), checked when they were set.
  info.lang = options.prefs.lang == "en" ? "" : options.prefs.lang;
  info.feed_content = options.prefs.feed != "summary";
  if (auto a = site::CheckAnalytics(options.prefs.analytics, options.prefs.analytics_id, options.prefs.analytics_url);
      a.ok()) {
    info.analytics = std::move(*a);
  }
  return info;
}

std::string LayoutOf(const SiteOptions& options, bool strict_line_breaks) {
  std::string settings = strict_line_breaks ? "strict-line-breaks" : "";
  // Another mermaid source changes every page with a diagram (the pinned CDN
  // build adds nothing: fingerprints from before the bundled one stay).
  if (options.mermaid_url != site::kMermaidUrl) settings += "\nmermaid " + options.mermaid_url;
  // Turning a site private or public re-renders (noindex) and re-stamps (access) every page.
  if (options.prefs.private_site) settings += "\nprivate";
  // The language, the feeds' content and the analytics script change pages too.
  const SitePrefs& p = options.prefs;
  if (p.lang != "en") settings += "\nlang " + p.lang;
  if (p.feed == "summary") settings += "\nfeed summary";
  if (!p.analytics.empty()) settings += "\nanalytics " + p.analytics + " " + p.analytics_id + " " + p.analytics_url;
  return site::LayoutFingerprint(options.site_name, settings);
}

Status PageRenderer::LoadSources(const std::vector<std::string>& render, std::map<std::string, std::string>* stored,
                                 Sources* sources) const {
  const site::Vault& vault = state_->vault();
  std::vector<std::string> todo = render;
  std::set<std::string> seen(todo.begin(), todo.end());
  while (!todo.empty()) {
    std::string path = std::move(todo.back());
    todo.pop_back();
    if (!sources->count(path)) {
      auto c = store_->NoteContent(options_->site, path);
      if (!c.ok()) return c.status();
      auto [it, _] = stored->insert_or_assign(path, std::move(*c));
      (*sources)[path] = &it->second;
    }
    if (const site::NoteMeta* m = vault.Find(path)) {
      for (const auto& e : m->embeds_out) {
        if (seen.insert(e).second) todo.push_back(e);
      }
    }
  }
  return Status::Ok();
}

std::vector<Rendered> PageRenderer::RenderNotes(const std::vector<std::string>& render, const Sources& sources,
                                                int64_t version, int64_t now_s, const FirstRenders* firsts) const {
  std::vector<Rendered> out(render.size());
  const site::SiteInfo info = Info();
  const site::Vault& vault = state_->vault();
  pool_->ParallelFor(render.size(), [&](size_t k) {
    const std::string& path = render[k];
    const site::NoteMeta* note = vault.Find(path);
    Rendered& r = out[k];
    r.path = path;
    markdown::RenderOptions opts;
    opts.strict_line_breaks = state_->strict_line_breaks();
    VaultResolver resolver(vault, sources, path, &r.warnings);
    opts.resolver = &resolver;
    markdown::RenderResult res;
    if (!FinishFirst(firsts, path, &resolver, &res, &r.warnings)) {
      r.parsed_twice = firsts != nullptr && firsts->count(path) != 0;
      const std::string& source = *sources.find(path)->second;
      // Names the note if its render crashes us (crashed_notes.h).
      ScopedCrashMark mark(NoteMark(options_->site, path, note != nullptr ? note->sha256 : Sha256Hex(source)));
      MaybeCrashForTest(source);
      res = markdown::RenderNote(source, path, opts);
    }
    for (auto& w : res.warnings) r.warnings.push_back(std::move(w));
    CheckAnchors(vault, path, res.links, &r.warnings);
    site::NotePage page = NotePageOf(*state_, info, *note, *sources.find(path)->second, std::move(res), &r.warnings);
    PageHead head{200, internal::kHtml, internal::kPageCache, site::NotePageCsp(page), "", now_s, version,
                  PageAccessOf(options_->prefs)};
    if (note->private_note) head.access = bus::PageAccess::kSignedIn;
    const std::string html = site::AssembleNotePage(page);
    PageRecordOut rec = MakePageRecord(head, html);
    r.record = std::move(rec.record);
    if (!rec.warning.empty()) r.warnings.push_back(std::move(rec.warning));
  });
  return out;
}

Status PageRenderer::RenderInto(const std::vector<std::string>& paths, int64_t now_s, Commit* c) const {
  if (paths.empty()) return Status::Ok();
  std::map<std::string, std::string> stored;
  Sources sources;
  if (Status s = LoadSources(paths, &stored, &sources); !s.ok()) return s;
  std::vector<Rendered> out = RenderNotes(paths, sources, c->version, now_s);
  WarningsByPath warnings;  // unchanged (no note changed); not stored
  AddRendered(c, &out, &warnings);
  return Status::Ok();
}

void PageRenderer::AddRendered(Commit* c, std::vector<Rendered>* out, WarningsByPath* warnings) const {
  for (auto& r : *out) {
    const site::NoteMeta* note = state_->vault().Find(r.path);
    // Each warning once per note: a note linking twice to a missing note
    // warns of it once (issue 28), in the order first met.
    auto& w = (*warnings)[r.path];
    for (auto& text : r.warnings) {
      if (std::find(w.begin(), w.end(), text) == w.end()) w.push_back(std::move(text));
    }
    c->AddPage(note->url, std::move(r.record));
  }
}

}  // namespace folio::ingest
