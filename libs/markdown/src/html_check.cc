#include "html_check.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace folio::fuzz {

namespace {

// Every element the renderer writes itself or the sanitiser lets through.
constexpr std::string_view kTags[] = {
    // sanitize.cc kAllowedTags
    "a", "abbr", "b", "blockquote", "br", "caption", "center", "cite", "code", "col", "colgroup", "dd", "del",
    "details", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i",
    "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span", "strong", "sub",
    "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "tr", "u", "ul", "var", "wbr",
    // the renderer: footnotes, task lists, media embeds (the PDF iframe is checked below)
    "section", "input", "audio", "video", "iframe",
    // math (MathML)
    "math", "semantics", "annotation", "mi", "mn", "mo", "ms", "mtext", "mspace", "mrow", "mfrac", "msqrt",
    "mroot", "msub", "msup", "msubsup", "munder", "mover", "munderover", "mtable", "mtr", "mtd", "mstyle",
    "mpadded", "mphantom", "merror", "menclose"};

// Attributes whose value the browser resolves as a URL.
constexpr std::string_view kUrlAttrs[] = {"href",     "src",      "action",   "formaction", "data",
                                          "poster",   "background", "cite",   "longdesc",   "usemap",
                                          "codebase", "srcset",   "ping",     "manifest",   "icon"};
// Attributes that run script or restyle the page whatever their value.
constexpr std::string_view kBadAttrs[] = {"srcdoc", "formaction", "action", "http-equiv"};
// What an inline style may never hold: URLs, script, escapes, comments,
// at-rules, and properties that move or overlay things.
constexpr std::string_view kBadStyle[] = {"url(", "expression", "\\", "/*", "@", "javascript", "behavior",
                                          "binding", "position", "inset", "z-index", "float", "top:", "left:", "right:",
                                          "bottom:", "display", "width", "height", "margin", "transform", "content",
                                          "image"};

template <size_t N>
bool In(const std::string_view (&set)[N], std::string_view v) {
  return std::find(std::begin(set), std::end(set), v) != std::end(set);
}

bool IsWhite(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

void AppendCodePoint(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else {
    out->push_back('\x7f');  // non-ASCII: only its being non-ASCII matters for a scheme
  }
}

// Decodes character references as a browser does in an attribute value:
// numeric ones with or without ';'; the named ones that matter for a URL
// scheme (letters have no named references) with ';'.
std::string DecodeAttr(std::string_view v) {
  static constexpr std::pair<std::string_view, char> kNamed[] = {
      {"colon;", ':'}, {"tab;", '\t'}, {"newline;", '\n'}, {"amp;", '&'}, {"lt;", '<'},
      {"gt;", '>'},    {"quot;", '"'}, {"apos;", '\''}, {"sol;", '/'}, {"num;", '#'}};
  std::string out;
  for (size_t i = 0; i < v.size();) {
    if (v[i] != '&') {
      out.push_back(v[i++]);
      continue;
    }
    if (i + 1 < v.size() && v[i + 1] == '#') {
      size_t j = i + 2;
      bool hex = j < v.size() && (v[j] == 'x' || v[j] == 'X');
      if (hex) ++j;
      uint64_t cp = 0;
      size_t start = j;
      while (j < v.size() && (hex ? (IsDigit(v[j]) || (Lower(v[j]) >= 'a' && Lower(v[j]) <= 'f')) : IsDigit(v[j]))) {
        int d = IsDigit(v[j]) ? v[j] - '0' : Lower(v[j]) - 'a' + 10;
        if (cp <= 0x10FFFF) cp = cp * (hex ? 16 : 10) + static_cast<uint64_t>(d);
        ++j;
      }
      if (j > start) {
        if (j < v.size() && v[j] == ';') ++j;
        AppendCodePoint(cp == 0 || cp > 0x10FFFF ? 0xFFFD : static_cast<uint32_t>(cp), &out);
        i = j;
        continue;
      }
    } else {
      bool done = false;
      for (const auto& [name, c] : kNamed) {
        std::string lowered;
        for (size_t k = i + 1; k < v.size() && lowered.size() < name.size(); ++k) lowered.push_back(Lower(v[k]));
        // Named references are case-sensitive except that HTML spells both
        // &Tab;/&NewLine; and lower-case &amp; etc.; comparing lower-cased
        // is stricter (more decodes), which is the safe direction here.
        if (lowered == name) {
          out.push_back(c);
          i += 1 + name.size();
          done = true;
          break;
        }
      }
      if (done) continue;
    }
    out.push_back(v[i++]);
  }
  return out;
}

// The scheme of `url` as the URL parser sees it: leading/trailing C0 and
// spaces stripped, tabs and newlines removed anywhere; "" if relative.
std::string SchemeOf(std::string_view url) {
  std::string s;
  for (char c : url) {
    if (c != '\t' && c != '\n' && c != '\r') s.push_back(c);
  }
  size_t i = 0;
  while (i < s.size() && static_cast<unsigned char>(s[i]) <= 0x20) ++i;
  if (i == s.size() || !IsAlpha(s[i])) return "";
  size_t j = i;
  while (j < s.size() && (IsAlpha(s[j]) || IsDigit(s[j]) || s[j] == '+' || s[j] == '-' || s[j] == '.')) ++j;
  if (j == s.size() || s[j] != ':') return "";
  std::string scheme;
  for (size_t k = i; k < j; ++k) scheme.push_back(Lower(s[k]));
  return scheme;
}

struct Tag {
  std::string name;
  std::vector<std::pair<std::string, std::string>> attrs;  // lower-cased name, decoded value
  bool end_tag = false;
};

// Tokenises the tag starting at html[i] ('<' followed by a letter, or "</"
// and a letter). Sets *next after its '>'; false at EOF inside the tag.
bool ParseTag(std::string_view html, size_t i, Tag* tag, size_t* next) {
  size_t j = i + 1;
  if (html[j] == '/') {
    tag->end_tag = true;
    ++j;
  }
  while (j < html.size() && !IsWhite(html[j]) && html[j] != '/' && html[j] != '>') tag->name.push_back(Lower(html[j++]));
  while (true) {
    while (j < html.size() && (IsWhite(html[j]) || html[j] == '/')) ++j;
    if (j >= html.size()) return false;
    if (html[j] == '>') break;
    std::string name(1, Lower(html[j++]));  // the first character may be '='
    while (j < html.size() && !IsWhite(html[j]) && html[j] != '/' && html[j] != '>' && html[j] != '=') {
      name.push_back(Lower(html[j++]));
    }
    while (j < html.size() && IsWhite(html[j])) ++j;
    std::string value;
    if (j < html.size() && html[j] == '=') {
      ++j;
      while (j < html.size() && IsWhite(html[j])) ++j;
      if (j < html.size() && (html[j] == '"' || html[j] == '\'')) {
        size_t close = html.find(html[j], j + 1);
        if (close == std::string_view::npos) return false;
        value = DecodeAttr(html.substr(j + 1, close - j - 1));
        j = close + 1;
      } else {
        size_t v = j;
        while (j < html.size() && !IsWhite(html[j]) && html[j] != '>') ++j;
        value = DecodeAttr(html.substr(v, j - v));
      }
    }
    tag->attrs.emplace_back(std::move(name), std::move(value));
  }
  *next = j + 1;
  return true;
}

std::string At(size_t i) { return " at " + std::to_string(i); }

std::string CheckStartTag(const Tag& tag, size_t at) {
  if (!In(kTags, tag.name)) return "element <" + tag.name + ">" + At(at);
  for (const auto& [name, value] : tag.attrs) {
    if (name.size() >= 2 && name[0] == 'o' && name[1] == 'n') {
      return "event handler attribute " + name + " on <" + tag.name + ">" + At(at);
    }
    if (In(kBadAttrs, name)) return "attribute " + name + " on <" + tag.name + ">" + At(at);
    if (name == "style") {
      std::string lower;
      for (char c : value) lower.push_back(Lower(c));
      for (std::string_view bad : kBadStyle) {
        if (lower.find(bad) != std::string::npos) return "style holding " + std::string(bad) + At(at);
      }
    }
    if (name.find(':') != std::string::npos) return "namespaced attribute " + name + " on <" + tag.name + ">" + At(at);
    if (In(kUrlAttrs, name)) {
      std::string scheme = SchemeOf(value);
      if (scheme == "javascript" || scheme == "vbscript" || scheme == "data") {
        return scheme + ": URL in " + name + " of <" + tag.name + ">" + At(at);
      }
    }
  }
  auto attr = [&](std::string_view n) -> std::string {
    for (const auto& [name, value] : tag.attrs) {
      if (name == n) return value;
    }
    return "";
  };
  bool pdf = attr("class") == "embed-pdf" && attr("src").rfind("/assets/", 0) == 0;
  bool video = attr("class") == "embed-video" && (attr("src").rfind("https://www.youtube-nocookie.com/embed/", 0) == 0 ||
                                                  attr("src").rfind("https://player.vimeo.com/video/", 0) == 0);
  if (tag.name == "iframe" && !pdf && !video) {
    return "<iframe> that is neither a PDF embed of an attachment nor a video player" + At(at);
  }
  if (tag.name == "input" && attr("type") != "checkbox") return "<input> that is not a task checkbox" + At(at);
  return "";
}

}  // namespace

std::string CheckRenderedHtml(std::string_view html) {
  size_t i = 0;
  while ((i = html.find('<', i)) != std::string_view::npos) {
    if (i + 1 >= html.size()) return "'<' at the end" + At(i);
    char c = html[i + 1];
    if (c == '!' || c == '?') return std::string("markup declaration <") + c + At(i);
    bool end = c == '/';
    if (!(IsAlpha(c) || (end && i + 2 < html.size() && IsAlpha(html[i + 2])))) {
      if (end) return "'</' not followed by a tag name" + At(i);  // bogus comment or dropped
      ++i;  // '<' as text
      continue;
    }
    Tag tag;
    size_t next = 0;
    if (!ParseTag(html, i, &tag, &next)) return "tag <" + tag.name + "> not closed before the end" + At(i);
    if (!tag.end_tag) {
      std::string problem = CheckStartTag(tag, i);
      if (!problem.empty()) return problem;
    }
    i = next;
  }
  return "";
}

}  // namespace folio::fuzz
