// The first phases of a push (SiteWriter::Push, site_writer.h): the plan
// (which notes and attachments changed, by hashes alone), the first pass
// (the one md4c render of each changed note, its links left open:
// folio/markdown/deferred.h) and the change applied to the
// model through the push's StateTxn, which says what else must change:
// pages linking to them, listings, related lists.
//
// Plain data and free functions. Threads: called on ingest's writer
// thread; PlanPush and ParseChanged fan out to the ThreadPool and join
// before returning. A PushPlan borrows the PushRequest it was made from.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "folio/core/thread_pool.h"
#include "folio/markdown/deferred.h"
#include "folio/markdown/render.h"
#include "folio/site/listings.h"
#include "folio/site/vault.h"
#include "push_request.h"
#include "site_state.h"

namespace folio::ingest {

// What a push changes, decided by hashes alone.
struct PushPlan {
  std::vector<std::string> sha;        // of each req.notes[i]
  std::vector<size_t> changed;         // indexes into req.notes of new or changed notes
  std::vector<std::string> deletes;    // notes to delete that the vault has
  std::vector<site::AttachmentMeta> att_upserts;  // new or changed attachments
  std::vector<const PushAttachment*> att_bytes;   // their bytes (parallel to att_upserts; borrowed from the request)
  std::vector<std::string> att_deletes;           // attachments to delete that the vault has
  // Added note path -> the deleted note whose text it mostly repeats: a
  // rename with edits (rename_match.h FindRenames; empty until it runs).
  std::map<std::string, std::string> renamed_from;
  bool empty() const { return changed.empty() && deletes.empty() && att_upserts.empty() && att_deletes.empty(); }
};

// The first pass over a push's changed notes: each rendered once, with its
// links left open. Its metadata changes the model; the render pass fills in
// the links (PageRenderer::RenderNotes) instead of rendering again.
struct FirstPass {
  std::vector<markdown::RenderResult> meta;    // of each plan.changed note (html with open links)
  std::vector<markdown::DeferredLinks> links;  // their questions, parallel to meta
  bool strict_line_breaks = false;             // the setting they were rendered with
};

// What applying a plan to the vault did, and what it asks for.
struct VaultChange {
  std::vector<markdown::RenderResult> meta;   // first pass of each plan.changed note
  std::vector<markdown::DeferredLinks> links; // its open links, parallel to meta
  bool strict_line_breaks = false;            // the first pass's setting
  std::vector<std::string> deleted_urls;      // URL each plan.deletes note had
  std::vector<std::string> unused_asset_urls; // asset URLs no attachment has any more
  site::Impact impact;                        // notes to render, URLs moved or gone
  site::ListingFilter dirty;                  // listings the change can alter
  size_t related_renders = 0;                 // of impact.render, added for related lists
  bool publish_css_toggled = false;           // publish.css arrived or left: every page changes
  std::map<std::string, std::vector<std::string>> warnings;  // per path, this push
};

// The plan of `req` against `vault` (hashes in parallel on `pool`). Cannot fail.
PushPlan PlanPush(const PushRequest& req, const site::Vault& vault, ThreadPool* pool);

// The first pass over each plan.changed note, in parallel: the full
// render (highlighting too) with `strict_line_breaks`, links left open.
// A note whose render crashes the process is named by its crash mark
// (crashed_notes.h) under `site`. Cannot fail.
FirstPass ParseChanged(const PushRequest& req, const PushPlan& plan, const std::string& site, bool strict_line_breaks,
                       ThreadPool* pool);

// Applies the plan to the model through *txn (attachments, then notes,
// as of `version` at `now_ms`) and collects what it affects: pages to
// render (links, attachments, related lists, publish.css), listings,
// URL warnings. Cannot fail; the txn undoes it if the push is not committed.
VaultChange ApplyToVault(const PushRequest& req, const PushPlan& plan, FirstPass first,
                         int64_t now_ms, int64_t version, StateTxn* txn);

}  // namespace folio::ingest
