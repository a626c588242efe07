// NoteMeta and AttachmentMeta: what ingest knows of one note or attachment
// of a site without its text (the Vault holds one per file; the
// ListingIndex orders them). Plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace folio::site {

struct NoteMeta {
  std::string path;                  // vault path "Folder/Note.md"
  std::string url;                   // canonical URL path, assigned by the Vault ("" if unpublished)
  std::string sha256;                // of the raw content
  std::string title;
  std::vector<std::string> targets;  // link and embed targets as written (decoded, no anchor), unique
  std::vector<std::string> embeds;   // the subset of targets that are ![[embeds]]
  std::vector<std::string> aliases;
  std::vector<std::string> tags;     // frontmatter + inline, without '#'
  std::string permalink;             // frontmatter permalink/slug ("" = from the path)
  std::vector<std::string> anchors;  // heading ids and "^block" ids, for checking [[note#anchor]]
  bool published = true;             // false for publish: false / draft: true
  // publish: private (README "Private notes"): the note has a page (at
  // `url`, served to signed-in readers only) but is unlisted: no listing,
  // feed, sitemap, graph, search, backlink, related list or embed on a
  // public page shows it. Only meaningful while `published`.
  bool private_note = false;
  int64_t updated_ms = 0;            // when the content last changed
  int64_t created_ms = 0;            // when ingest first saw the note (kept across changes; 0 = unknown)
  int64_t date_ms = 0;               // frontmatter date/created (0 = none)
  int64_t modified_ms = 0;           // frontmatter updated/modified (0 = none)
  int64_t version = 0;               // push version that last changed it
  // Only on an upsert given to Vault::Apply, never kept: the path of a note
  // deleted in the same change that this new note replaces (a rename with
  // edits, found by comparing their texts; ingest's rename_match.h).
  std::string renamed_from;
  std::vector<std::string> out;      // derived: resolved target paths, sorted, unique
  std::vector<std::string> embeds_out;  // derived: resolved embed targets, sorted, unique
};

// Whether listings, feeds, the graph and other notes' pages may show the
// note: published and not private.
inline bool IsListed(const NoteMeta& n) { return n.published && !n.private_note; }

// The dates listings show: updated (/recent's order, the sitemap's lastmod)
// is the frontmatter's updated/modified, else when the content last changed;
// published (RSS's pubDate) is the frontmatter's date/created, else when
// ingest first saw the note.
int64_t UpdatedMs(const NoteMeta& n);
int64_t PublishedMs(const NoteMeta& n);

// A non-note file of the vault (image, audio, video, PDF, ...).
struct AttachmentMeta {
  std::string path;    // vault path "Media/pic.png"
  std::string sha256;  // of the bytes
  std::string url;     // "/assets/<first 16 hex of sha256>/<file name>"
};

}  // namespace folio::site
