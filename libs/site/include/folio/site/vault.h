// Vault: ingest's in-memory model of one site's notes: URLs, the link index,
// resolved out-links and backlinks. It decides which pages a change affects,
// so a push re-renders exactly those (docs/architecture.md "A push").
//
// Ownership: ingest owns one Vault per site; it holds metadata only (no note
// text). Threading: mutate from one thread (ingest's writer); const methods
// (Resolve, Backlinks, Find) may run on many threads while nobody mutates.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "folio/markdown/links.h"
#include "folio/site/listing_index.h"
#include "folio/site/note_meta.h"

namespace folio::site {

// What a change set does to the site.
struct Impact {
  std::set<std::string> render;      // note paths whose pages must be re-rendered
  std::vector<std::string> deleted_urls;  // URLs a note left with no successor (410 Gone)
  // URLs a note left for another (a new permalink; a rename: a note deleted
  // and one added in the same change with the same bytes, permalink, the
  // old name among its aliases, or the deleted path as its renamed_from):
  // old -> new, for 301s.
  std::map<std::string, std::string> moved;
  bool home_changed = false;         // kept for callers; listings are diffed by content
  // Per pushed path: warnings about its URL (collision, reserved).
  std::map<std::string, std::vector<std::string>> url_warnings;
};

class Vault {
 public:
  Vault() = default;
  // Not copyable: the link maps hold views of notes_'s keys. Moving keeps
  // the map's nodes, so the views stay valid.
  Vault(const Vault&) = delete;
  Vault& operator=(const Vault&) = delete;
  Vault(Vault&&) = default;
  Vault& operator=(Vault&&) = default;

  // URL paths the edge answers itself; notes never get them.
  static bool IsReservedUrl(std::string_view url);

  // Loads a note as stored (url already assigned); call Rebuild() after the last.
  void Load(NoteMeta meta);
  // Recomputes the derived link state (out, backlinks) from scratch.
  void Rebuild();

  // Applies upserts (metadata of new or changed notes; `url` and `out` are
  // filled in here) and deletions (paths; unknown ones are ignored), and
  // returns what must be re-rendered. With `replaced`, the NoteMetas the
  // change overwrote or deleted are moved there (their out and embeds_out
  // emptied: Restore takes them as they are) instead of being destroyed, so
  // an undo record costs no copy. REQUIRES: no path both upserted and deleted.
  Impact Apply(std::vector<NoteMeta> upserts, const std::vector<std::string>& deletes,
               std::vector<NoteMeta>* replaced = nullptr);
  // Undoes an Apply whose change was not kept (ingest's failed commit):
  // puts `notes` back as they were before it, their url and created_ms as
  // given (not assigned again), and removes `remove` (notes it added). The
  // derived link state is recomputed as Apply does. REQUIRES: no path in
  // both; `notes` are NoteMetas this Vault held before that Apply.
  void Restore(std::vector<NoteMeta> notes, const std::vector<std::string>& remove);

  // Attachments: load as stored, or apply a change set. ApplyAttachments
  // returns the published notes that link to or embed an added, changed or
  // removed attachment (they must re-render) and fills *unused_urls with
  // asset URLs no attachment uses any more. Call before Apply() of notes.
  void LoadAttachment(AttachmentMeta meta);
  std::set<std::string> ApplyAttachments(std::vector<AttachmentMeta> upserts, const std::vector<std::string>& deletes,
                                         std::vector<std::string>* unused_urls);
  const AttachmentMeta* FindAttachment(std::string_view path) const;
  const std::map<std::string, AttachmentMeta, std::less<>>& attachments() const { return attachments_; }
  // The asset URL an attachment link/embed from note `from` lands on.
  std::optional<std::string> AttachmentUrl(std::string_view target, std::string_view from) const;
  static std::string AssetUrl(std::string_view sha256, std::string_view path);

  const NoteMeta* Find(std::string_view path) const;
  const std::map<std::string, NoteMeta, std::less<>>& notes() const { return notes_; }
  // Paths of published notes that link to `path`, sorted.
  std::vector<std::string> Backlinks(std::string_view path) const;
  // Calls fn(source note) for each note that links to `path`, in path order,
  // without copying the list (a hub note has one per note of the vault).
  template <typename Fn>
  void ForEachBacklink(std::string_view path, Fn&& fn) const {
    auto it = backlinks_.find(path);
    if (it == backlinks_.end()) return;
    const auto& sources = it->second;
    if (sources.size() * 16 < notes_.size()) {  // a few: look each up
      for (const auto& source : sources) {
        if (const NoteMeta* n = Find(source)) fn(*n);
      }
      return;
    }
    // Many (a hub): both are sorted by path, so walk them side by side.
    auto note = notes_.begin();
    for (const auto& source : sources) {
      while (note != notes_.end() && note->first < source) ++note;
      if (note == notes_.end()) return;
      if (note->first == source) fn(note->second);
    }
  }
  // Alias URL -> note path, for redirect pages (aliases whose URL no note owns).
  std::map<std::string, std::string> AliasRedirects() const;
  // The note path the alias URL redirects to, if it is one of those.
  std::optional<std::string> AliasRedirect(std::string_view url) const;
  // Resolves a link target from a note: the target note, if any.
  std::optional<markdown::Resolution> Resolve(std::string_view target, std::string_view from) const;
  // True when a root "index.md" provides the home page.
  bool HasIndexNote() const;
  // The published note at this URL, or nullptr.
  const NoteMeta* UrlOwner(std::string_view url) const;
  // The published notes in the orders and groups listings show them.
  const ListingIndex& listing_index() const { return listing_; }

 private:
  std::vector<std::string> ResolveAll(const std::vector<std::string>& targets, const std::string& from) const;
  std::string AssignUrl(const NoteMeta& n, std::vector<std::string>* warnings);
  // REQUIRES (SetOut, Unlink, AddLinker, List, Index): n is in notes_.
  void SetOut(NoteMeta& n, std::vector<std::string> out);
  void Unlink(NoteMeta& n);  // takes n out of backlinks_ and embedders_, clears out and embeds_out
  // The notes_ key equal to a stored note's path: what the link maps hold.
  std::string_view KeyOf(const NoteMeta& n) const;
  void Index(const NoteMeta& n);    // adds a published note to the link index and URL map
  void Unindex(const NoteMeta& n);
  void List(const NoteMeta& n);  // keeps listing_ in step with the published notes
  void Unlist(const NoteMeta& n);
  // Keeps linkers_ in step with a note's targets and embeds.
  void AddLinker(const NoteMeta& n);
  void RemoveLinker(const NoteMeta& n);
  // Notes embedding any of `paths`, transitively.
  std::set<std::string> EmbeddersOf(const std::set<std::string>& paths) const;
  // The steps of Apply, in order; ApplyState holds what the change set touched so far.
  struct ApplyState;
  void ApplyDelete(const std::string& path, ApplyState& s);
  void ApplyUpsert(NoteMeta& u, ApplyState& s);
  void PrivacyFlipped(const NoteMeta& old, ApplyState& s);
  void ReresolveLinks(ApplyState& s);
  void CollectRender(ApplyState& s) const;

  std::map<std::string, NoteMeta, std::less<>> notes_;
  bool restoring_ = false;  // within Restore: upserts keep their url and created_ms
  std::map<std::string, std::string_view, std::less<>> url_owner_;  // url -> path (a view of notes_'s key)
  // The sets of backlinks_, embedders_ and linkers_ (and listing_'s orders)
  // hold views of notes_'s keys (a note's path is stored once, not once per
  // link; issue 15): a note leaves every set before it leaves notes_.
  using PathSet = std::set<std::string_view>;
  std::map<std::string, PathSet, std::less<>> backlinks_;  // target -> sources
  std::map<std::string, PathSet, std::less<>> embedders_;  // target -> notes embedding it
  markdown::LinkIndex index_;
  // Dependency key (LinkIndex::DependencyKeys of a target or embed) -> the
  // notes whose links depend on it: when a name changes, only they are
  // resolved again, not the whole vault.
  std::map<std::string, PathSet, std::less<>> linkers_;
  std::map<std::string, AttachmentMeta, std::less<>> attachments_;
  ListingIndex listing_;
};

}  // namespace folio::site
