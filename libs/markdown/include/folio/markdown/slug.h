// URL rules for notes. Pure functions; thread-safe. The rule (README "URLs"):
//   - drop the ".md" extension; split the vault path on '/';
//   - in each segment: ASCII letters are lower-cased; every other letter or
//     digit (any script) is kept as is; spaces, '_' and runs of punctuation
//     become one '-'; leading/trailing '-' are trimmed; '.' is kept between
//     characters; a segment left empty becomes "-";
//   - "index.md" (any case) is its folder's page: "index.md" -> "/",
//     "Docs/index.md" -> "/docs/".
//   Examples: "Folder/Note name.md" -> "/folder/note-name",
//             "Заметки/Моя заметка.md" -> "/Заметки/Моя-заметка" (non-ASCII
//             letters keep their case), "C++ & you.md" -> "/c-you".
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

}  // namespace folio::markdown
