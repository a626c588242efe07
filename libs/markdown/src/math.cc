// Placeholder until the converter lands: escaped TeX inside <math><mtext>.
#include "math.h"

#include "folio/core/text.h"

namespace folio::markdown {

std::string TexToMathml(std::string_view tex, bool display) {
  std::string out = display ? "<math display=\"block\"><mtext>" : "<math><mtext>";
  AppendHtmlEscaped(tex, &out);
  out += "</mtext></math>";
  return out;
}

}  // namespace folio::markdown
