// The footnote list at the end of a note. Definitions were taken out of the
// body by Preprocess; references were numbered by TryFootnoteRef.
#include "folio/core/text.h"
#include "render_internal.h"

namespace folio::markdown {

namespace {

// "<p>x</p>\n" -> "x" when the definition rendered as one paragraph.
std::string Unwrap(std::string html) {
  if (StartsWith(html, "<p>") && EndsWith(html, "</p>\n") && html.find("<p>", 3) == std::string::npos) {
    return html.substr(3, html.size() - 8);
  }
  while (!html.empty() && html.back() == '\n') html.pop_back();
  return html;
}

}  // namespace

bool Renderer::RenderInline(std::string_view md, std::string* html_out, std::string* text_out) {
  if (options_.depth + 1 >= kMaxRenderDepth) return false;
  RenderOptions nested = options_;
  ++nested.depth;
  RenderResult sub;
  Renderer(note_path_, nested, &sub).Run(md);
  if (!StartsWith(sub.html, "<p>") || !EndsWith(sub.html, "</p>\n") || sub.html.find("<p>", 3) != std::string::npos) {
    return false;  // not one paragraph ("# x", "- x"): the caller shows it as written
  }
  *html_out = sub.html.substr(3, sub.html.size() - 8);
  *text_out = std::move(sub.text);
  for (std::string& w : sub.warnings) result_->warnings.push_back(std::move(w));
  return true;
}

void Renderer::AppendFootnotes() {
  if (footnote_order_.empty()) return;
  std::string& out = html();
  out += "<section class=\"footnotes\">\n<ol>\n";
  for (size_t k = 0; k < footnote_order_.size(); ++k) {
    const FootnoteDef& def = footnotes_[footnote_order_[k]];
    RenderResult sub;
    if (options_.depth + 1 < kMaxRenderDepth) {
      RenderOptions nested = options_;
      ++nested.depth;
      Renderer(note_path_, nested, &sub).Run(def.text);
    } else {  // nested too deep (issue 22): the text as written
      AppendHtmlEscaped(def.text, &sub.html);
      sub.text = def.text;
      sub.warnings.push_back("footnotes nested more than " + std::to_string(kMaxRenderDepth) +
                             " levels deep: the innermost is shown as written");
    }
    std::string n = HtmlEscape(options_.id_prefix) + std::to_string(k + 1);
    out += "<li id=\"fn-" + n + "\">" + Unwrap(std::move(sub.html)) + " <a href=\"#fnref-" + n +
           "\" class=\"footnote-backref\">\xE2\x86\xA9</a></li>\n";
    for (LinkRef& l : sub.links) result_->links.push_back(std::move(l));
    for (std::string& w : sub.warnings) result_->warnings.push_back(std::move(w));
    for (std::string& t : sub.tags) AddTag(std::move(t));
    result_->has_math |= sub.has_math;
    TextBreak('\n');
    text() += sub.text;
  }
  out += "</ol>\n</section>\n";
}

}  // namespace folio::markdown
