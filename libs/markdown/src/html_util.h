// Internal HTML helpers for libs/markdown: character references and URL
// escaping. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace folio::markdown {

// Decodes one character reference such as "&amp;", "&#233;" or "&#xE9;"
// (with '&' and ';') and appends its UTF-8 text to *out. Returns false, and
// appends nothing, for a name HTML5 does not define (callers then keep the
// reference verbatim).
bool DecodeEntity(std::string_view ref, std::string* out);

// Decodes every character reference in `s`, as a browser does in attribute
// values: numeric ones also without ';', named ones with ';'.
std::string DecodeEntities(std::string_view s);

// Appends `url` for use inside a double-quoted attribute: bytes outside the
// URL-safe set are percent-encoded, '&' becomes "&amp;".
void AppendUrlEscaped(std::string_view url, std::string* out);

// The player URL folio embeds for a video page URL: YouTube
// (youtube.com/watch?v=ID, youtu.be/ID, youtube.com/embed/ID, shorts/ID,
// youtube-nocookie.com/embed/ID) -> "https://www.youtube-nocookie.com/embed/ID";
// Vimeo (vimeo.com/ID, player.vimeo.com/video/ID) ->
// "https://player.vimeo.com/video/ID". "" for anything else. IDs are
// checked character by character, so the URL carries nothing else.
std::string VideoEmbedUrl(std::string_view url);

// The only third-party <iframe> folio writes: the player at `embed_url`
// (from VideoEmbedUrl), sandboxed, lazily loaded, no referrer.
void AppendVideoIframe(std::string_view embed_url, std::string_view title, std::string* out);

}  // namespace folio::markdown
