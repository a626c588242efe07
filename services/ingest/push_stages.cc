// SiteWriter::Push's stages between the plan and the commit (see
// site_writer.h): what changed, the metadata pass, the vault update and
// what it affects, the commit's rows and pages, note events, the report.
#include <algorithm>
#include <map>
#include <set>

#include "folio/bus/note_schema.h"
#include "folio/bus/page_schema.h"
#include "folio/core/crash_marks.h"
#include "folio/core/hash.h"
#include "folio/core/text.h"
#include "folio/core/time.h"
#include "folio/http/attachment.h"
#include "folio/site/csp.h"
#include "folio/site/layout.h"
#include "blob_upload.h"
#include "crashed_notes.h"
#include "site_writer.h"
#include "site_writer_internal.h"

namespace folio::ingest {
namespace {

using internal::kAssetCache;
using internal::kHtml;

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
  for (const auto& h : r.headings) m.anchors.push_back(h.id);
  for (const auto& b : r.block_ids) m.anchors.push_back("^" + AsciiLower(b));
  m.updated_ms = now_ms;
  m.date_ms = ParseDateMs(r.frontmatter.date);
  m.modified_ms = ParseDateMs(r.frontmatter.updated);
  m.version = version;
  return m;
}

}  // namespace

SiteWriter::PushPlan SiteWriter::PlanPush(const PushRequest& req) const {
  PushPlan plan;
  const size_t n = req.notes.size();
  plan.sha.resize(n);
  pool_->ParallelFor(n, [&](size_t i) { plan.sha[i] = Sha256Hex(req.notes[i].content); });
  for (size_t i = 0; i < n; ++i) {
    const site::NoteMeta* old = vault_.Find(req.notes[i].path);
    if (!old || old->sha256 != plan.sha[i]) plan.changed.push_back(i);
  }
  for (const auto& d : req.deletes) {
    if (vault_.Find(d)) plan.deletes.push_back(d);
  }
  for (const auto& a : req.attachments) {
    std::string h = a.sha256.empty() ? Sha256Hex(a.data) : a.sha256;
    const site::AttachmentMeta* old = vault_.FindAttachment(a.path);
    if (old && old->sha256 == h) continue;
    plan.att_upserts.push_back({a.path, std::move(h), ""});
    plan.att_bytes.push_back(&a);
  }
  for (const auto& d : req.delete_attachments) {
    if (vault_.FindAttachment(d)) plan.att_deletes.push_back(d);
  }
  return plan;
}

std::vector<markdown::RenderResult> SiteWriter::ParseChanged(const PushRequest& req, const PushPlan& plan) const {
  std::vector<markdown::RenderResult> meta(plan.changed.size());
  markdown::RenderOptions opts;
  opts.highlight_code = false;  // only metadata and text are read; the render pass colours the page
  pool_->ParallelFor(plan.changed.size(), [&](size_t k) {
    const PushNote& note = req.notes[plan.changed[k]];
    // Names the note if its render crashes us (crashed_notes.h).
    ScopedCrashMark mark(NoteMark(options_.site, note.path, plan.sha[plan.changed[k]]));
    MaybeCrashForTest(note.content);
    meta[k] = markdown::RenderNote(note.content, note.path, opts);
  });
  return meta;
}

SiteWriter::VaultChange SiteWriter::ApplyToVault(const PushRequest& req, const PushPlan& plan,
                                                 std::vector<markdown::RenderResult> meta, int64_t now_ms,
                                                 int64_t version) {
  VaultChange change;
  change.meta = std::move(meta);
  const bool had_css = vault_.FindAttachment(site::kPublishCssPath) != nullptr;
  std::set<std::string> attachment_users =
      vault_.ApplyAttachments(plan.att_upserts, plan.att_deletes, &change.unused_asset_urls);
  change.publish_css_toggled = had_css != (vault_.FindAttachment(site::kPublishCssPath) != nullptr);
  std::vector<site::NoteMeta> upserts;
  for (size_t k = 0; k < plan.changed.size(); ++k) {
    size_t i = plan.changed[k];
    upserts.push_back(MetaOf(req.notes[i], plan.sha[i], change.meta[k], now_ms, version));
  }
  for (const auto& d : plan.deletes) change.deleted_urls.push_back(vault_.Find(d)->url);

  std::vector<std::string> touched;
  for (const auto& u : upserts) touched.push_back(u.path);
  touched.insert(touched.end(), plan.deletes.begin(), plan.deletes.end());
  std::sort(touched.begin(), touched.end());
  RelatedBefore related_before = CaptureRelatedBefore(touched);
  std::vector<std::pair<std::string, site::ListedAs>> listed_before;
  for (const auto& path : touched) listed_before.push_back({path, site::ListedNow(vault_, path)});

  const size_t shards_before = vault_.listing_index().SitemapShards();
  const size_t chunks_before = vault_.listing_index().GraphChunks();
  change.impact = vault_.Apply(std::move(upserts), plan.deletes);
  for (const auto& [path, before] : listed_before) site::MarkDirty(path, before, site::ListedNow(vault_, path), &change.dirty);
  // Notes re-rendered for their links (a target arrived, left or moved) may
  // have new edges too; chunks that come out the same are not published. The
  // pushed notes themselves were judged by MarkDirty (edges, title, URL): an
  // edit that keeps them rebuilds no chunk.
  for (const auto& path : change.impact.render) {
    if (!std::binary_search(touched.begin(), touched.end(), path)) change.dirty.graph_paths.insert(path);
  }
  // The sitemap or the graph was split anew (the site crossed a size): every shard.
  if (vault_.listing_index().SitemapShards() != shards_before) change.dirty.sitemap = true;
  if (vault_.listing_index().GraphChunks() != chunks_before) change.dirty.graph = true;
  for (const auto& p : attachment_users) {
    const site::NoteMeta* m = vault_.Find(p);
    if (m && m->published) change.impact.render.insert(p);
  }
  if (change.publish_css_toggled) {  // every page's <head> links it or stops
    for (const auto& [path, note] : vault_.notes()) {
      if (note.published) change.impact.render.insert(path);
    }
  }
  for (auto& [path, w] : change.impact.url_warnings) {
    if (!w.empty()) change.warnings[path] = w;
  }
  change.related_renders = AddRelatedImpact(related_before, &change.impact.render);
  return change;
}

void SiteWriter::AssembleCommit(const PushRequest& req, const PushPlan& plan, VaultChange* change,
                                std::vector<Rendered>* out, const Sources& sources, int64_t now_s, Commit* c) {
  AddRendered(c, out, &change->warnings);
  // Rows for every changed note (unpublished ones too: the manifest lists
  // them) and the new warnings of re-rendered ones.
  // Their paths, in order: the pushed notes and those with new warnings
  // (never a walk over the whole vault).
  std::set<std::string> pushed, rows;
  for (size_t i : plan.changed) pushed.insert(req.notes[i].path);
  rows = pushed;
  for (const auto& [path, w] : change->warnings) rows.insert(path);
  for (const auto& path : rows) {
    const site::NoteMeta* m = vault_.Find(path);
    if (!m) continue;  // deleted by this push
    bool is_pushed = pushed.count(path) > 0;
    auto w = change->warnings.find(path);
    NoteRow row;
    row.meta = *m;
    row.content_changed = is_pushed;
    if (is_pushed) row.content = *sources.find(path)->second;
    if (w != change->warnings.end()) row.warnings = w->second;
    c->notes.push_back(std::move(row));
  }
  // Pages a note left: a 301 where it moved (a new permalink, or a rename:
  // deleted and added again with the same bytes, permalink or old name as an
  // alias), else 410 Gone, so readers and crawlers learn it was removed.
  std::set<std::string> taken;
  for (const auto& p : c->pages) taken.insert(p.url);
  for (const auto& [from, to] : change->impact.moved) {
    if (taken.count(from)) continue;
    AddPage(c, from, {301, kHtml, "public, max-age=300", site::PageCsp(), to, now_s, c->version},
            site::AssembleRedirectPage(to));
  }
  for (const auto& url : change->impact.deleted_urls) {
    if (taken.count(url) || change->impact.moved.count(url)) continue;
    AddPage(c, url, {410, kHtml, "public, max-age=300", site::PageCsp(), "", now_s, c->version},
            site::AssembleGonePage(options_.site_name));
  }
  for (const auto& d : plan.deletes) {
    c->deleted_notes.push_back(d);
    if (related_.Set(d, {})) c->related.push_back({d, {}});  // search drops it too
  }
  // Assets: immutable, content-addressed URLs; an old URL goes once unused.
  for (size_t k = 0; k < plan.att_upserts.size(); ++k) {
    const site::AttachmentMeta* m = vault_.FindAttachment(plan.att_upserts[k].path);
    if (!options_.storage.url.empty()) {
      c->attachments.push_back({*m, ""});  // the bytes live in storage; edges fetch them from there
      continue;
    }
    const std::string& bytes = plan.att_bytes[k]->data;
    if (!taken.count(m->url)) {
      AddPage(c, m->url, {200, AttachmentContentType(m->path), kAssetCache, std::string(http::kUntrustedCsp), "", now_s,
                          c->version}, bytes);
      taken.insert(m->url);
    }
    c->attachments.push_back({*m, bytes});
  }
  for (const auto& url : change->unused_asset_urls) {
    if (taken.count(url)) continue;
    c->deleted_pages.push_back(url);
    c->outbox.push_back({0, OutboxMsg::kKvDelete, bus::PageKey(c->site, url), "", ""});
  }
  c->deleted_attachments = plan.att_deletes;
}

void SiteWriter::AddNoteEvents(const PushRequest& req, const PushPlan& plan, const VaultChange& change,
                               Commit* c) const {
  // Events packed into few messages (bus::kMaxNoteEventsPerMessage, one
  // JSON object per line): a first import is ~150 messages, not 10,000,
  // each of which nats-server stores and acks on its own. The id names the
  // change (the first path of the message at this version, in the site's
  // epoch: a restore from a backup renews it, and the versions after the
  // backup come again), so a republish from the outbox is dropped by the
  // server's duplicate window, and a change after a restore is not.
  std::string batch, first_path;
  size_t in_batch = 0;
  Result<std::string> epoch = store_->Epoch(c->site);
  const std::string id_suffix = ":" + std::to_string(c->version) + (epoch.ok() ? ":" + *epoch : "");
  auto flush = [&] {
    if (in_batch == 0) return;
    c->outbox.push_back({0, OutboxMsg::kStream, bus::NotesSubject(c->site), std::move(batch),
                         c->site + ":" + first_path + id_suffix});
    batch.clear();
    in_batch = 0;
  };
  auto add = [&](const bus::NoteEvent& e) {
    std::string json = bus::EncodeNoteEvent(e);
    if (in_batch == bus::kMaxNoteEventsPerMessage || batch.size() + 1 + json.size() > bus::kMaxNoteBatchBytes) flush();
    if (in_batch == 0) {
      first_path = e.path;
      batch = std::move(json);
    } else {
      batch.push_back('\n');
      batch += json;
    }
    ++in_batch;
  };
  for (size_t k = 0; k < plan.changed.size(); ++k) {
    const PushNote& pn = req.notes[plan.changed[k]];
    const site::NoteMeta* note = vault_.Find(pn.path);
    const markdown::RenderResult& m = change.meta[k];
    bus::NoteEvent e{c->site, pn.path, note->url, c->version, !note->published, note->title, m.tags,
                     note->published ? m.text : "", {}};
    if (note->published) {
      for (const markdown::Heading& h : m.headings) {
        e.sections.push_back({h.text, h.id, static_cast<uint32_t>(std::min<size_t>(h.text_offset, m.text.size()))});
      }
    }
    add(e);
  }
  for (size_t k = 0; k < plan.deletes.size(); ++k) {
    add(bus::NoteEvent{c->site, plan.deletes[k], change.deleted_urls[k], c->version, true, "", {}, "", {}});
  }
  flush();
}

std::vector<NoteReport> SiteWriter::Reports(const PushRequest& req,
                                            const std::map<std::string, std::vector<std::string>>& warnings,
                                            const std::set<std::string>& rewritten) const {
  std::vector<NoteReport> out;
  for (const auto& note : req.notes) {
    const site::NoteMeta* m = vault_.Find(note.path);
    NoteReport r{NoteReport::Kind::kPushed, note.path, m ? m->url : "", !m || m->published, {}};
    if (auto it = warnings.find(note.path); it != warnings.end()) {
      r.warnings = it->second;
    } else if (!rewritten.count(note.path)) {  // rewritten without warnings: none
      if (auto held = warnings_.find(note.path); held != warnings_.end()) r.warnings = held->second;
    }
    out.push_back(std::move(r));
  }
  for (const auto& a : req.attachments) {
    const site::AttachmentMeta* m = vault_.FindAttachment(a.path);
    out.push_back({NoteReport::Kind::kAttachment, a.path, m ? m->url : "", true, {}});
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
    out.push_back({NoteReport::Kind::kRerendered, path, m->url, true, list});
  }
  return out;
}

}  // namespace folio::ingest
