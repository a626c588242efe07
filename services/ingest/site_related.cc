// SiteWriter::ApplyRelated: search's related lists stored, and the pages
// whose shown list changes re-rendered (the lists' part of the model is
// SiteState's; what a push changes through them: SiteState::AddRelatedImpact).
#include <map>
#include <set>

#include "folio/core/log.h"
#include "folio/core/text.h"
#include "folio/core/time.h"
#include "site_writer.h"
#include "writer_parts.h"

namespace folio::ingest {
namespace {

std::vector<std::string> PathsOf(const std::vector<bus::RelatedEntry>& entries) {
  std::vector<std::string> out;
  out.reserve(entries.size());
  for (const auto& e : entries) out.push_back(e.path);
  return out;
}

// The latest list per note (an update may name a note twice: later wins);
// lists for invalid paths are skipped.
std::map<std::string, const bus::RelatedList*> LatestLists(const bus::RelatedUpdate& update) {
  std::map<std::string, const bus::RelatedList*> latest;
  for (const auto& l : update.lists) {
    if (Status s = CheckVaultPath(l.path); !s.ok()) {
      log::Warn("related list for an invalid path skipped", {{"site", update.site}, {"error", s.message()}});
      continue;
    }
    latest[l.path] = &l;
  }
  return latest;
}

}  // namespace

Result<size_t> SiteWriter::ApplyRelated(const bus::RelatedUpdate& update) {
  auto item_now = [this](std::string_view p) { return state_.RelatedItem(p); };
  StateTxn txn(&state_);  // undone unless committed
  Commit c;
  c.site = options_.site;
  c.access = PageAccessOf(options_.prefs);
  std::set<std::string> render;
  for (const auto& [path, l] : LatestLists(update)) {
    std::vector<bus::RelatedEntry> entries = NormalizeRelated(path, l->related);
    std::vector<std::string> paths = PathsOf(entries);
    const std::vector<std::string>* old = state_.related().Find(path);
    if (old ? *old == paths : paths.empty()) continue;  // same notes in the same order: scores only
    std::vector<site::LinkItem> shown_before = old ? ShownRelated(*old, item_now) : std::vector<site::LinkItem>{};
    std::vector<site::LinkItem> shown_after = ShownRelated(paths, item_now);
    if (state_.RelatedItem(path) && !SameLinks(shown_before, shown_after)) render.insert(path);
    txn.SetRelated(path, std::move(paths));
    c.related.push_back({path, std::move(entries)});
  }
  if (c.related.empty()) return size_t{0};

  // Lists changed but no page shows a difference: store them, publish nothing.
  c.version = render.empty() ? state_.version() : state_.version() + 1;
  std::vector<std::string> paths(render.begin(), render.end());
  if (Status s = renderer_.RenderInto(paths, NowUnixMs() / 1000, &c); !s.ok()) return s;
  if (!render.empty()) {
    c.outbox.push_back({0, OutboxMsg::kKvPut, internal::MetaKey(c.site), std::to_string(c.version), ""});
  }
  bool published = false;
  if (Status s = CommitAndPublish(&c, &txn, &published); !s.ok()) return s;
  related_lists_->Increment(static_cast<double>(c.related.size()));
  related_rerendered_->Increment(static_cast<double>(render.size()));
  rendered_total_->Increment(static_cast<double>(render.size()));
  return render.size();
}

}  // namespace folio::ingest
