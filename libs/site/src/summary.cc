#include "folio/site/summary.h"

#include <cctype>
#include <vector>

#include "folio/core/text.h"

namespace folio::site {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool AllOf(std::string_view s, char c) {
  size_t n = 0;
  for (char x : s) {
    if (x == c) ++n;
    else if (x != ' ') return false;
  }
  return n >= 3;
}

bool IsRule(std::string_view t) { return AllOf(t, '-') || AllOf(t, '*') || AllOf(t, '_'); }
bool IsSetextUnderline(std::string_view t) {
  return !t.empty() && (t.find_first_not_of('=') == std::string_view::npos ||
                        t.find_first_not_of('-') == std::string_view::npos);
}

bool IsHeading(std::string_view t) {
  size_t n = 0;
  while (n < t.size() && t[n] == '#') ++n;
  return n >= 1 && n <= 6 && (n == t.size() || t[n] == ' ' || t[n] == '\t');
}

// "```", "~~~" (3 or more): the fence's marker, or "".
std::string_view Fence(std::string_view t) {
  if (t.size() < 3 || (t[0] != '`' && t[0] != '~')) return {};
  size_t n = 0;
  while (n < t.size() && t[n] == t[0]) ++n;
  return n >= 3 ? t.substr(0, n) : std::string_view{};
}

// A line of only #tags, only embeds ("![[x]]", "![a](b)") or only a ^block-id.
bool IsNoise(std::string_view t) {
  if (t.front() == '^') return t.find(' ') == std::string_view::npos;
  if (StartsWith(t, "![[") && t.back() == ']' && t.find("]]") == t.size() - 2) return true;
  if (StartsWith(t, "![") && t.back() == ')' && t.find("](") != std::string_view::npos) return true;
  for (size_t i = 0; i < t.size();) {
    while (i < t.size() && t[i] == ' ') ++i;
    if (i == t.size()) break;
    if (t[i] != '#') return false;
    while (i < t.size() && t[i] != ' ') ++i;
  }
  return true;
}

// The text of a list item or quote line without its markers ("- [x] a" -> "a").
std::string_view StripMarkers(std::string_view t) {
  for (bool again = true; again && !t.empty();) {
    again = false;
    if (t[0] == '>') {
      t = Trim(t.substr(1));
      again = true;
    } else if ((t[0] == '-' || t[0] == '*' || t[0] == '+') && t.size() > 1 && t[1] == ' ') {
      t = Trim(t.substr(2));
      again = true;
    } else if (t[0] >= '0' && t[0] <= '9') {
      size_t n = t.find_first_not_of("0123456789");
      if (n != std::string_view::npos && n < 10 && (t[n] == '.' || t[n] == ')') && n + 1 < t.size() && t[n + 1] == ' ') {
        t = Trim(t.substr(n + 2));
        again = true;
      }
    }
    if (t.size() >= 3 && t[0] == '[' && t[2] == ']' && (t.size() == 3 || t[3] == ' ')) t = Trim(t.substr(3));  // task
  }
  return t;
}

// The first paragraph's lines, markers stripped.
std::vector<std::string_view> FirstParagraph(std::string_view body) {
  std::vector<std::string_view> para;
  std::string_view fence;
  bool math = false, comment = false, html_comment = false;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t eol = body.find('\n', pos);
    std::string_view raw = body.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    pos = eol == std::string_view::npos ? body.size() : eol + 1;
    std::string_view t = Trim(raw);
    const bool quoted = !t.empty() && t[0] == '>';
    std::string_view inner = quoted ? Trim(StripMarkers(t)) : t;
    if (!fence.empty()) {
      if (StartsWith(inner, fence) && Trim(inner.substr(fence.size())).empty()) fence = {};
      continue;
    }
    if (math) { math = inner.find("$$") == std::string_view::npos; continue; }
    if (comment) { comment = inner.find("%%") == std::string_view::npos; continue; }
    if (html_comment) { html_comment = inner.find("-->") == std::string_view::npos; continue; }
    if (!para.empty() && IsSetextUnderline(t)) {  // the lines so far were a heading
      para.clear();
      continue;
    }
    const bool indented_code = para.empty() && (StartsWith(raw, "    ") || StartsWith(raw, "\t"));
    if (inner.empty() || indented_code) {
      if (!para.empty()) return para;
      continue;
    }
    bool skip = true;
    if (!(fence = Fence(inner)).empty()) {
    } else if (StartsWith(inner, "$$")) {
      math = inner.size() == 2 || inner.find("$$", 2) == std::string_view::npos;
    } else if (StartsWith(inner, "%%")) {
      comment = inner.size() == 2 || inner.find("%%", 2) == std::string_view::npos;
    } else if (StartsWith(inner, "<!--")) {
      html_comment = inner.find("-->") == std::string_view::npos;
    } else if (quoted && StartsWith(inner, "[!")) {  // a callout's title line
    } else if (IsHeading(inner) || IsRule(inner) || inner[0] == '|' || inner[0] == '<' || IsNoise(inner)) {
    } else {
      std::string_view text = StripMarkers(inner);
      if (!text.empty() && !IsNoise(text)) {
        para.push_back(text);
        skip = false;
      }
    }
    if (skip && !para.empty()) return para;
  }
  return para;
}

// Appends `s` without inline markup.
void AppendPlain(std::string_view s, std::string* out);

// [[target#anchor|alias]] -> alias, else target (without .md); ![[...]] -> nothing.
size_t Wikilink(std::string_view s, size_t i, bool embed, std::string* out) {
  size_t end = s.find("]]", i + 2);
  if (end == std::string_view::npos) return std::string_view::npos;
  std::string_view inner = s.substr(i + 2, end - i - 2);
  if (!embed) {
    size_t bar = inner.find('|');
    if (bar != std::string_view::npos) {
      AppendPlain(inner.substr(bar + 1), out);
    } else {
      std::string_view target = inner.substr(0, inner.find('#'));
      if (target.size() > 3 && EqualsIgnoreAsciiCase(target.substr(target.size() - 3), ".md")) target.remove_suffix(3);
      *out += target.empty() ? inner.substr(1) : target;
    }
  }
  return end + 2;
}

// [text](url) -> text; ![alt](url) -> nothing. npos when it is no link.
size_t MarkdownLink(std::string_view s, size_t i, bool image, std::string* out) {
  size_t close = s.find("](", i + 1);
  if (close == std::string_view::npos) return std::string_view::npos;
  size_t end = s.find(')', close + 2);
  if (end == std::string_view::npos) return std::string_view::npos;
  if (!image) AppendPlain(s.substr(i + 1, close - i - 1), out);
  return end + 1;
}

void AppendPlain(std::string_view s, std::string* out) {
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    size_t next = std::string_view::npos;
    if (c == '\\' && i + 1 < s.size() && std::ispunct(static_cast<unsigned char>(s[i + 1]))) {
      *out += s[i + 1];
      i += 2;
      continue;
    }
    if (StartsWith(s.substr(i), "![[")) next = Wikilink(s, i + 1, true, out);
    else if (StartsWith(s.substr(i), "[[")) next = Wikilink(s, i, false, out);
    else if (StartsWith(s.substr(i), "![")) next = MarkdownLink(s, i + 1, true, out);
    else if (StartsWith(s.substr(i), "[^")) next = s.find(']', i);
    else if (c == '[') next = MarkdownLink(s, i, false, out);
    else if (StartsWith(s.substr(i), "%%")) next = s.find("%%", i + 2);
    else if (c == '<' && i + 1 < s.size() && (std::isalpha(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '/')) {
      next = s.find('>', i);
    }
    if (next != std::string_view::npos) {
      if (s[i] == '[' && s[i + 1] == '^') ++next;             // past the footnote's ']'
      else if (s[i] == '%') next += 2;                        // past the closing %%
      else if (s[i] == '<') ++next;                           // past '>'
      i = next;
      continue;
    }
    if (c == '*' || c == '`' || (c == '=' && i + 1 < s.size() && s[i + 1] == '=') ||
        (c == '~' && i + 1 < s.size() && s[i + 1] == '~')) {
      i += c == '=' || c == '~' ? 2 : 1;
      continue;
    }
    // '_' marks emphasis only at a word's edge ("snake_case" keeps it).
    if (c == '_' && (i == 0 || i + 1 == s.size() || !std::isalnum(static_cast<unsigned char>(s[i - 1])) ||
                     !std::isalnum(static_cast<unsigned char>(s[i + 1])))) {
      ++i;
      continue;
    }
    *out += c;
    ++i;
  }
}

// Cuts `s` to at most `max` bytes at a space (or a character boundary) and adds "…".
void Cut(std::string* s, size_t max) {
  if (s->size() <= max) return;
  size_t cut = s->rfind(' ', max);
  if (cut == std::string::npos || cut < max / 2) {
    cut = max;
    while (cut > 0 && (static_cast<unsigned char>((*s)[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
  }
  s->resize(cut);
  while (!s->empty() && (s->back() == ' ' || s->back() == ',' || s->back() == ';' || s->back() == ':')) s->pop_back();
  *s += "…";
}

}  // namespace

std::string NoteDescription(std::string_view body, size_t max) {
  std::string text;
  for (std::string_view line : FirstParagraph(body)) {
    if (!text.empty()) text += ' ';
    // Only a line's start can reach the description; bounding it keeps the
    // markup scan linear however many unclosed '[[' a note holds.
    AppendPlain(line.substr(0, max * 16), &text);
    if (text.size() > max * 2) break;  // enough to cut from
  }
  // Collapse runs of white space; drop a trailing ^block-id.
  std::string out;
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\r') {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  if (size_t caret = out.rfind(" ^"); caret != std::string::npos && out.find(' ', caret + 1) == std::string::npos) {
    out.resize(caret);
  }
  Cut(&out, max);
  return out;
}

}  // namespace folio::site
