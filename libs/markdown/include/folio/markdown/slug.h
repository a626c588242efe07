// URL rules for notes. Pure functions; thread-safe. The rule (README "URLs"):
//   - drop the ".md" extension; split the vault path on '/';
//   - in each segment: letters are lower-cased (folio::LowerCodePoint: ASCII,
//     Latin, Greek, Cyrillic, Armenian); every other letter or digit (any
//     script) is kept as is; spaces, '_' and runs of punctuation
//     become one '-'; leading/trailing '-' are trimmed; '.' is kept between
//     characters; a segment left empty becomes "-";
//   - "index.md" (any case) is its folder's page: "index.md" -> "/",
//     "Docs/index.md" -> "/docs/".
//   Examples: "Folder/Note name.md" -> "/folder/note-name",
//             "Заметки/Моя заметка.md" -> "/заметки/моя-заметка",
//             "C++ & you.md" -> "/c-you".
// URLs are returned decoded (UTF-8); percent-encode them for the wire.
#pragma once

#include <string>
#include <string_view>

namespace folio::markdown {

std::string UrlForNotePath(std::string_view vault_path);
std::string SlugifySegment(std::string_view segment);
// The id of a heading with this visible text: same character rule as a
// segment ("Getting Started!" -> "getting-started"); never empty.
std::string HeadingId(std::string_view text);

// folio's generated pages live under "/_/", which no note can take (a slug
// segment never starts with '_'), so a note named "Tags" or "Recent" keeps
// its own URL. The edge answers the old generated URLs ("/tags",
// "/tags/x", "/recent", "/search") with 301s here when no note has them.
inline constexpr std::string_view kGeneratedPrefix = "/_/";
inline constexpr std::string_view kTagsUrl = "/_/tags";      // the tag index
inline constexpr std::string_view kTagUrlPrefix = "/_/tags/";  // + lower-cased tag
inline constexpr std::string_view kRecentUrl = "/_/recent";  // "?page=N" after the first
inline constexpr std::string_view kSearchUrl = "/_/search";  // the edge's search page
inline constexpr std::string_view kTreePrefix = "/_/tree";   // + a folder's URL: its explorer JSON ("/_/tree/" = root)
inline constexpr std::string_view kGraphUrl = "/_/graph";    // the global graph page
inline constexpr std::string_view kGraphDataUrl = "/_/graph.json";  // index of the link-graph chunks
inline constexpr std::string_view kGraphChunkPrefix = "/_/graph/";  // + "N.json"

}  // namespace folio::markdown
