// SiteState: the in-memory model of one site as last committed: the vault
// (notes, attachments, URLs, the link index), the related lists, the
// version, the site's strict-line-breaks setting, the fingerprints of the
// generated pages as last published and each note's committed warnings.
// StateTxn: the one way a change moves it. A push (or a related-list
// update, or Start) applies its change to the model through a StateTxn,
// which records how to undo each step (the prior metadata of the notes
// and attachments it touched, the notes' moved out of the vault rather
// than copied; the prior related lists and setting: the size of the
// change, never a copy of the vault); Committed() keeps the
// change once the SQLite commit holds, and a StateTxn destroyed without it
// rolls the model back to what the store holds.
//
// Ownership: each SiteWriter owns one SiteState; a StateTxn borrows it for
// one change, and at most one StateTxn exists per SiteState at a time.
// Threads: ingest's writer thread mutates both; const methods of SiteState
// may run on the render threads (ThreadPool) while nobody mutates.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "folio/core/status.h"
#include "folio/site/layout.h"
#include "folio/site/vault.h"
#include "related.h"
#include "store.h"

namespace folio::ingest {

// Generated page URL -> (fingerprint, status); in a delta, nullopt = gone.
using ListingFp = std::pair<uint64_t, uint16_t>;
using ListingDelta = std::map<std::string, std::optional<ListingFp>>;
// How the notes a change touches appeared in related lists before it.
using RelatedBefore = std::map<std::string, std::optional<site::LinkItem>, std::less<>>;

class SiteState {
 public:
  SiteState() = default;
  SiteState(const SiteState&) = delete;
  SiteState& operator=(const SiteState&) = delete;

  // Loads the version, vault, attachments, warnings, setting (else
  // `default_strict`) and related lists of `site` from the store. Store
  // errors as Status (the model is then partly loaded: call again).
  // REQUIRES: no StateTxn open.
  Status Load(Store* store, const std::string& site, bool default_strict);

  const site::Vault& vault() const { return vault_; }
  const RelatedIndex& related() const { return related_; }
  // (References: SiteWriter keeps views of these for site_manifest.cc.)
  const int64_t& version() const { return version_; }
  const bool& strict_line_breaks() const { return strict_line_breaks_; }
  const std::map<std::string, ListingFp>& listing_fp() const { return listing_fp_; }
  // Each note's warnings as committed (notes without warnings absent), so a
  // push's report reads no row.
  const std::map<std::string, std::vector<std::string>, std::less<>>& warnings() const { return warnings_; }

  // How a note appears in related lists now (nullopt: it has no page).
  std::optional<site::LinkItem> RelatedItem(std::string_view path) const;
  // The related-list appearance of those `paths` some list names, before a change.
  RelatedBefore CaptureRelatedBefore(const std::vector<std::string>& paths) const;
  // After the vault changed: adds to *render the published notes whose shown
  // related list differs from `before`; returns how many it added.
  size_t AddRelatedImpact(const RelatedBefore& before, std::set<std::string>* render) const;

 private:
  friend class StateTxn;

  site::Vault vault_;
  RelatedIndex related_;
  int64_t version_ = 0;
  bool strict_line_breaks_ = false;  // the site's own setting, else SiteOptions::strict_line_breaks
  std::map<std::string, ListingFp> listing_fp_;  // generated page URL -> as last published
  std::map<std::string, std::vector<std::string>, std::less<>> warnings_;
  bool in_txn_ = false;
};

class StateTxn {
 public:
  // REQUIRES: no other StateTxn open on *state.
  explicit StateTxn(SiteState* state);
  // Without Committed(): every step is undone, newest first.
  ~StateTxn();
  StateTxn(const StateTxn&) = delete;
  StateTxn& operator=(const StateTxn&) = delete;

  const SiteState& state() const { return *state_; }

  // site::Vault::ApplyAttachments on the live vault, undoable.
  std::set<std::string> ApplyAttachments(std::vector<site::AttachmentMeta> upserts,
                                         const std::vector<std::string>& deletes,
                                         std::vector<std::string>* unused_urls);
  // site::Vault::Apply on the live vault, undoable.
  site::Impact ApplyNotes(std::vector<site::NoteMeta> upserts, const std::vector<std::string>& deletes);
  // RelatedIndex::Set, undoable; true when the sequence of paths changed.
  bool SetRelated(const std::string& path, std::vector<std::string> list);
  // The site's strict-line-breaks setting, undoable.
  void SetStrictLineBreaks(bool on);
  // The generated pages this change publishes (ListingBuilder's delta; all
  // of them anew when `force`): applied by Committed, dropped otherwise.
  void SetListings(bool force, ListingDelta delta);

  // `c` is committed (or, at Start, there was nothing to write): its version
  // and the warnings of its notes become the model's, the listings set
  // apply, and the steps are kept. REQUIRES: called at most once.
  void Committed(const Commit& c);

 private:
  void Rollback();

  SiteState* state_;
  bool done_ = false;
  // Per path touched, what it was before the first step that touched it
  // (nullopt: it did not exist).
  std::map<std::string, std::optional<site::NoteMeta>> notes_before_;
  std::map<std::string, std::optional<site::AttachmentMeta>> attachments_before_;
  std::map<std::string, std::vector<std::string>> related_before_;  // empty: had no list
  std::optional<bool> strict_before_;
  bool listings_force_ = false;
  std::optional<ListingDelta> listings_;
};

}  // namespace folio::ingest
