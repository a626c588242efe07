// Inline Obsidian syntax found in md4c's normal text: ==highlight==, #tags
// and [^footnote] references. md4c never hands us text of code spans, code
// blocks or math as MD_TEXT_NORMAL, so none of this happens there.
#include <algorithm>

#include "folio/core/text.h"
#include "folio/markdown/slug.h"
#include "render_internal.h"
#include "utf8.h"

namespace folio::markdown {

namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool IsTagByte(std::string_view s, size_t* i) {
  auto c = static_cast<unsigned char>(s[*i]);
  if (c < 0x80) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '/';
    if (ok) ++*i;
    return ok;
  }
  size_t j = *i;
  if (!IsWordCodePoint(DecodeUtf8(s, &j))) return false;
  *i = j;
  return true;
}

}  // namespace

void Renderer::AddTag(std::string tag) {
  std::vector<std::string>& tags = result_->tags;
  if (tags.size() < kFewItems) {  // most notes: a scan beats hashing
    for (const std::string& t : tags) {
      if (EqualsIgnoreAsciiCase(t, tag)) return;
    }
    tags.push_back(std::move(tag));
    return;
  }
  if (tags_seen_.empty()) {
    for (const std::string& t : tags) tags_seen_.insert(AsciiLower(t));
  }
  if (tags_seen_.insert(AsciiLower(tag)).second) tags.push_back(std::move(tag));
}

void Renderer::InlineText(std::string_view s) {
  size_t plain = 0;  // start of the text not written yet
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c != '=' && c != '#' && c != '[') {
      ++i;
      continue;
    }
    AppendHtmlEscaped(s.substr(plain, i - plain), &html());
    text().append(s.substr(plain, i - plain));
    plain = i;
    size_t n = c == '=' ? TryMark(s, i) : c == '#' ? TryTag(s, i) : TryFootnoteRef(s, i);
    i += n == 0 ? 1 : n;
    if (n != 0) plain = i;
  }
  AppendHtmlEscaped(s.substr(plain), &html());
  text().append(s.substr(plain));
}

char Renderer::PrevChar(std::string_view s, size_t i) {
  if (i > 0) return s[i - 1];
  return text().empty() ? '\n' : text().back();
}

size_t Renderer::TryMark(std::string_view s, size_t i) {
  // Exactly two '=': "===" and longer runs stay text.
  if (i + 1 >= s.size() || s[i + 1] != '=' || (i + 2 < s.size() && s[i + 2] == '=')) return 0;
  if (i > 0 && s[i - 1] == '=') return 0;
  char prev = PrevChar(s, i);
  if (!marks_.empty() && marks_.back().depth == span_depth_ && !IsSpace(prev)) {
    html() += "</mark>";
    marks_.pop_back();
    return 2;
  }
  if (i + 2 < s.size() && IsSpace(s[i + 2])) return 0;  // "a == b" is not a highlight
  // Each mark never closed is turned back into "==" in place, moving what
  // follows it: capping how many are open keeps that linear (issue 22).
  if (marks_.size() >= kMaxOpenMarks) return 0;
  marks_.push_back(OpenMark{html().size(), text().size(), span_depth_});
  html() += "<mark>";
  return 2;
}

void Renderer::RevertMarks(int depth) {
  while (!marks_.empty() && marks_.back().depth >= depth) {
    const OpenMark& m = marks_.back();
    html().replace(m.html_pos, 6, "==");
    text().insert(m.text_pos, "==");
    if (embed_end_ != SIZE_MAX && embed_end_ > m.html_pos) embed_end_ -= 4;
    if (embed_attr_pos_ != SIZE_MAX && embed_attr_pos_ > m.html_pos) embed_attr_pos_ -= 4;
    marks_.pop_back();
  }
}

bool Renderer::InsideLink() const { return !spans_.empty(); }

size_t Renderer::TryTag(std::string_view s, size_t i) {
  char prev = PrevChar(s, i);
  if (!IsSpace(prev) || InsideLink()) return 0;
  size_t j = i + 1;
  while (j < s.size() && IsTagByte(s, &j)) {
  }
  std::string_view tag = s.substr(i + 1, j - i - 1);
  while (!tag.empty() && tag.back() == '/') tag.remove_suffix(1);
  if (tag.empty() || tag.front() == '/') return 0;
  if (std::all_of(tag.begin(), tag.end(), [](char c) { return c >= '0' && c <= '9'; })) return 0;
  std::string& out = html();
  out += "<a class=\"tag\" href=\"";
  out += kTagUrlPrefix;
  AppendHtmlEscaped(PercentEncodePath(AsciiLower(tag)), &out);
  out += "\">#";
  AppendHtmlEscaped(tag, &out);
  out += "</a>";
  if (in_heading_) heading_tags_.emplace_back(text().size(), text().size() + 1 + tag.size());
  text() += '#';
  text().append(tag);
  AddTag(std::string(tag));
  return tag.size() + 1;
}

size_t Renderer::TryFootnoteRef(std::string_view s, size_t i) {
  if (footnotes_.empty() || i + 3 >= s.size() || s[i + 1] != '^' || InsideLink()) return 0;
  size_t close = s.find(']', i + 2);
  if (close == std::string_view::npos) return 0;
  std::string_view label = s.substr(i + 2, close - i - 2);
  size_t d = footnotes_.size();
  if (footnote_index_.empty()) {  // few definitions: a scan
    for (size_t k = 0; k < footnotes_.size() && d == footnotes_.size(); ++k) {
      if (footnotes_[k].label == label) d = k;
    }
  } else if (auto it = footnote_index_.find(label); it != footnote_index_.end()) {
    d = it->second;
  }
  if (d == footnotes_.size()) return 0;  // undefined: stays literal text
  if (footnote_number_[d] == 0) {
    footnote_order_.push_back(d);
    footnote_number_[d] = static_cast<int>(footnote_order_.size());
  }
  int refs = ++footnote_refs_[d];
  std::string n = std::to_string(footnote_number_[d]);
  std::string prefix = HtmlEscape(options_.id_prefix);
  std::string id = "fnref-" + prefix + n + (refs == 1 ? "" : "-" + std::to_string(refs));
  html() += "<sup class=\"footnote-ref\"><a href=\"#fn-" + prefix + n + "\" id=\"" + id + "\">" + n + "</a></sup>";
  return close + 1 - i;
}

}  // namespace folio::markdown
