// TeX math to MathML Core, server-side, so readers need no JavaScript to
// read formulas (browsers render MathML natively). Internal to libs/markdown.
// Pure; thread-safe. Unknown commands are kept visibly as <mtext>, never
// dropped silently; output is always well-formed and escaped.
#pragma once

#include <string>
#include <string_view>

namespace folio::markdown {

// <math display="block|inline">...</math> for the TeX source (no $ delimiters).
std::string TexToMathml(std::string_view tex, bool display);

}  // namespace folio::markdown
