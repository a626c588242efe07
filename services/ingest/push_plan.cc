// The plan, the metadata pass and the change to the model (push_plan.h).
#include "push_plan.h"

#include <algorithm>
#include <set>

#include "folio/core/crash_marks.h"
#include "folio/core/hash.h"
#include "folio/core/text.h"
#include "folio/core/time.h"
#include "folio/site/layout.h"
#include "crashed_notes.h"

namespace folio::ingest {
namespace {

std::vector<std::string> UniqueTargets(const std::vector<markdown::LinkRef>& links, bool embeds_only) {
  std::vector<std::string> out;
  for (const auto& l : links) {
    if (embeds_only && !l.embed) continue;
    if (std::find(out.begin(), out.end(), l.target) == out.end()) out.push_back(l.target);
  }
  return out;
}

site::NoteMeta MetaOf(const PushNote& note, const std::string& sha, const markdown::RenderResult& r, int64_t now_ms,
                      int64_t version) {
  site::NoteMeta m;
  m.path = note.path;
  m.sha256 = sha;
  m.title = r.title;
  m.targets = UniqueTargets(r.links, false);
  m.embeds = UniqueTargets(r.links, true);
  m.aliases = r.frontmatter.aliases;
  m.tags = r.tags;
  m.permalink = r.frontmatter.permalink;
  m.published = r.frontmatter.publish;
  m.private_note = m.published && r.frontmatter.private_note;
  for (const auto& h : r.headings) m.anchors.push_back(h.id);
  for (const auto& b : r.block_ids) m.anchors.push_back("^" + AsciiLower(b));
  m.updated_ms = now_ms;
  m.date_ms = ParseDateMs(r.frontmatter.date);
  m.modified_ms = ParseDateMs(r.frontmatter.updated);
  m.version = version;
  return m;
}

// Listings the notes' change can alter, and the notes it re-renders for
// their links, attachments and publish.css (ApplyToVault's second half).
void CollectDirty(const std::vector<std::string>& touched,
                  const std::vector<std::pair<std::string, site::ListedAs>>& listed_before, size_t shards_before,
                  size_t chunks_before, const std::set<std::string>& attachment_users, const site::Vault& vault,
                  VaultChange* change) {
  for (const auto& [path, before] : listed_before) {
    site::MarkDirty(path, before, site::ListedNow(vault, path), &change->dirty);
  }
  // Notes re-rendered for their links (a target arrived, left or moved) may
  // have new edges too; chunks that come out the same are not published. The
  // pushed notes themselves were judged by MarkDirty (edges, title, URL): an
  // edit that keeps them rebuilds no chunk.
  for (const auto& path : change->impact.render) {
    if (!std::binary_search(touched.begin(), touched.end(), path)) change->dirty.graph_paths.insert(path);
  }
  // The sitemap or the graph was split anew (the site crossed a size): every shard.
  if (vault.listing_index().SitemapShards() != shards_before) change->dirty.sitemap = true;
  if (vault.listing_index().GraphChunks() != chunks_before) change->dirty.graph = true;
  for (const auto& p : attachment_users) {
    const site::NoteMeta* m = vault.Find(p);
    if (m && m->published) change->impact.render.insert(p);
  }
  if (change->publish_css_toggled) {  // every page's <head> links it or stops
    for (const auto& [path, note] : vault.notes()) {
      if (note.published) change->impact.render.insert(path);
    }
  }
  for (auto& [path, w] : change->impact.url_warnings) {
    if (!w.empty()) change->warnings[path] = w;
  }
}

}  // namespace

PushPlan PlanPush(const PushRequest& req, const site::Vault& vault, ThreadPool* pool) {
  PushPlan plan;
  const size_t n = req.notes.size();
  plan.sha.resize(n);
  pool->ParallelFor(n, [&](size_t i) { plan.sha[i] = Sha256Hex(req.notes[i].content); });
  for (size_t i = 0; i < n; ++i) {
    const site::NoteMeta* old = vault.Find(req.notes[i].path);
    if (!old || old->sha256 != plan.sha[i]) plan.changed.push_back(i);
  }
  for (const auto& d : req.deletes) {
    if (vault.Find(d)) plan.deletes.push_back(d);
  }
  for (const auto& a : req.attachments) {
    std::string h = a.sha256.empty() ? Sha256Hex(a.data) : a.sha256;
    const site::AttachmentMeta* old = vault.FindAttachment(a.path);
    if (old && old->sha256 == h) continue;
    plan.att_upserts.push_back({a.path, std::move(h), ""});
    plan.att_bytes.push_back(&a);
  }
  for (const auto& d : req.delete_attachments) {
    if (vault.FindAttachment(d)) plan.att_deletes.push_back(d);
  }
  return plan;
}

FirstPass ParseChanged(const PushRequest& req, const PushPlan& plan, const std::string& site, bool strict_line_breaks,
                       ThreadPool* pool) {
  FirstPass first;
  first.meta.resize(plan.changed.size());
  first.links.resize(plan.changed.size());
  first.strict_line_breaks = strict_line_breaks;
  markdown::RenderOptions opts;
  opts.strict_line_breaks = strict_line_breaks;
  pool->ParallelFor(plan.changed.size(), [&](size_t k) {
    const PushNote& note = req.notes[plan.changed[k]];
    // Names the note if its render crashes us (crashed_notes.h).
    ScopedCrashMark mark(NoteMark(site, note.path, plan.sha[plan.changed[k]]));
    MaybeCrashForTest(note.content);
    first.meta[k] = markdown::RenderNoteDeferred(note.content, note.path, opts, &first.links[k]);
  });
  return first;
}

VaultChange ApplyToVault(const PushRequest& req, const PushPlan& plan, FirstPass first, int64_t now_ms,
                         int64_t version, StateTxn* txn) {
  const SiteState& state = txn->state();
  const site::Vault& vault = state.vault();
  VaultChange change;
  change.meta = std::move(first.meta);
  change.links = std::move(first.links);
  change.strict_line_breaks = first.strict_line_breaks;
  const bool had_css = vault.FindAttachment(site::kPublishCssPath) != nullptr;
  std::set<std::string> attachment_users =
      txn->ApplyAttachments(plan.att_upserts, plan.att_deletes, &change.unused_asset_urls);
  change.publish_css_toggled = had_css != (vault.FindAttachment(site::kPublishCssPath) != nullptr);
  std::vector<site::NoteMeta> upserts;
  for (size_t k = 0; k < plan.changed.size(); ++k) {
    size_t i = plan.changed[k];
    upserts.push_back(MetaOf(req.notes[i], plan.sha[i], change.meta[k], now_ms, version));
    if (auto r = plan.renamed_from.find(req.notes[i].path); r != plan.renamed_from.end()) {
      upserts.back().renamed_from = r->second;
    }
  }
  for (const auto& d : plan.deletes) change.deleted_urls.push_back(vault.Find(d)->url);

  std::vector<std::string> touched;
  for (const auto& u : upserts) touched.push_back(u.path);
  touched.insert(touched.end(), plan.deletes.begin(), plan.deletes.end());
  std::sort(touched.begin(), touched.end());
  RelatedBefore related_before = state.CaptureRelatedBefore(touched);
  std::vector<std::pair<std::string, site::ListedAs>> listed_before;
  for (const auto& path : touched) listed_before.push_back({path, site::ListedNow(vault, path)});

  const size_t shards_before = vault.listing_index().SitemapShards();
  const size_t chunks_before = vault.listing_index().GraphChunks();
  change.impact = txn->ApplyNotes(std::move(upserts), plan.deletes);
  CollectDirty(touched, listed_before, shards_before, chunks_before, attachment_users, vault, &change);
  change.related_renders = state.AddRelatedImpact(related_before, &change.impact.render);
  return change;
}

}  // namespace folio::ingest
