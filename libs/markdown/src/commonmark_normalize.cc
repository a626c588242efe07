#include "commonmark_normalize.h"

#include <algorithm>
#include <iterator>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "folio/core/utf8.h"

namespace folio::markdown::testing {
namespace {

// normalize.py's is_block_tag list.
constexpr std::string_view kBlockTags[] = {
    "article", "header",   "aside",    "hgroup", "blockquote", "hr",     "iframe",     "body",  "li",
    "map",     "button",   "object",   "canvas", "ol",         "caption", "output",    "col",   "p",
    "colgroup", "pre",     "dd",       "progress", "div",      "section", "dl",        "table", "td",
    "dt",      "tbody",    "embed",    "textarea", "fieldset", "tfoot",  "figcaption", "th",    "figure",
    "thead",   "footer",   "tr",       "form",   "ul",         "h1",     "h2",         "h3",    "h4",
    "h5",      "h6",       "video",    "script", "style"};

bool IsBlockTag(std::string_view tag) {
  return std::find(std::begin(kBlockTags), std::end(kBlockTags), tag) != std::end(kBlockTags);
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// "&name;" / "&#N;" / "&#xH;" at s[0]: its length and code point, or nullopt
// (also for names outside the small table: those stay as written).
std::optional<std::pair<size_t, uint32_t>> CharRef(std::string_view s) {
  size_t semi = s.find(';');
  if (s.size() < 3 || s[0] != '&' || semi == std::string_view::npos || semi > 34) return std::nullopt;
  std::string_view body = s.substr(1, semi - 1);
  if (body.empty()) return std::nullopt;
  if (body[0] == '#') {
    bool hex = body.size() > 1 && (body[1] == 'x' || body[1] == 'X');
    std::string_view digits = body.substr(hex ? 2 : 1);
    if (digits.empty() || digits.size() > 8) return std::nullopt;
    uint32_t cp = 0;
    for (char c : digits) {
      int d = c >= '0' && c <= '9' ? c - '0' : hex && Lower(c) >= 'a' && Lower(c) <= 'f' ? Lower(c) - 'a' + 10 : -1;
      if (d < 0) return std::nullopt;
      cp = cp * (hex ? 16 : 10) + static_cast<uint32_t>(d);
    }
    return std::pair{semi + 1, cp};
  }
  static constexpr std::pair<std::string_view, uint32_t> kNames[] = {
      {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}, {"ouml", 0xF6}};
  for (const auto& [name, cp] : kNames) {
    if (body == name) return std::pair{semi + 1, cp};
  }
  return std::nullopt;
}

// Character references decoded (as html.unescape does for attribute values).
std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size();) {
    auto ref = s[i] == '&' ? CharRef(s.substr(i)) : std::nullopt;
    if (ref) {
      folio::AppendUtf8(ref->second, &out);
      i += ref->first;
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

// Python's html.escape(v, quote=True).
std::string EscapeAttr(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#x27;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

struct Attr {
  std::string name;
  std::optional<std::string> value;
  bool operator<(const Attr& o) const {
    if (name != o.name) return name < o.name;
    return value.value_or("") < o.value.value_or("");
  }
};

struct Tag {
  bool end = false;
  bool self_closing = false;
  std::string name;
  std::vector<Attr> attrs;
};

// Parses "<name attrs>" / "</name>" / "<name/>"; nullopt if `chunk` is no tag
// (then it is text, as HTMLParser treats "<33>").
std::optional<Tag> ParseTag(std::string_view chunk) {
  Tag tag;
  size_t i = 1;
  if (i < chunk.size() && chunk[i] == '/') tag.end = true, ++i;
  if (i >= chunk.size() || !IsAlpha(chunk[i])) return std::nullopt;
  while (i < chunk.size() && !IsSpace(chunk[i]) && chunk[i] != '/' && chunk[i] != '>') tag.name += Lower(chunk[i++]);
  size_t close = chunk.size() - 1;  // the '>'
  while (i < close) {
    while (i < close && (IsSpace(chunk[i]) || chunk[i] == '/')) ++i;
    if (i >= close) break;
    Attr attr;
    while (i < close && !IsSpace(chunk[i]) && chunk[i] != '=' && chunk[i] != '>' && chunk[i] != '/') {
      attr.name += Lower(chunk[i++]);
    }
    while (i < close && IsSpace(chunk[i])) ++i;
    if (i < close && chunk[i] == '=') {
      ++i;
      while (i < close && IsSpace(chunk[i])) ++i;
      std::string value;
      if (i < close && (chunk[i] == '"' || chunk[i] == '\'')) {
        char q = chunk[i++];
        while (i < close && chunk[i] != q) value += chunk[i++];
        ++i;
      } else {
        while (i < close && !IsSpace(chunk[i])) value += chunk[i++];
      }
      attr.value = Unescape(value);
    }
    if (!attr.name.empty()) tag.attrs.push_back(std::move(attr));
  }
  tag.self_closing = chunk.size() >= 2 && chunk[chunk.size() - 2] == '/';
  return tag;
}

// normalize.py's MyHTMLParser.
class Normalizer {
 public:
  std::string Run(std::string_view html);

 private:
  enum class Last { kStartTag, kEndTag, kData, kOther };
  void Data(std::string data);
  void Text(std::string_view text);
  void Start(const Tag& tag);
  void End(std::string_view name);
  void RStrip() {
    while (!out_.empty() && IsSpace(out_.back())) out_.pop_back();
  }

  std::string out_;
  Last last_ = Last::kStartTag;
  std::string last_tag_;
  bool in_pre_ = false;
};

void Normalizer::Data(std::string data) {
  bool after_tag = last_ == Last::kEndTag || last_ == Last::kStartTag;
  bool after_block_tag = after_tag && IsBlockTag(last_tag_);
  if (after_tag && last_tag_ == "br") data.erase(0, std::min(data.find_first_not_of('\n'), data.size()));
  if (!in_pre_) {  // re.sub(r'\s+', ' ', data)
    std::string collapsed;
    bool in_run = false;
    for (char c : data) {
      if (IsSpace(c)) {
        if (!in_run) collapsed.push_back(' ');
        in_run = true;
      } else {
        collapsed.push_back(c);
        in_run = false;
      }
    }
    data = std::move(collapsed);
  }
  if (after_block_tag && !in_pre_) {
    auto first = data.find_first_not_of(" \t\n\r\f\v");
    data.erase(0, first == std::string::npos ? data.size() : first);
    if (last_ == Last::kEndTag) {
      while (!data.empty() && IsSpace(data.back())) data.pop_back();
    }
  }
  out_ += data;
  last_ = Last::kData;
}

void Normalizer::Text(std::string_view text) {
  std::string pending;
  for (size_t i = 0; i < text.size();) {
    auto ref = text[i] == '&' ? CharRef(text.substr(i)) : std::nullopt;
    if (!ref) {
      pending.push_back(text[i++]);
      continue;
    }
    if (!pending.empty()) Data(std::exchange(pending, {}));
    switch (ref->second) {
      case '<': out_ += "&lt;"; break;
      case '>': out_ += "&gt;"; break;
      case '&': out_ += "&amp;"; break;
      case '"': out_ += "&quot;"; break;
      default: folio::AppendUtf8(ref->second, &out_);
    }
    last_ = Last::kOther;
    i += ref->first;
  }
  if (!pending.empty()) Data(std::move(pending));
}

void Normalizer::Start(const Tag& tag) {
  if (tag.name == "pre") in_pre_ = true;
  if (IsBlockTag(tag.name)) RStrip();
  out_ += "<" + tag.name;
  std::vector<Attr> attrs = tag.attrs;
  std::sort(attrs.begin(), attrs.end());
  for (const Attr& a : attrs) {
    out_ += " " + a.name;
    if (a.value) out_ += "=\"" + EscapeAttr(*a.value) + "\"";
  }
  out_ += ">";
  last_tag_ = tag.name;
  last_ = tag.self_closing ? Last::kEndTag : Last::kStartTag;
}

void Normalizer::End(std::string_view name) {
  if (name == "pre") in_pre_ = false;
  else if (IsBlockTag(name)) RStrip();
  out_ += "</" + std::string(name) + ">";
  last_tag_ = std::string(name);
  last_ = Last::kEndTag;
}

std::string Normalizer::Run(std::string_view html) {
  for (size_t i = 0; i < html.size();) {
    if (html[i] != '<') {
      size_t next = html.find('<', i);
      if (next == std::string_view::npos) next = html.size();
      Text(html.substr(i, next - i));
      i = next;
      continue;
    }
    std::string_view rest = html.substr(i);
    bool verbatim = false;  // CDATA and comments, kept as written
    for (auto [open, close] : {std::pair<std::string_view, std::string_view>{"<![CDATA[", "]]>"}, {"<!--", "-->"}}) {
      size_t end = rest.starts_with(open) ? rest.find(close, open.size()) : std::string_view::npos;
      if (end == std::string_view::npos) continue;
      out_ += rest.substr(0, end + close.size());
      last_ = Last::kOther;
      i += end + close.size();
      verbatim = true;
      break;
    }
    if (verbatim) continue;
    size_t gt = rest.find('>');
    if (gt == std::string_view::npos) {  // normalize.py's chunking drops a '<' that no '>' follows
      ++i;
      continue;
    }
    std::string_view chunk = rest.substr(0, gt + 1);
    i += chunk.size();
    if (chunk.starts_with("<!") || chunk.starts_with("<?")) {
      out_ += chunk;
      last_ = Last::kOther;
    } else if (auto tag = ParseTag(chunk)) {
      if (tag->end) End(tag->name);
      else Start(*tag);
    } else {
      Text(chunk);
    }
  }
  return out_;
}

}  // namespace

std::string NormalizeHtml(std::string_view html) { return Normalizer().Run(html); }

}  // namespace folio::markdown::testing
