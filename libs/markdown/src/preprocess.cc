// The pre-pass before md4c (see preprocess.h). It works on raw lines, so it
// knows fences and code spans only approximately: fences at any indentation
// and inside ">" quotes or list items, code spans closed by a backtick run of
// the same length before a blank line. Indented code blocks are not
// recognised (a "%%" inside one is still a comment).
#include "preprocess.h"

namespace folio::markdown {

namespace {

constexpr size_t kNpos = std::string_view::npos;

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The line without leading indentation, ">" markers and list bullets.
std::string_view StripContainers(std::string_view line) {
  size_t i = 0;
  while (true) {
    while (i < line.size() && IsBlank(line[i])) ++i;
    if (i < line.size() && line[i] == '>') {
      ++i;
      continue;
    }
    size_t j = i;
    if (j < line.size() && (line[j] == '-' || line[j] == '*' || line[j] == '+')) {
      ++j;
    } else {
      while (j < line.size() && line[j] >= '0' && line[j] <= '9') ++j;
      if (j > i && j < line.size() && (line[j] == '.' || line[j] == ')')) ++j;
      else j = i;
    }
    if (j > i && j < line.size() && (line[j] == ' ' || line[j] == '\t')) {
      i = j;
      continue;
    }
    return line.substr(i);
  }
}

// "[^label]: text" (up to three spaces first): records it, returns true.
bool ParseFootnoteDef(std::string_view line, std::vector<FootnoteDef>* defs) {
  size_t i = 0;
  while (i < 3 && i < line.size() && line[i] == ' ') ++i;
  if (line.substr(i, 2) != "[^") return false;
  size_t close = line.find("]:", i + 2);
  if (close == kNpos || close == i + 2) return false;
  std::string_view label = line.substr(i + 2, close - i - 2);
  for (char c : label) {
    if (IsBlank(c) || c == '[' || c == ']' || c == '\n') return false;
  }
  std::string_view text = line.substr(close + 2);
  size_t b = text.find_first_not_of(" \t");
  size_t e = text.find_last_not_of(" \t\r");
  text = b == kNpos ? std::string_view() : text.substr(b, e - b + 1);
  for (const FootnoteDef& d : *defs) {
    if (d.label == label) return true;  // the first definition wins
  }
  defs->push_back(FootnoteDef{std::string(label), std::string(text)});
  return true;
}

// Start of the backtick run of exactly `n` at or after `from`, stopping at a
// blank line; kNpos if none.
size_t FindClosingRun(std::string_view s, size_t from, size_t n) {
  size_t i = from;
  while (i < s.size()) {
    if (s[i] == '\n') {
      size_t j = i + 1;
      while (j < s.size() && IsBlank(s[j])) ++j;
      if (j >= s.size() || s[j] == '\n') return kNpos;
      i = j;
      continue;
    }
    if (s[i] != '`') {
      ++i;
      continue;
    }
    size_t k = i;
    while (k < s.size() && s[k] == '`') ++k;
    if (k - i == n) return i;
    i = k;
  }
  return kNpos;
}

bool IsSpaceOrNewline(char c) { return IsBlank(c) || c == '\n'; }

// True if a blank line starts at src[i] (just after a newline).
bool BlankLineAt(std::string_view src, size_t i) {
  while (i < src.size() && IsBlank(src[i])) ++i;
  return i >= src.size() || src[i] == '\n';
}

// The closing '$' of inline math opened just before `from`, by Obsidian's
// (and Pandoc's) rule: it follows a non-space and no digit follows it; the
// math ends with its paragraph. kNpos if there is none.
size_t FindMathClose(std::string_view src, size_t from) {
  for (size_t j = from; j < src.size(); ++j) {
    char c = src[j];
    if (c == '\\') {
      ++j;
    } else if (c == '\n') {
      if (BlankLineAt(src, j + 1)) return kNpos;
    } else if (c == '$' && j > from && !IsSpaceOrNewline(src[j - 1]) &&
               (j + 1 >= src.size() || src[j + 1] < '0' || src[j + 1] > '9')) {
      return j;
    }
  }
  return kNpos;
}

// The "$$" closing display math opened before `from`, in its paragraph.
size_t FindDisplayClose(std::string_view src, size_t from) {
  for (size_t j = from; j + 1 < src.size(); ++j) {
    if (src[j] == '\\') {
      ++j;
    } else if (src[j] == '\n' && BlankLineAt(src, j + 1)) {
      return kNpos;
    } else if (src[j] == '$' && src[j + 1] == '$') {
      return j;
    }
  }
  return kNpos;
}

// src[i] is '$': copies inline or display math through its end, or, when
// Obsidian would not open math there ("costs $5 and $10"), the '$' escaped
// so md4c does not either. Returns where to go on.
size_t ScanDollar(std::string_view src, size_t i, std::string* out) {
  if (i + 1 < src.size() && src[i + 1] == '$') {
    size_t close = FindDisplayClose(src, i + 2);
    size_t end = close == kNpos ? i + 2 : close + 2;
    out->append(src.substr(i, end - i));
    return end;
  }
  size_t close = i + 1 < src.size() && !IsSpaceOrNewline(src[i + 1]) ? FindMathClose(src, i + 1) : kNpos;
  if (close == kNpos) {
    out->append("\\$");
    return i + 1;
  }
  out->push_back('$');
  for (size_t k = i + 1; k < close; ++k) {
    if (src[k] == '\\' && k + 1 < close) {
      out->append(src.substr(k++, 2));
    } else if (src[k] == '$') {
      out->append("\\$");  // TeX's own escaped dollar; md4c does not close on it
    } else {
      out->push_back(src[k]);
    }
  }
  out->push_back('$');
  return close + 1;
}

// src[i] starts "^[": an inline footnote. Records its text as a definition
// under a label no "[^label]:" line can have (it holds a space) and writes
// a reference to it. 0 if the brackets do not close on the line.
size_t ScanInlineFootnote(std::string_view src, size_t i, std::string* out, std::vector<FootnoteDef>* defs) {
  int depth = 0;
  for (size_t j = i + 1; j < src.size() && src[j] != '\n'; ++j) {
    if (src[j] == '\\') {
      ++j;
    } else if (src[j] == '[') {
      ++depth;
    } else if (src[j] == ']' && --depth == 0) {
      if (j == i + 2) return 0;  // "^[]"
      std::string label = "inline " + std::to_string(defs->size() + 1);
      defs->push_back(FootnoteDef{label, std::string(src.substr(i + 2, j - i - 2))});
      out->append("[^" + label + "]");
      return j + 1 - i;
    }
  }
  return 0;
}

// Length of what must reach md4c untouched at src[i] ("[[target]]", an
// HTML tag or autolink, a link destination "](...)"), on this line; 0 if
// none starts there.
size_t VerbatimRun(std::string_view src, size_t i) {
  auto through = [&](std::string_view close, size_t from) -> size_t {
    size_t eol = src.find('\n', from);
    size_t e = src.find(close, from);
    if (e == kNpos || (eol != kNpos && e > eol)) return 0;
    return e + close.size() - i;
  };
  char c = src[i], next = i + 1 < src.size() ? src[i + 1] : '\0';
  if (c == '[' && next == '[') return through("]]", i + 2);
  if (c == ']' && next == '(') return through(")", i + 2);
  if (c == '<' && ((next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') || next == '/' || next == '!')) {
    return through(">", i + 1);
  }
  return 0;
}

// Copies the line starting at src[i] to *out without its comments; code
// spans, math and comments may carry it over following lines. Returns where
// the next line starts. Lines indented as code or opening an HTML block
// keep their '$' as written.
size_t ScanLine(std::string_view src, size_t i, std::string* out, std::vector<FootnoteDef>* defs) {
  size_t line_out = out->size();  // where the current line starts in *out
  size_t lead = i;
  while (lead < src.size() && src[lead] == ' ') ++lead;
  bool raw_dollars = lead - i >= 4 || (lead < src.size() && src[lead] == '\t') ||
                     (lead < src.size() && src[lead] == '<' && VerbatimRun(src, lead) != 0);
  while (i < src.size()) {
    char c = src[i];
    if (c == '\n') {
      out->push_back('\n');
      return i + 1;
    }
    size_t verbatim = 0;
    if (c == '\\' && i + 1 < src.size() && src[i + 1] != '\n') {
      out->append(src.substr(i, 2));
      i += 2;
    } else if ((c == '[' || c == ']' || c == '<') && (verbatim = VerbatimRun(src, i)) != 0) {
      out->append(src.substr(i, verbatim));
      i += verbatim;
    } else if (c == '$' && !raw_dollars) {
      i = ScanDollar(src, i, out);
      size_t nl = out->rfind('\n');
      if (nl != std::string::npos && nl + 1 > line_out) line_out = nl + 1;
    } else if (c == '^' && i + 1 < src.size() && src[i + 1] == '[' &&
               (verbatim = ScanInlineFootnote(src, i, out, defs)) != 0) {
      i += verbatim;
    } else if (c == '`') {
      size_t n = 0;
      while (i + n < src.size() && src[i + n] == '`') ++n;
      size_t close = FindClosingRun(src, i + n, n);
      size_t end = close == kNpos ? i + n : close + n;
      out->append(src.substr(i, end - i));
      i = end;
      size_t nl = out->rfind('\n');
      if (nl != std::string::npos && nl + 1 > line_out) line_out = nl + 1;
    } else if (c == '%' && i + 1 < src.size() && src[i + 1] == '%') {
      size_t close = src.find("%%", i + 2);
      size_t end = close == kNpos ? src.size() : close + 2;
      size_t eol = src.find('\n', end);
      size_t line_end = eol == kNpos ? src.size() : eol;
      bool blank_before = out->find_first_not_of(" \t", line_out) == std::string::npos;
      bool blank_after = src.substr(end, line_end - end).find_first_not_of(" \t\r") == kNpos;
      if (blank_before && blank_after) {  // the comment fills its lines: drop them
        out->resize(line_out);
        return eol == kNpos ? src.size() : eol + 1;
      }
      i = end;
    } else {
      out->push_back(c);
      ++i;
    }
  }
  return i;
}

}  // namespace

bool FenceTracker::InFence(std::string_view line) {
  std::string_view s = StripContainers(line);
  char c = s.empty() ? '\0' : s[0];
  size_t n = 0;
  if (c == '`' || c == '~') {
    while (n < s.size() && s[n] == c) ++n;
  }
  if (len_ > 0) {
    if (c == ch_ && n >= len_ && s.find_first_not_of(" \t\r", n) == kNpos) len_ = 0;
    return true;
  }
  if (n >= 3 && !(c == '`' && s.find('`', n) != kNpos)) {
    ch_ = c;
    len_ = n;
    return true;
  }
  return false;
}

Preprocessed Preprocess(std::string_view src) {
  Preprocessed pre;
  pre.body.reserve(src.size());
  FenceTracker fences;
  size_t i = 0;
  while (i < src.size()) {
    size_t eol = src.find('\n', i);
    size_t next = eol == kNpos ? src.size() : eol + 1;
    std::string_view line = src.substr(i, (eol == kNpos ? src.size() : eol) - i);
    if (fences.InFence(line)) {
      pre.body.append(src.substr(i, next - i));
      i = next;
    } else if (ParseFootnoteDef(line, &pre.footnotes)) {
      i = next;
    } else {
      i = ScanLine(src, i, &pre.body, &pre.footnotes);
    }
  }
  return pre;
}

}  // namespace folio::markdown
