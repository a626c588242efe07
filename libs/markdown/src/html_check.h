// An independent check of the renderer's output, for the fuzz target
// (render_fuzz.cc) and tests: tokenises an HTML fragment the way a browser's
// tokenizer does (HTML Living Standard 13.2.5: tags, quoted and unquoted
// attribute values, end tags, comments, bogus comments, character
// references) and reports the first thing that could run script or that the
// renderer never writes. It does not use the renderer's own helpers, so a bug
// in those cannot hide itself. Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace folio::fuzz {

// "" when `html` is clean, else what is wrong and where, e.g.
// "event handler attribute onerror on <img> at 120". Clean means:
//   - every start tag is one the renderer writes or the sanitiser allows
//     (no script, style, iframe except the PDF embed, object, embed, base,
//     meta, link, form, svg, template, textarea, title, ...);
//   - no attribute named on*, style, srcdoc, formaction, action, or with a
//     namespace prefix (xlink:href...);
//   - href, src and every other URL attribute, decoded as the browser
//     decodes it, has no javascript:, vbscript: or data: scheme;
//   - no comment, doctype, CDATA or processing instruction ("<!", "<?");
//   - no tag left open at the end (its '>' missing), no unterminated quote.
std::string CheckRenderedHtml(std::string_view html);

}  // namespace folio::fuzz
