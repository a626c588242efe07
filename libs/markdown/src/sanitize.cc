#include "folio/markdown/sanitize.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "folio/core/text.h"
#include "html_util.h"
#include "sanitize_internal.h"

namespace folio::markdown {

namespace {

constexpr std::string_view kAllowedTags[] = {
    "a", "abbr", "b", "blockquote", "br", "caption", "center", "cite", "code", "col",
    "colgroup", "dd", "del", "details", "div", "dl", "dt", "em", "figcaption", "figure",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark",
    "ol", "p", "pre", "q", "s", "samp", "small", "span", "strong", "sub", "summary", "sup",
    "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul", "var", "wbr"};
// Elements dropped silently with everything up to their end tag: their
// content is script, styles, a nested document or form state, never text a
// reader should see (an <iframe> that is a video player is handled first).
constexpr std::string_view kDropWithContent[] = {
    "applet", "frameset", "iframe", "math", "noembed", "noframes", "noscript", "object", "script",
    "select", "style", "svg", "template", "textarea", "title", "xmp"};
// Elements dropped silently, their content kept as text.
constexpr std::string_view kDropTag[] = {
    "base", "button", "embed", "form", "frame", "input", "link", "meta", "param", "source", "track"};
constexpr std::string_view kVoidTags[] = {"br", "col", "hr", "img", "wbr"};
constexpr std::string_view kBreakTags[] = {
    "blockquote", "br", "dd", "details", "div", "dt", "figcaption", "figure", "h1", "h2",
    "h3", "h4", "h5", "h6", "hr", "li", "ol", "p", "pre", "summary", "table", "td", "th",
    "tr", "ul"};
constexpr std::string_view kAllowedAttrs[] = {
    "align", "alt", "class", "colspan", "dir", "height", "id", "lang", "open", "rowspan",
    "start", "title", "width"};

template <size_t N>
bool In(const std::string_view (&set)[N], std::string_view v) {
  return std::find(std::begin(set), std::end(set), v) != std::end(set);
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAlnum(char c) { return IsAlpha(c) || (c >= '0' && c <= '9'); }

struct Tag {
  std::string name;                                        // lower-cased
  std::vector<std::pair<std::string, std::string>> attrs;  // lower-cased name, raw value
  bool self_closing = false;
  size_t end = 0;  // index after '>'
};

// Tokenises a start tag at raw[i] == '<' like the HTML tokenizer does;
// nullopt if there is no closing '>'.
std::optional<Tag> ParseStartTag(std::string_view raw, size_t i) {
  Tag tag;
  size_t j = i + 1;
  while (j < raw.size() && !IsSpace(raw[j]) && raw[j] != '/' && raw[j] != '>') ++j;
  tag.name = AsciiLower(raw.substr(i + 1, j - i - 1));
  while (true) {
    while (j < raw.size() && (IsSpace(raw[j]) || raw[j] == '/')) {
      tag.self_closing = raw[j] == '/';
      ++j;
    }
    if (j >= raw.size()) return std::nullopt;
    if (raw[j] == '>') break;
    tag.self_closing = false;
    size_t n = j++;  // an attribute name may start with '='
    while (j < raw.size() && !IsSpace(raw[j]) && raw[j] != '/' && raw[j] != '>' && raw[j] != '=') ++j;
    std::string name = AsciiLower(raw.substr(n, j - n));
    while (j < raw.size() && IsSpace(raw[j])) ++j;
    std::string value;
    if (j < raw.size() && raw[j] == '=') {
      ++j;
      while (j < raw.size() && IsSpace(raw[j])) ++j;
      if (j < raw.size() && (raw[j] == '"' || raw[j] == '\'')) {
        size_t close = raw.find(raw[j], j + 1);
        if (close == std::string_view::npos) return std::nullopt;
        value = raw.substr(j + 1, close - j - 1);
        j = close + 1;
      } else {
        size_t v = j;
        while (j < raw.size() && !IsSpace(raw[j]) && raw[j] != '>') ++j;
        value = raw.substr(v, j - v);
      }
    }
    tag.attrs.emplace_back(std::move(name), std::move(value));
  }
  tag.end = j + 1;
  return tag;
}

// Length of a syntactically valid character reference at s[i] == '&', or 0.
size_t ReferenceLength(std::string_view s, size_t i) {
  size_t j = i + 1;
  if (j < s.size() && s[j] == '#') {
    ++j;
    bool hex = j < s.size() && (s[j] == 'x' || s[j] == 'X');
    if (hex) ++j;
    size_t start = j;
    while (j < s.size() && (hex ? IsAlnum(s[j]) : (s[j] >= '0' && s[j] <= '9'))) ++j;
    if (j == start) return 0;
  } else {
    while (j < s.size() && IsAlnum(s[j])) ++j;
    if (j == i + 1) return 0;
  }
  return j < s.size() && s[j] == ';' ? j + 1 - i : 0;
}

// CSS properties a note's inline style may set: colour, emphasis and
// alignment of text, nothing that moves, sizes or overlays anything.
constexpr std::string_view kStyleProps[] = {
    "background", "background-color", "color", "font-style", "font-weight", "text-align",
    "text-decoration", "text-decoration-color", "text-decoration-line", "text-decoration-style"};
// The only CSS functions a value may call (colours).
constexpr std::string_view kStyleFunctions[] = {"hsl", "hsla", "rgb", "rgba"};

std::string TrimSpaces(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && IsSpace(s[b])) ++b;
  while (e > b && IsSpace(s[e - 1])) --e;
  return std::string(s.substr(b, e - b));
}

// A declaration's value if it is safe: only letters, digits, spaces and
// "#%.,-" outside the colour functions' parentheses (so no url(),
// expression(), escapes, comments, quotes, @-rules or !important); for
// `background`, a single colour.
bool SafeStyleValue(std::string_view prop, std::string_view value) {
  if (value.empty()) return false;
  int depth = 0;
  bool space = false;
  for (size_t i = 0; i < value.size(); ++i) {
    char c = value[i];
    if (c == '(') {
      size_t b = i;
      while (b > 0 && IsAlpha(value[b - 1])) --b;
      if (depth > 0 || !In(kStyleFunctions, AsciiLower(value.substr(b, i - b)))) return false;
      ++depth;
    } else if (c == ')') {
      if (depth-- == 0) return false;
    } else if (c == ' ') {
      space |= depth == 0;
    } else if (!IsAlnum(c) && c != '#' && c != '%' && c != '.' && c != ',' && c != '-') {
      return false;
    }
  }
  return depth == 0 && !(space && prop == "background") && AsciiLower(value).find("expression") == std::string::npos;
}

// The declarations of an inline style attribute that keep to kStyleProps
// with safe values, as "prop:value;prop:value"; "" if none does.
std::string SafeStyle(std::string_view style) {
  std::string out;
  size_t i = 0;
  while (i <= style.size()) {
    size_t semi = std::min(style.find(';', i), style.size());
    std::string_view decl = style.substr(i, semi - i);
    i = semi + 1;
    size_t colon = decl.find(':');
    if (colon == std::string_view::npos) continue;
    std::string prop = AsciiLower(TrimSpaces(decl.substr(0, colon)));
    std::string value = TrimSpaces(decl.substr(colon + 1));
    for (char& c : value) {
      if (IsSpace(c)) c = ' ';
    }
    if (!In(kStyleProps, prop) || !SafeStyleValue(prop, value)) continue;
    if (!out.empty()) out += ';';
    out += prop + ':' + value;
  }
  return out;
}

void TextBreak(std::string* text) {
  if (text != nullptr && !text->empty() && !IsSpace(text->back())) text->push_back(' ');
}

void AppendTag(const Tag& tag, std::string* html) {
  *html += '<';
  *html += tag.name;
  bool external = false;
  std::vector<std::string_view> seen;
  for (const auto& [name, value] : tag.attrs) {
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;  // first one wins
    seen.push_back(name);
    bool url = (name == "href" && tag.name == "a") || (name == "src" && tag.name == "img");
    bool style = name == "style";
    if (!url && !style && !(In(kAllowedAttrs, name) && (name != "open" || tag.name == "details"))) continue;
    std::string decoded = DecodeEntities(value);
    if (style && (decoded = SafeStyle(decoded)).empty()) continue;
    if (url && !IsSafeUrl(decoded)) continue;
    if (url) {
      size_t b = decoded.find_first_not_of(" \t\r\n");
      std::string lower = AsciiLower(decoded.substr(b == std::string::npos ? decoded.size() : b));
      external = StartsWith(lower, "http:") || StartsWith(lower, "https:") || StartsWith(lower, "//");
    }
    *html += ' ';
    *html += name;
    *html += "=\"";
    AppendHtmlEscaped(decoded, html);
    *html += '"';
  }
  if (external && tag.name == "a") *html += " rel=\"noopener\"";
  *html += '>';
}

}  // namespace

bool IsSafeUrl(std::string_view url) {
  std::string s;
  for (char c : DecodeEntities(url)) {
    if (c != '\t' && c != '\n' && c != '\r') s.push_back(c);  // browsers drop these anywhere
  }
  size_t i = 0;
  while (i < s.size() && static_cast<unsigned char>(s[i]) <= 0x20) ++i;
  if (i == s.size() || !IsAlpha(s[i])) return true;  // relative, fragment or empty
  size_t j = i;
  while (j < s.size() && (IsAlnum(s[j]) || s[j] == '+' || s[j] == '-' || s[j] == '.')) ++j;
  if (j == s.size() || s[j] != ':') return true;  // no scheme: a relative path
  std::string scheme = AsciiLower(std::string_view(s).substr(i, j - i));
  return scheme == "http" || scheme == "https" || scheme == "mailto";
}

void SanitizeHtml(std::string_view raw, std::string* out) {
  HtmlSanitizer s;
  s.Feed(raw, out, nullptr);
  s.CloseAll(out);
}

size_t HtmlSanitizer::SkipContent(std::string_view raw, size_t i) {
  std::string close = "</" + skip_;
  for (size_t at = i; at + close.size() <= raw.size(); ++at) {
    if (raw[at] != '<' || raw[at + 1] != '/') continue;
    if (!EqualsIgnoreAsciiCase(raw.substr(at, close.size()), close)) continue;
    size_t after = at + close.size();
    if (after < raw.size() && !IsSpace(raw[after]) && raw[after] != '/' && raw[after] != '>') continue;
    size_t end = raw.find('>', after);
    skip_.clear();
    return end == std::string_view::npos ? raw.size() : end + 1;
  }
  return raw.size();
}

void HtmlSanitizer::Feed(std::string_view raw, std::string* html, std::string* text) {
  size_t i = 0;
  while (i < raw.size()) {
    if (!skip_.empty()) {
      i = SkipContent(raw, i);
      continue;
    }
    char c = raw[i];
    if (c == '<') {
      i = OnTag(raw, i, html, text);
    } else if (c == '&') {
      size_t n = ReferenceLength(raw, i);
      if (n == 0) {
        *html += "&amp;";
        if (text != nullptr) text->push_back('&');
        ++i;
        continue;
      }
      std::string_view ref = raw.substr(i, n);
      std::string decoded;
      if (DecodeEntity(ref, &decoded)) {
        html->append(ref);  // a reference HTML5 defines is safe verbatim
        if (text != nullptr) text->append(decoded);
      } else {  // an unknown name is text, as a browser shows it
        AppendHtmlEscaped(ref, html);
        if (text != nullptr) text->append(ref);
      }
      i += n;
    } else {
      if (c == '>') {
        *html += "&gt;";
      } else if (c == '"') {
        *html += "&quot;";
      } else {
        html->push_back(c);
      }
      if (text != nullptr) text->push_back(c);
      ++i;
    }
  }
}

size_t HtmlSanitizer::OnTag(std::string_view raw, size_t i, std::string* html, std::string* text) {
  std::string_view rest = raw.substr(i);
  if (rest.substr(0, 4) == "<!--") {  // comments are dropped; unterminated: drop the rest
    size_t end = raw.find("-->", i + 4);
    return end == std::string_view::npos ? raw.size() : end + 3;
  }
  if (rest.substr(0, 2) == "<!" || rest.substr(0, 2) == "<?") {  // doctype, CDATA, PI
    size_t end = raw.find('>', i);
    return end == std::string_view::npos ? raw.size() : end + 1;
  }
  if (rest.size() > 2 && rest[1] == '/' && IsAlpha(rest[2])) return OnEndTag(raw, i, html, text);
  if (rest.size() < 2 || !IsAlpha(rest[1])) {
    *html += "&lt;";
    if (text != nullptr) text->push_back('<');
    return i + 1;
  }
  std::optional<Tag> tag = ParseStartTag(raw, i);
  if (!tag) {  // unclosed tag: show the rest as text
    AppendHtmlEscaped(rest, html);
    return raw.size();
  }
  if (tag->name == "iframe") {  // a YouTube or Vimeo player becomes folio's own
    std::string src, title;
    for (const auto& [name, value] : tag->attrs) {
      if (name == "src") src = DecodeEntities(value);
      if (name == "title") title = DecodeEntities(value);
    }
    if (std::string video = VideoEmbedUrl(src); !video.empty()) {
      AppendVideoIframe(video, title, html);
      drop_iframe_close_ = true;
      return tag->end;
    }
  }
  if (In(kDropWithContent, tag->name)) {
    if (!tag->self_closing || (tag->name != "svg" && tag->name != "math")) {  // "<svg/>" is empty
      skip_ = tag->name;
      skip_scope_ = floors_.size();
    }
    return tag->end;
  }
  if (In(kDropTag, tag->name)) return tag->end;
  if (!In(kAllowedTags, tag->name)) {
    AppendHtmlEscaped(raw.substr(i, tag->end - i), html);
    return tag->end;
  }
  if (In(kBreakTags, tag->name)) TextBreak(text);
  size_t written = html->size();
  AppendTag(*tag, html);
  written = html->size() - written;
  if (In(kVoidTags, tag->name)) return tag->end;
  if (tag->self_closing) {
    *html += "</" + tag->name + ">";
  } else if (open_.size() >= kMaxOpenElements) {
    html->resize(html->size() - written);  // too deep (issue 22): the tag is dropped, its text kept
  } else {
    open_.push_back(tag->name);
  }
  return tag->end;
}

size_t HtmlSanitizer::OnEndTag(std::string_view raw, size_t i, std::string* html, std::string* text) {
  size_t end = raw.find('>', i);
  if (end == std::string_view::npos) {
    AppendHtmlEscaped(raw.substr(i), html);
    return raw.size();
  }
  size_t j = i + 2;
  while (j < end && !IsSpace(raw[j]) && raw[j] != '/') ++j;
  std::string name = AsciiLower(raw.substr(i + 2, j - i - 2));
  if (name == "iframe" && drop_iframe_close_) {  // the player was written whole
    drop_iframe_close_ = false;
    return end + 1;
  }
  if (In(kDropWithContent, name) || In(kDropTag, name)) return end + 1;
  if (!In(kAllowedTags, name)) {
    AppendHtmlEscaped(raw.substr(i, end + 1 - i), html);
    return end + 1;
  }
  if (In(kBreakTags, name)) TextBreak(text);
  // Close the innermost matching tag opened in this scope; otherwise drop it.
  for (size_t k = open_.size(); k > floor_; --k) {
    if (open_[k - 1] == name) {
      CloseAbove(k - 1, html);
      break;
    }
  }
  return end + 1;
}

void HtmlSanitizer::CloseAbove(size_t depth, std::string* html) {
  while (open_.size() > depth) {
    *html += "</" + open_.back() + ">";
    open_.pop_back();
  }
}

void HtmlSanitizer::PushScope() {
  floors_.push_back(floor_);
  floor_ = open_.size();
}

void HtmlSanitizer::PopScope(std::string* html) {
  if (!skip_.empty() && floors_.size() <= skip_scope_) skip_.clear();  // unclosed: ends with its block
  CloseAbove(floor_, html);
  if (!floors_.empty()) {
    floor_ = floors_.back();
    floors_.pop_back();
  } else {
    floor_ = 0;
  }
}

void HtmlSanitizer::CloseAll(std::string* html) {
  CloseAbove(0, html);
  skip_.clear();
  floor_ = 0;
  floors_.clear();
}

}  // namespace folio::markdown
