// SiteState and StateTxn (site_state.h): the undo records of a change are
// the prior metadata of what it touched, put back with Vault::Restore, so
// a failed commit costs the size of the change, not a reload of the site.
#include "site_state.h"

#include <cstdlib>

#include "folio/core/log.h"

namespace folio::ingest {

Status SiteState::Load(Store* store, const std::string& site, bool default_strict) {
  auto version = store->Version(site);
  if (!version.ok()) return version.status();
  version_ = *version;
  vault_ = site::Vault();
  related_.Clear();
  if (Status s = store->LoadVault(site, &vault_); !s.ok()) return s;
  if (Status s = store->LoadAttachments(site, &vault_); !s.ok()) return s;
  auto warnings = store->LoadWarnings(site);
  if (!warnings.ok()) return warnings.status();
  warnings_.clear();
  for (auto& [path, list] : *warnings) warnings_[path] = std::move(list);
  auto strict = store->StrictLineBreaks(site);
  if (!strict.ok()) return strict.status();
  strict_line_breaks_ = strict->value_or(default_strict);
  auto lists = store->LoadRelated(site);
  if (!lists.ok()) return lists.status();
  for (auto& l : *lists) {
    std::vector<std::string> paths;
    for (auto& e : l.related) paths.push_back(std::move(e.path));
    related_.Set(l.path, std::move(paths));
  }
  return Status::Ok();
}

std::optional<site::LinkItem> SiteState::RelatedItem(std::string_view path) const {
  const site::NoteMeta* n = vault_.Find(path);
  if (!n || !site::IsListed(*n)) return std::nullopt;  // a private note is in no related list
  return site::LinkItem{n->title, n->url, ""};
}

RelatedBefore SiteState::CaptureRelatedBefore(const std::vector<std::string>& paths) const {
  RelatedBefore before;
  for (const auto& p : paths) {
    if (related_.ListedBy(p)) before[p] = RelatedItem(p);
  }
  return before;
}

size_t SiteState::AddRelatedImpact(const RelatedBefore& before, std::set<std::string>* render) const {
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

StateTxn::StateTxn(SiteState* state) : state_(state) {
  if (state_->in_txn_) {
    log::Error("a second StateTxn on one site", {});
    std::abort();  // a broken invariant: two changes would undo each other's steps
  }
  state_->in_txn_ = true;
}

StateTxn::~StateTxn() {
  if (!done_) Rollback();
  state_->in_txn_ = false;
}

std::set<std::string> StateTxn::ApplyAttachments(std::vector<site::AttachmentMeta> upserts,
                                                 const std::vector<std::string>& deletes,
                                                 std::vector<std::string>* unused_urls) {
  const site::Vault& v = state_->vault_;
  auto remember = [&](const std::string& path) {
    if (attachments_before_.count(path)) return;
    const site::AttachmentMeta* old = v.FindAttachment(path);
    attachments_before_.emplace(path, old ? std::optional<site::AttachmentMeta>(*old) : std::nullopt);
  };
  for (const auto& u : upserts) remember(u.path);
  for (const auto& d : deletes) remember(d);
  return state_->vault_.ApplyAttachments(std::move(upserts), deletes, unused_urls);
}

site::Impact StateTxn::ApplyNotes(std::vector<site::NoteMeta> upserts, const std::vector<std::string>& deletes) {
  // Paths new to the vault are remembered as absent; the prior metadata of
  // the others comes back from Apply, moved out of the vault (no copy).
  const site::Vault& v = state_->vault_;
  auto absent = [&](const std::string& path) {
    if (!notes_before_.count(path) && !v.Find(path)) notes_before_.emplace(path, std::nullopt);
  };
  for (const auto& u : upserts) absent(u.path);
  for (const auto& d : deletes) absent(d);
  std::vector<site::NoteMeta> replaced;
  site::Impact impact = state_->vault_.Apply(std::move(upserts), deletes, &replaced);
  for (auto& before : replaced) {
    std::string path = before.path;
    notes_before_.try_emplace(std::move(path), std::move(before));  // the first state per path wins
  }
  return impact;
}

bool StateTxn::SetRelated(const std::string& path, std::vector<std::string> list) {
  if (!related_before_.count(path)) {
    const std::vector<std::string>* old = state_->related_.Find(path);
    related_before_.emplace(path, old ? *old : std::vector<std::string>{});
  }
  return state_->related_.Set(path, std::move(list));
}

void StateTxn::SetStrictLineBreaks(bool on) {
  if (!strict_before_) strict_before_ = state_->strict_line_breaks_;
  state_->strict_line_breaks_ = on;
}

void StateTxn::SetListings(bool force, ListingDelta delta) {
  listings_force_ = force;
  listings_ = std::move(delta);
}

void StateTxn::Committed(const Commit& c) {
  done_ = true;
  state_->version_ = c.version;
  auto& warnings = state_->warnings_;
  for (const NoteRow& row : c.notes) {
    if (row.warnings.empty()) {
      warnings.erase(row.meta.path);
    } else {
      warnings[row.meta.path] = row.warnings;
    }
  }
  for (const auto& path : c.deleted_notes) warnings.erase(path);
  if (!listings_) return;
  auto& fps = state_->listing_fp_;
  if (listings_force_) fps.clear();
  for (auto& [url, fp] : *listings_) {
    if (fp) fps[url] = *fp;
    else fps.erase(url);
  }
}

void StateTxn::Rollback() {
  site::Vault& v = state_->vault_;
  // Attachments first: the notes' links are then resolved against the
  // names they were resolved against before the change.
  if (!attachments_before_.empty()) {
    std::vector<site::AttachmentMeta> back;
    std::vector<std::string> added;
    for (auto& [path, before] : attachments_before_) {
      if (before) back.push_back(std::move(*before));
      else if (v.FindAttachment(path)) added.push_back(path);
    }
    std::vector<std::string> unused;
    (void)v.ApplyAttachments(std::move(back), added, &unused);
  }
  if (!notes_before_.empty()) {
    std::vector<site::NoteMeta> back;
    std::vector<std::string> added;
    for (auto& [path, before] : notes_before_) {
      if (before) back.push_back(std::move(*before));
      else if (v.Find(path)) added.push_back(path);
    }
    v.Restore(std::move(back), added);
  }
  for (auto& [path, list] : related_before_) state_->related_.Set(path, std::move(list));
  if (strict_before_) state_->strict_line_breaks_ = *strict_before_;
}

}  // namespace folio::ingest
