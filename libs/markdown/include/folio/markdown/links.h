// LinkIndex: resolves wikilink and markdown-link targets to notes, following
// docs/markdown.md "Resolution": relative path, then vault-root
// path, then file name anywhere (nearest note wins when names collide), then
// aliases; all ASCII-case-insensitive, with or without ".md".
//
// Ownership: the index copies what it is given. Threading: Add/Remove need
// exclusive access; Resolve is const and may run on many threads at once.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace folio::markdown {

struct Resolution {
  std::string path;        // vault path of the target note, e.g. "Folder/Note.md"
  bool ambiguous = false;  // several notes matched; the nearest was taken
};

class LinkIndex {
 public:
  // Adds or replaces a note (vault path with ".md") and its aliases.
  void Add(std::string_view path, const std::vector<std::string>& aliases = {});
  void Remove(std::string_view path);
  bool Contains(std::string_view path) const;
  size_t size() const { return paths_.size(); }

  // Resolves `target` (no "|display", no "#anchor"; may carry ".md" or a
  // folder) as linked from the note at `from_path`. nullopt if dangling.
  std::optional<Resolution> Resolve(std::string_view target, std::string_view from_path) const;

  // What resolution depends on, for callers that keep links resolved as
  // the index changes (site::Vault): a target can resolve differently only
  // after a path or alias with one of its DependencyKeys is added or
  // removed, and a note answers to its NameKeys. kAnyKey (a target whose
  // last segment is "", "." or "..") depends on every change. Pure.
  static constexpr std::string_view kAnyKey = "*";
  static std::vector<std::string> DependencyKeys(std::string_view target);
  static std::vector<std::string> NameKeys(std::string_view path, const std::vector<std::string>& aliases);

 private:
  // lower-cased path without ".md" -> real path
  std::map<std::string, std::string, std::less<>> paths_;
  // lower-cased file name without ".md" -> real paths having it
  std::map<std::string, std::vector<std::string>, std::less<>> names_;
  // lower-cased alias -> real paths
  std::map<std::string, std::vector<std::string>, std::less<>> aliases_;
  std::map<std::string, std::vector<std::string>, std::less<>> aliases_of_;  // path -> its aliases
};

}  // namespace folio::markdown
