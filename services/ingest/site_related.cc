// Related notes in SiteWriter: applying search's lists (ApplyRelated) and
// finding the pages a push changes through them (AddRelatedImpact).
#include <map>
#include <set>

#include "folio/core/log.h"
#include "folio/core/text.h"
#include "folio/core/time.h"
#include "site_writer.h"
#include "site_writer_internal.h"

namespace folio::ingest {
namespace {

std::vector<std::string> PathsOf(const std::vector<bus::RelatedEntry>& entries) {
  std::vector<std::string> out;
  out.reserve(entries.size());
  for (const auto& e : entries) out.push_back(e.path);
  return out;
}

}  // namespace

std::optional<site::LinkItem> SiteWriter::RelatedItem(std::string_view path) const {
  const site::NoteMeta* n = vault_.Find(path);
  if (!n || !n->published) return std::nullopt;
  return site::LinkItem{n->title, n->url, ""};
}

SiteWriter::RelatedBefore SiteWriter::CaptureRelatedBefore(const std::vector<std::string>& paths) const {
  RelatedBefore before;
  for (const auto& p : paths) {
    if (related_.ListedBy(p)) before[p] = RelatedItem(p);
  }
  return before;
}

size_t SiteWriter::AddRelatedImpact(const RelatedBefore& before, std::set<std::string>* render) const {
  // Notes listing a touched note whose appearance changed (title, URL, gone, back).
  std::set<std::string> candidates;
  for (const auto& [path, was] : before) {
    std::optional<site::LinkItem> now = RelatedItem(path);
    if (was.has_value() == now.has_value() && (!was || SameLinks({*was}, {*now}))) continue;
    const std::set<std::string>* by = related_.ListedBy(path);
    if (by) candidates.insert(by->begin(), by->end());
  }
  auto item_now = [this](std::string_view p) { return RelatedItem(p); };
  auto item_before = [&](std::string_view p) {
    auto it = before.find(p);
    return it != before.end() ? it->second : RelatedItem(p);
  };
  size_t added = 0;
  for (const auto& c : candidates) {
    if (render->count(c) || !RelatedItem(c)) continue;  // rendered anyway, or has no page
    const std::vector<std::string>* list = related_.Find(c);
    // Only a change within the shown prefix matters (a far entry may change freely).
    if (SameLinks(ShownRelated(*list, item_before), ShownRelated(*list, item_now))) continue;
    render->insert(c);
    ++added;
  }
  return added;
}

Result<size_t> SiteWriter::ApplyRelated(const bus::RelatedUpdate& update) {
  // The latest list per note (an update may name a note twice: later wins).
  std::map<std::string, const bus::RelatedList*> latest;
  for (const auto& l : update.lists) {
    if (Status s = CheckVaultPath(l.path); !s.ok()) {
      log::Warn("related list for an invalid path skipped", {{"site", options_.site}, {"error", s.message()}});
      continue;
    }
    latest[l.path] = &l;
  }
  auto item_now = [this](std::string_view p) { return RelatedItem(p); };
  Commit c;
  c.site = options_.site;
  std::set<std::string> render;
  for (const auto& [path, l] : latest) {
    std::vector<bus::RelatedEntry> entries = NormalizeRelated(path, l->related);
    std::vector<std::string> paths = PathsOf(entries);
    const std::vector<std::string>* old = related_.Find(path);
    if (old ? *old == paths : paths.empty()) continue;  // same notes in the same order: scores only
    std::vector<site::LinkItem> shown_before = old ? ShownRelated(*old, item_now) : std::vector<site::LinkItem>{};
    std::vector<site::LinkItem> shown_after = ShownRelated(paths, item_now);
    if (RelatedItem(path) && !SameLinks(shown_before, shown_after)) render.insert(path);
    related_.Set(path, std::move(paths));
    c.related.push_back({path, std::move(entries)});
  }
  if (c.related.empty()) return size_t{0};

  // Lists changed but no page shows a difference: store them, publish nothing.
  c.version = render.empty() ? version_ : version_ + 1;
  if (Status s = RenderInto(std::vector<std::string>(render.begin(), render.end()), NowUnixMs() / 1000, &c); !s.ok()) {
    ReloadState();
    return s;
  }
  if (!render.empty()) {
    c.outbox.push_back({0, OutboxMsg::kKvPut, internal::MetaKey(c.site), std::to_string(c.version), ""});
  }
  bool published = false;
  if (Status s = CommitAndPublish(&c, &published); !s.ok()) return s;
  related_lists_->Increment(static_cast<double>(c.related.size()));
  related_rerendered_->Increment(static_cast<double>(render.size()));
  rendered_total_->Increment(static_cast<double>(render.size()));
  return render.size();
}

}  // namespace folio::ingest
