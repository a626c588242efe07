// Callouts ("> [!type]+ Title") and ^block-id markers. Both work on the HTML
// already written for a block: md4c knows neither, so the renderer writes a
// plain blockquote / paragraph first and patches it when the block ends.
#include <algorithm>

#include "folio/core/text.h"
#include "folio/markdown/slug.h"
#include "render_internal.h"
#include "utf8.h"

namespace folio::markdown {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool IsIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

// Obsidian's callout aliases and their canonical type (docs/markdown.md).
constexpr std::pair<std::string_view, std::string_view> kCalloutAliases[] = {
    {"summary", "abstract"}, {"tldr", "abstract"},    {"hint", "tip"},
    {"important", "tip"},    {"check", "success"},    {"done", "success"},
    {"help", "question"},    {"faq", "question"},     {"caution", "warning"},
    {"attention", "warning"}, {"fail", "failure"},    {"missing", "failure"},
    {"error", "danger"},     {"cite", "quote"}};

std::string CanonicalType(std::string_view lower) {
  for (const auto& [alias, type] : kCalloutAliases) {
    if (alias == lower) return std::string(type);
  }
  return std::string(lower);
}

std::string TrimHtml(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  if (EndsWith(s, "<br>")) s.remove_suffix(4);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return std::string(s);
}

}  // namespace

void Renderer::DetectCallout(BlockFrame& p, BlockFrame& quote) {
  std::string& out = html();
  std::string_view para = std::string_view(out).substr(p.html_start);
  size_t open_end = para.find('>') + 1;  // "<p>" or '<p id="block-x">'
  if (!StartsWith(para, "<p") || para.compare(open_end, 2, "[!") != 0 || !EndsWith(para, "\n")) return;
  // A block embed right under the title line ("> ![[Note#Section]]") split
  // the paragraph: its first piece holds the title, the rest stays as is.
  size_t p_close = para.find("</p>\n", open_end);
  if (p_close == std::string_view::npos) return;
  std::string_view tail = para.substr(p_close + 5);
  std::string open(para.substr(0, open_end));
  size_t close = para.find(']', open_end + 2);
  if (close == std::string_view::npos) return;
  std::string_view type = para.substr(open_end + 2, close - open_end - 2);
  if (type.empty() || type.find_first_of("<>\n[ \t") != std::string_view::npos) return;
  size_t k = close + 1;
  char fold = 0;
  if (k < para.size() && (para[k] == '+' || para[k] == '-')) fold = para[k++];
  size_t body_end = p_close;
  size_t eol = para.find('\n', k);
  if (eol == std::string_view::npos || eol > body_end) eol = body_end;
  std::string lower = Utf8Lower(type);
  quote.callout_type = lower;
  quote.callout_kind = CanonicalType(lower);
  quote.callout_fold = fold;
  quote.callout_title = TrimHtml(para.substr(k, eol - k));
  if (quote.callout_title.empty()) {  // Obsidian shows the type as written, capitalised
    quote.callout_title = lower;
    char& first = quote.callout_title[0];
    if (first >= 'a' && first <= 'z') first = static_cast<char>(first - 32);
  }
  std::string rest = eol < body_end ? std::string(para.substr(eol + 1, body_end - eol - 1)) : "";
  std::string replaced = (rest.empty() ? "" : open + rest + "</p>\n") + std::string(tail);
  out.replace(p.html_start, para.size(), replaced);
  std::string& t = text();
  if (t.compare(p.text_start, 2, "[!") == 0) {
    size_t e = t.find(']', p.text_start);
    if (e != std::string::npos) {
      ++e;
      if (fold != 0 && e < t.size()) ++e;
      while (e < t.size() && t[e] == ' ') ++e;
      t.erase(p.text_start, e - p.text_start);
    }
  }
}

void Renderer::RewriteCallout(BlockFrame& quote) {
  std::string& out = html();
  constexpr std::string_view kOpen = "<blockquote>\n", kClose = "</blockquote>\n";
  size_t content_start = quote.html_start + kOpen.size();
  std::string content = out.substr(content_start, out.size() - kClose.size() - content_start);
  // The icon and the fold chevron are drawn by style.css (per kind), so
  // notes' HTML never needs inline SVG.
  std::string title = "<span class=\"callout-icon\"></span><span class=\"callout-title-inner\">" +
                      quote.callout_title + "</span>";
  if (quote.callout_fold != 0) title += "<span class=\"callout-fold\"></span>";
  // data-callout keeps the type as written ("faq"), as Obsidian's does for
  // CSS snippets; the class names the canonical kind folio's style colours.
  std::string attrs = " class=\"callout callout-" + quote.callout_kind + "\" data-callout=\"" +
                      quote.callout_type + "\"";
  std::string html;
  if (quote.callout_fold != 0) {
    html = "<details" + attrs + (quote.callout_fold == '+' ? " open>\n" : ">\n") +
           "<summary class=\"callout-title\">" + title + "</summary>\n";
    quote.attr_pos = quote.html_start + 8;
  } else {
    html = "<div" + attrs + ">\n<div class=\"callout-title\">" + title + "</div>\n";
    quote.attr_pos = quote.html_start + 4;
  }
  html += "<div class=\"callout-content\">\n" + content + "</div>\n";
  html += quote.callout_fold != 0 ? "</details>\n" : "</div>\n";
  out.replace(quote.html_start, std::string::npos, html);
}

bool Renderer::ApplyBlockId(BlockFrame& block, BlockFrame* parent) {
  std::string& out = html();
  if (block.attr_pos == SIZE_MAX || block.attr_pos >= out.size()) return false;
  size_t content = out.find('>', block.attr_pos);
  if (content != std::string::npos && block.type == MD_BLOCK_LI && out.compare(content + 1, 6, "<input") == 0) {
    content = out.find('>', content + 1);  // task item: after the checkbox
  }
  if (content == std::string::npos) return false;
  ++content;
  size_t end = out.size();
  while (end > content && IsSpace(out[end - 1])) --end;
  size_t j = end;
  while (j > content && IsIdChar(out[j - 1])) --j;
  if (j == end || j == content || out[j - 1] != '^') return false;
  size_t caret = j - 1;
  size_t b = caret;
  while (b > content && IsSpace(out[b - 1])) --b;
  if (b >= content + 4 && out.compare(b - 4, 4, "<br>") == 0) {  // "text\n^id": the id's own line
    b -= 4;
    while (b > content && IsSpace(out[b - 1])) --b;
  }
  bool after_embed = embed_end_ != SIZE_MAX && embed_end_ <= caret && embed_end_ >= b;
  if (!after_embed && b == caret && caret != content) return false;  // "word^id" is text
  std::string id = out.substr(j, end - j);
  result_->block_ids.push_back(id);
  std::string& t = text();
  size_t tend = t.find_last_not_of(" \t\r\n");
  if (tend != std::string::npos && tend + 1 >= id.size() + 1 &&
      t.compare(tend - id.size(), id.size() + 1, "^" + id) == 0) {
    size_t tb = tend - id.size();
    while (tb > block.text_start && IsSpace(t[tb - 1])) --tb;
    t.erase(tb);
  }
  if (!after_embed && b == content && block.type == MD_BLOCK_P && parent != nullptr &&
      parent->last_child_attr != SIZE_MAX) {  // "^id" alone names the block before it
    out.resize(block.html_start);
    t.resize(std::min(t.size(), block.text_start));
    InsertId(parent->last_child_attr, id);
    return true;
  }
  out.erase(b, end - b);
  InsertId(after_embed ? embed_attr_pos_ : block.attr_pos, id);
  return false;
}

void Renderer::InsertId(size_t attr_pos, std::string_view block_id) {
  if (attr_pos == SIZE_MAX || attr_pos > html().size()) return;
  std::string attr = " id=\"";
  AppendHtmlEscaped(PageId("block-" + HeadingId(block_id)), &attr);
  attr += '"';
  html().insert(attr_pos, attr);
}

}  // namespace folio::markdown
