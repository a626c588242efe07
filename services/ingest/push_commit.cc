// PushAssembler and CommitChange (push_commit.h).
#include "push_commit.h"

#include <algorithm>
#include <set>

#include "folio/bus/note_schema.h"
#include "folio/bus/page_schema.h"
#include "folio/core/log.h"
#include "folio/http/attachment.h"
#include "folio/site/csp.h"
#include "folio/site/layout.h"
#include "blob_upload.h"
#include "writer_parts.h"

namespace folio::ingest {

using internal::kAssetCache;
using internal::kHtml;

void PushAssembler::Assemble(const PushRequest& req, const PushPlan& plan, VaultChange* change,
                             std::vector<Rendered>* out, const Sources& sources, int64_t now_s, StateTxn* txn,
                             Commit* c) const {
  renderer_->AddRendered(c, out, &change->warnings);
  // Rows for every changed note (unpublished ones too: the manifest lists
  // them) and the new warnings of re-rendered ones.
  // Their paths, in order: the pushed notes and those with new warnings
  // (never a walk over the whole vault).
  std::set<std::string> pushed, rows;
  for (size_t i : plan.changed) pushed.insert(req.notes[i].path);
  rows = pushed;
  for (const auto& [path, w] : change->warnings) rows.insert(path);
  for (const auto& path : rows) {
    const site::NoteMeta* m = state_->vault().Find(path);
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
  std::set<std::string> taken;
  for (const auto& p : c->pages) taken.insert(p.url);
  AddLeftUrls(*change, now_s, taken, c);
  for (const auto& d : plan.deletes) {
    c->deleted_notes.push_back(d);
    if (txn->SetRelated(d, {})) c->related.push_back({d, {}});  // search drops it too
  }
  AddAssets(plan, *change, now_s, &taken, c);
}

void PushAssembler::AddLeftUrls(const VaultChange& change, int64_t now_s, const std::set<std::string>& taken,
                                Commit* c) const {
  // Pages a note left: a 301 where it moved (a new permalink, or a rename:
  // deleted and added again with the same bytes, permalink or old name as an
  // alias), else 410 Gone, so readers and crawlers learn it was removed.
  for (const auto& [from, to] : change.impact.moved) {
    if (taken.count(from)) continue;
    internal::AddPage(c, from, {301, kHtml, "public, max-age=300", site::PageCsp(), to, now_s, c->version},
                      site::AssembleRedirectPage(to));
  }
  for (const auto& url : change.impact.deleted_urls) {
    if (taken.count(url) || change.impact.moved.count(url)) continue;
    internal::AddPage(c, url, {410, kHtml, "public, max-age=300", site::PageCsp(), "", now_s, c->version},
                      site::AssembleGonePage(renderer_->Info()));  // with the vault's publish.css
  }
}

void PushAssembler::AddAssets(const PushPlan& plan, const VaultChange& change, int64_t now_s,
                              std::set<std::string>* taken, Commit* c) const {
  // Assets: immutable, content-addressed URLs; an old URL goes once unused.
  for (size_t k = 0; k < plan.att_upserts.size(); ++k) {
    const site::AttachmentMeta* m = state_->vault().FindAttachment(plan.att_upserts[k].path);
    if (!options_->storage.url.empty()) {
      c->attachments.push_back({*m, ""});  // the bytes live in storage; edges fetch them from there
      continue;
    }
    const std::string& bytes = plan.att_bytes[k]->data;
    if (!taken->count(m->url)) {
      internal::AddPage(c, m->url, {200, AttachmentContentType(m->path), kAssetCache,
                                    std::string(http::kUntrustedCsp), "", now_s, c->version},
                        bytes);
      taken->insert(m->url);
    }
    c->attachments.push_back({*m, bytes});
  }
  for (const auto& url : change.unused_asset_urls) {
    if (taken->count(url)) continue;
    c->deleted_pages.push_back(url);
    c->outbox.push_back({0, OutboxMsg::kKvDelete, bus::PageKey(c->site, url), "", ""});
  }
  c->deleted_attachments = plan.att_deletes;
}

namespace {

// What search learns a note's other names from: its aliases, and the text
// of its links to other notes (resolved now, after the push changed the
// vault), each (target, text) once; and the note's language.
void AddSearchHints(const site::Vault& vault, const std::string& path, const markdown::RenderResult& m,
                    bus::NoteEvent* e) {
  for (const std::string& a : m.frontmatter.aliases) {
    if (e->aliases.size() == bus::kMaxNoteEventAliases) break;
    e->aliases.push_back(a);
  }
  e->lang = m.frontmatter.lang;
  std::set<std::pair<std::string, std::string>> seen;
  for (const markdown::LinkRef& l : m.links) {
    if (e->links.size() == bus::kMaxNoteEventLinks) break;
    if (l.embed || l.target.empty()) continue;
    auto r = vault.Resolve(l.target, path);
    if (!r || r->path == path) continue;
    const site::NoteMeta* target = vault.Find(r->path);
    if (target == nullptr || !site::IsListed(*target)) continue;  // search never hears of a private note
    if (seen.emplace(r->path, l.text).second) e->links.push_back({r->path, l.text});
  }
}

}  // namespace

void PushAssembler::AddNoteEvents(const PushRequest& req, const PushPlan& plan, const VaultChange& change,
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
    const site::NoteMeta* note = state_->vault().Find(pn.path);
    const markdown::RenderResult& m = change.meta[k];
    bus::NoteEvent e;
    e.site = c->site;
    e.path = pn.path;
    e.url = note->url;
    e.version = c->version;
    // A private note is never searchable: search hears it as deleted (a
    // note that turns private leaves the index), with no title or text.
    const bool listed = site::IsListed(*note);
    e.deleted = !listed;
    if (listed) {
      e.title = note->title;
      e.tags = m.tags;
      e.text = m.text;
      for (const markdown::Heading& h : m.headings) {
        e.sections.push_back({h.text, h.id, static_cast<uint32_t>(std::min<size_t>(h.text_offset, m.text.size()))});
      }
      AddSearchHints(state_->vault(), pn.path, m, &e);
    }
    add(e);
  }
  for (size_t k = 0; k < plan.deletes.size(); ++k) {
    bus::NoteEvent e;
    e.site = c->site;
    e.path = plan.deletes[k];
    e.url = change.deleted_urls[k];
    e.version = c->version;
    e.deleted = true;
    add(e);
  }
  flush();
}

std::vector<NoteReport> PushAssembler::Reports(const PushRequest& req, const WarningsByPath& warnings,
                                               const std::set<std::string>& rewritten) const {
  const site::Vault& vault = state_->vault();
  std::vector<NoteReport> out;
  for (const auto& note : req.notes) {
    const site::NoteMeta* m = vault.Find(note.path);
    NoteReport r{NoteReport::Kind::kPushed, note.path, m ? m->url : "", !m || m->published, {}};
    if (auto it = warnings.find(note.path); it != warnings.end()) {
      r.warnings = it->second;
    } else if (!rewritten.count(note.path)) {  // rewritten without warnings: none
      if (auto held = state_->warnings().find(note.path); held != state_->warnings().end()) r.warnings = held->second;
    }
    out.push_back(std::move(r));
  }
  for (const auto& a : req.attachments) {
    const site::AttachmentMeta* m = vault.FindAttachment(a.path);
    out.push_back({NoteReport::Kind::kAttachment, a.path, m ? m->url : "", true, {}});
  }
  // Notes re-rendered by this push without being in it (their links now
  // resolve elsewhere, say): their warnings changed, so report them too.
  // A client pushing in batches lets the latest report for a path win.
  std::set<std::string_view> pushed;
  for (const auto& note : req.notes) pushed.insert(note.path);
  for (const auto& [path, list] : warnings) {
    if (pushed.count(path)) continue;
    const site::NoteMeta* m = vault.Find(path);
    if (!m) continue;
    out.push_back({NoteReport::Kind::kRerendered, path, m->url, true, list});
  }
  return out;
}

Status CommitChange(Store* store, Commit* c, StateTxn* txn) {
  if (Status s = store->Apply(c); !s.ok()) {
    if (s.code() == Code::kNoSpace) {
      log::Error("change not committed: the disk is full", {{"site", c->site}, {"error", s.message()}});
      return Status::NoSpace("ingest's disk is full: the push was not applied and nothing was changed; "
                             "retry once space returns");
    }
    return s;
  }
  txn->Committed(*c);
  return Status::Ok();
}

}  // namespace folio::ingest
