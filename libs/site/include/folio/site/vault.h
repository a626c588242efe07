// Vault: ingest's in-memory model of one site's notes: URLs, the link index,
// resolved out-links and backlinks. It decides which pages a change affects,
// so a push re-renders exactly those (DESIGN "Re-renders only what a push
// affects").
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

namespace folio::site {

struct NoteMeta {
  std::string path;                  // vault path "Folder/Note.md"
  std::string url;                   // canonical URL path, assigned by the Vault
  std::string sha256;                // of the raw content
  std::string title;
  std::vector<std::string> targets;  // link targets as written (decoded, no anchor), unique
  std::vector<std::string> aliases;
  int64_t updated_ms = 0;            // when the content last changed
  int64_t version = 0;               // push version that last changed it
  std::vector<std::string> out;      // derived: resolved target paths, sorted, unique
};

// What a change set does to the site.
struct Impact {
  std::set<std::string> render;      // note paths whose pages must be re-rendered
  std::vector<std::string> deleted_urls;  // URLs whose pages must be deleted
  bool home_changed = false;         // the generated home listing must be re-rendered
  // Per pushed path: warnings about its URL (collision, reserved).
  std::map<std::string, std::vector<std::string>> url_warnings;
};

class Vault {
 public:
  // URL paths the edge answers itself; notes never get them.
  static bool IsReservedUrl(std::string_view url);

  // Loads a note as stored (url already assigned); call Rebuild() after the last.
  void Load(NoteMeta meta);
  // Recomputes the derived link state (out, backlinks) from scratch.
  void Rebuild();

  // Applies upserts (metadata of new or changed notes; `url` and `out` are
  // filled in here) and deletions (paths; unknown ones are ignored), and
  // returns what must be re-rendered. REQUIRES: no path both upserted and deleted.
  Impact Apply(std::vector<NoteMeta> upserts, const std::vector<std::string>& deletes);

  const NoteMeta* Find(std::string_view path) const;
  const std::map<std::string, NoteMeta, std::less<>>& notes() const { return notes_; }
  // Paths of notes that link to `path`, sorted.
  std::vector<std::string> Backlinks(std::string_view path) const;
  // Resolves a link target from a note: the target note, if any.
  std::optional<markdown::Resolution> Resolve(std::string_view target, std::string_view from) const;
  // True when a root "index.md" provides the home page.
  bool HasIndexNote() const;

 private:
  std::vector<std::string> ResolveAll(const NoteMeta& n) const;
  std::string AssignUrl(const std::string& path, std::vector<std::string>* warnings);
  void SetOut(NoteMeta& n, std::vector<std::string> out);

  std::map<std::string, NoteMeta, std::less<>> notes_;
  std::map<std::string, std::string, std::less<>> url_owner_;  // url -> path
  std::map<std::string, std::set<std::string>, std::less<>> backlinks_;  // target -> sources
  markdown::LinkIndex index_;
};

}  // namespace folio::site
