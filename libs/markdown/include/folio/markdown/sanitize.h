// HTML sanitiser for raw HTML found in notes. Whitelist-based: known-harmless
// formatting tags (b, i, em, strong, u, s, del, ins, sub, sup, mark, small,
// kbd, code, pre, br, hr, p, div, span, blockquote, details, summary, abbr,
// cite, q, dl, dt, dd, ul, ol, li, table parts, h1-h6, a, img, figure,
// figcaption, center, font-free) with whitelisted attributes (class, id,
// title, lang, dir, align, colspan, rowspan, width, height, alt, open; href
// and src only with http(s), mailto, relative or fragment URLs; style only
// with colour, text-decoration, font weight/style and alignment declarations
// whose values hold no url(), expression, escape, comment or @). Elements
// whose content is not text (<script>, <style>, <iframe>, <object>, SVG,
// MathML, <textarea>, ...) are dropped with their content, form controls
// without it; other unknown tags are escaped and show as text. Event
// handlers and javascript: or data: URLs never reach the output.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace folio::markdown {

// Sanitises a fragment of raw HTML (one or more tags, possibly partial
// across calls is NOT supported: pass whole tags). Appends to *out.
void SanitizeHtml(std::string_view raw, std::string* out);

// True if `url` is safe in href/src: relative, fragment, http, https, mailto
// (scheme compared case-insensitively after stripping whitespace/controls).
bool IsSafeUrl(std::string_view url);

}  // namespace folio::markdown
