// Renders one Obsidian-flavoured markdown note to an HTML fragment, with
// md4c's md_parse and our own renderer (md4c-html neither resolves wikilinks
// nor cleans URLs). Output is safe to embed: raw HTML from the note passes a
// whitelist sanitiser (see sanitize.h) and link URLs are scheme-checked.
//
// Supported: CommonMark, tables, strikethrough, task lists, [[wikilinks]]
// ([[t]], [[t|alias]], [[t#Heading]], [[folder/t]], [[t.md]]), markdown links
// to notes ([x](Other%20note.md)), YAML frontmatter, headings with ids, and
// Obsidian's embeds, callouts, ==highlights==, %%comments%%, #tags, ^block-ids,
// footnotes, $math$ (MathML) and mermaid fences (HTML shapes: README.md).
// Links that resolve become <a href="URL" class="internal-link">; dangling
// ones become <span class="link-dead is-unresolved" title="...">text</span>
// plus a warning. External links get class="external-link" rel="noopener". javascript:/data:/vbscript: URLs are
// dropped (rendered as dead text).
//
// Threading: RenderNote is reentrant; the resolver is called on the calling
// thread only. md.h is included only in src/.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "folio/markdown/frontmatter.h"

namespace folio::markdown {

struct RenderOptions;

// Given a link target (e.g. "Folder/Note", "Other note.md", already
// percent-decoded and without "#anchor"), returns the target's URL path
// ("/folder/note") or nullopt when nothing matches.
class LinkResolver {
 public:
  virtual ~LinkResolver() = default;
  virtual std::optional<std::string> Resolve(std::string_view target) = 0;

  // An attachment (image, audio, video, PDF, any non-note file) named by
  // `target`: its URL ("/assets/<hash>/<file name>"), or nullopt if the
  // vault has no such file. Default: none.
  virtual std::optional<std::string> ResolveAttachment(std::string_view /*target*/) { return std::nullopt; }

  // ![[target#anchor]] of a NOTE: the rendered HTML to place inside the
  // embed container (the whole note, the heading's section, or the block),
  // or nullopt if the target is not a note. The part is rendered with
  // `nested`: the host's options one level deeper (depth + 1) sharing the
  // page's embed budget; the resolver replaces only `resolver` and
  // `id_prefix` (so the bounds below hold however embeds nest). The
  // resolver detects cycles (a note that would embed itself, directly or
  // through others) and then returns an HTML notice instead.
  // Default: nullopt.
  virtual std::optional<std::string> EmbedNote(std::string_view /*target*/, std::string_view /*anchor*/,
                                               const RenderOptions& /*nested*/) {
    return std::nullopt;
  }
};

struct LinkRef {
  std::string target;    // as written, decoded, without anchor/display: "Folder/Note"
  std::string anchor;    // "Heading" or "^block" or ""
  bool embed = false;    // ![[...]]
  bool resolved = false; // the resolver found it
  // What the reader sees when it differs from the target's name: the alias
  // of [[t|alias]], the text of [text](t.md); "" otherwise (and for embeds).
  std::string text;
};

struct Heading {
  int level = 1;
  std::string text;  // visible text
  std::string id;    // HeadingId(text), de-duplicated within the note ("x", "x-1"), after id_prefix
  size_t text_offset = 0;  // where the heading's text starts in RenderResult::text
};

struct RenderResult {
  std::string html;                  // the note body as an HTML fragment
  std::string title;                 // frontmatter title, else the file name (never a heading:
                                     // Obsidian Publish's rule, issue 28)
  std::string text;                  // plain text, for search and descriptions
  Frontmatter frontmatter;
  std::vector<LinkRef> links;        // links to notes/attachments in document order
  std::vector<Heading> headings;
  std::vector<std::string> warnings; // human-readable, e.g. "dangling link [[Missing]]"
  std::vector<std::string> tags;     // frontmatter tags + inline #tags, without '#', unique, in order
  std::vector<std::string> block_ids;  // ^block-ids defined in the note
  bool has_math = false;             // at least one $..$ or $$..$$
  bool has_mermaid = false;          // at least one ```mermaid fence
};

// The markdown source of a part of a note, for embeds: the section under
// the heading whose visible text matches `heading` (case-insensitively,
// ignoring emphasis and punctuation; "A#B" = heading B under heading A), up
// to the next heading of the same or higher level, heading line included;
// or the paragraph / list item / block carrying "^block_id". Frontmatter is
// never part of it. nullopt if nothing matches.
std::optional<std::string> ExtractSection(std::string_view source, std::string_view heading);
std::optional<std::string> ExtractBlock(std::string_view source, std::string_view block_id);

// Bounds on one page, however its note nests (issue 22: 5,000 nested
// inline footnotes overflowed ingest's stack). An embedded note or a
// footnote's text renders one level deeper than its host; at
// kMaxRenderDepth an embed shows as a link and a footnote's text as
// written. A page expands at most kMaxPageEmbeds note embeds holding at most
// kMaxPageEmbedBytes of HTML in all (embeds of embeds included: fan-out
// multiplies); later ones show as links. Each adds a warning.
inline constexpr int kMaxRenderDepth = 16;
inline constexpr size_t kMaxPageEmbeds = 1000;
inline constexpr size_t kMaxPageEmbedBytes = size_t{16} << 20;

// What one page has spent on note embeds so far.
struct EmbedBudget {
  size_t embeds = 0;  // EmbedNote calls
  size_t bytes = 0;   // HTML they returned
  // The first bound an embed hit, at any depth: the page's own render
  // warns of it too (a nested render's warnings may be dropped).
  std::string bound_hit;
};

struct RenderOptions {
  LinkResolver* resolver = nullptr;  // null: every internal link is dangling
  // Obsidian's "Strict line breaks" setting: false (Obsidian's default)
  // shows a single newline inside a paragraph as a line break (<br>); true
  // joins the lines as CommonMark does.
  bool strict_line_breaks = false;
  // Put after "fn-" / "fnref-" in footnote ids and before heading and
  // block ids ("e1-intro", "e1-block-x"), and in the note's links to its
  // own anchors, so an embedded note ("e1-") keeps ids of its own next to
  // the host's and every other embed's (a page's ids stay unique).
  std::string_view id_prefix;
  // Syntax-highlight fenced code (default). False leaves fences plain and
  // escaped, for callers that read only the metadata and text:
  // highlighting is the costliest part of a render.
  bool highlight_code = true;
  // How many renders enclose this one: 0 for a page's note (the default);
  // the renderer and EmbedNote's `nested` count the levels below it.
  int depth = 0;
  // The page's embed budget, shared by its nested renders; null (the
  // default): RenderNote keeps one for this render and what it nests.
  EmbedBudget* embed_budget = nullptr;
};

// A note's title, the one rule RenderResult.title follows: `fm.title`
// trimmed, else the file name of `note_path` without ".md" (never a
// heading). For callers that need the title without a render (ingest's
// start retitles notes stored under an older rule). Pure; thread-safe.
std::string NoteTitle(const Frontmatter& fm, std::string_view note_path);

// `note_path` is the vault path (used for the fallback title and messages).
RenderResult RenderNote(std::string_view source, std::string_view note_path,
                        const RenderOptions& options);

}  // namespace folio::markdown
