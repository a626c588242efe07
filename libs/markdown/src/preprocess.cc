// The pre-pass before md4c (see preprocess.h). It works on raw lines, so it
// knows fences and code spans only approximately: fences at any indentation
// and inside ">" quotes or list items, code spans closed by a backtick run of
// the same length before a blank line. Indented code blocks are not
// recognised (a "%%" inside one is still a comment).
#include "preprocess.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

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

bool IsSpaceOrNewline(char c) { return IsBlank(c) || c == '\n'; }

// True if a blank line starts at src[i] (just after a newline).
bool BlankLineAt(std::string_view src, size_t i) {
  while (i < src.size() && IsBlank(src[i])) ++i;
  return i >= src.size() || src[i] == '\n';
}

// Where the output's current line starts once out[before..] was appended
// (math or a code span may span lines): after its last newline, if any.
// Only the appended part is searched, so a long line stays linear.
size_t LineStartAfter(std::string_view out, size_t before, size_t line_out) {
  size_t nl = out.substr(before).rfind('\n');
  return nl == kNpos ? line_out : before + nl + 1;
}

// CommonMark's HTML block start condition 6: these tag names open a block
// (also interrupting a paragraph).
constexpr std::string_view kBlockTags[] = {
    "address", "article", "aside", "base", "basefont", "blockquote", "body", "caption", "center", "col",
    "colgroup", "dd", "details", "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure",
    "footer", "form", "frame", "frameset", "h1", "h2", "h3", "h4", "h5", "h6", "head", "header", "hr",
    "html", "iframe", "legend", "li", "link", "main", "menu", "menuitem", "nav", "noframes", "ol",
    "optgroup", "option", "p", "param", "search", "section", "summary", "table", "tbody", "td", "tfoot",
    "th", "thead", "title", "tr", "track", "ul"};

// The pre-pass as one object: besides the output it keeps what its searches
// found, because it asks them with ever larger positions. Searching afresh
// at each '[', '$', '`' or "^[" made a long line or paragraph of them
// quadratic: a 1 MB note took minutes (issue 22).
class Pass {
 public:
  Pass(std::string_view src, Preprocessed* pre) : src_(src), pre_(pre) {}

  void Run();

 private:
  // The next `needle` at or after `from` (kNpos if none), remembered: a
  // later question from further on gets the same answer without a search.
  struct NextOf {
    std::string_view needle;
    size_t from = kNpos;  // the last question; kNpos: none yet
    size_t at = kNpos;    // its answer
  };
  size_t Find(NextOf* n, size_t from);

  bool ParseFootnoteDef(std::string_view line);
  size_t ScanLine(size_t i);
  size_t ScanDollar(size_t i);
  size_t FindMathClose(size_t from);
  size_t FindDisplayClose(size_t from);
  size_t FindClosingRun(size_t from, size_t n);
  void IndexRuns();
  size_t FindIndexedRun(size_t from, size_t n) const;
  size_t ScanInlineFootnote(size_t i);
  size_t MatchingBracket(size_t open);
  size_t VerbatimRun(size_t i);
  bool OpensHtmlBlock(size_t i, size_t eol) const;

  std::string_view src_;
  Preprocessed* pre_;
  std::unordered_set<std::string> labels_;  // footnote labels, once there are 16
  NextOf eol_{"\n"}, wikilink_close_{"]]"}, paren_close_{")"}, angle_close_{">"};
  // FindMathClose / FindDisplayClose: the last question and answer, and
  // where that scan stopped (the close, or the newline before a blank line).
  size_t math_from_ = kNpos, math_at_ = kNpos, math_stop_ = kNpos;
  size_t display_from_ = kNpos, display_at_ = kNpos, display_stop_ = kNpos;
  // FindClosingRun: bytes its scans read so far; past the note's size, the
  // start of every backtick run by its length, and of every newline that a
  // blank line follows.
  size_t scanned_ = 0;
  bool runs_indexed_ = false;
  std::unordered_map<size_t, std::vector<size_t>> runs_;
  std::vector<size_t> blank_breaks_;
  // MatchingBracket: the '[' -> ']' pairs of the line [bracket_line_,
  // bracket_end_) (sorted by the '['), built at the line's first "^[".
  size_t bracket_line_ = kNpos, bracket_end_ = kNpos;
  std::vector<std::pair<size_t, size_t>> brackets_;
  // Inside an HTML block (until a blank line): its '$' stay as written, as
  // md4c passes the block through without unescaping anything.
  bool html_block_ = false;
  bool prev_blank_ = true;  // the previous line was blank (or there was none)
};

// True if the line src_[i, eol) starts an HTML block by CommonMark's start
// conditions 1-7 (7, a line of one complete tag, only after a blank line).
bool Pass::OpensHtmlBlock(size_t i, size_t eol) const {
  size_t lead = i;
  while (lead < eol && src_[lead] == ' ') ++lead;
  if (lead - i > 3 || lead >= eol || src_[lead] != '<') return false;
  std::string_view line = src_.substr(lead, eol - lead);
  if (line.substr(0, 2) == "<?" || line.substr(0, 2) == "<!") return true;
  size_t n = line.size() > 1 && line[1] == '/' ? 2 : 1;
  std::string name;
  while (n < line.size() && ((line[n] >= 'a' && line[n] <= 'z') || (line[n] >= 'A' && line[n] <= 'Z') ||
                             (line[n] >= '0' && line[n] <= '9'))) {
    name += static_cast<char>(line[n] >= 'A' && line[n] <= 'Z' ? line[n] + 32 : line[n]);
    ++n;
  }
  if (name.empty()) return false;
  bool ends = n == line.size() || IsBlank(line[n]) || line[n] == '>' || line.substr(n, 2) == "/>";
  if (line[1] != '/' && (name == "script" || name == "pre" || name == "style" || name == "textarea")) return ends;
  if (ends && std::find(std::begin(kBlockTags), std::end(kBlockTags), name) != std::end(kBlockTags)) return true;
  if (!prev_blank_ || !ends) return false;
  size_t tag = line.find('>');  // condition 7: one complete tag, then only spaces
  return tag != kNpos && line.find_first_not_of(" \t\r", tag + 1) == kNpos && line.find('<', 1) > tag;
}

size_t Pass::Find(NextOf* n, size_t from) {
  bool known = n->from != kNpos && from >= n->from && (n->at == kNpos || n->at >= from);
  if (!known) n->at = src_.find(n->needle, from);
  n->from = from;
  return n->at;
}

// "[^label]: text" (up to three spaces first): records it, returns true.
bool Pass::ParseFootnoteDef(std::string_view line) {
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
  // The first definition wins; a scan while they are few, then a set.
  std::vector<FootnoteDef>& defs = pre_->footnotes;
  if (defs.size() < 16) {
    for (const FootnoteDef& d : defs) {
      if (d.label == label) return true;
    }
  } else {
    if (labels_.empty()) {
      for (const FootnoteDef& d : defs) labels_.insert(d.label);
    }
    if (!labels_.insert(std::string(label)).second) return true;
  }
  pre_->footnotes.push_back(FootnoteDef{std::string(label), std::string(text)});
  return true;
}

// Start of the backtick run of exactly `n` at or after `from`, stopping at a
// blank line; kNpos if none. `from` follows a run (src_[from] is no backtick),
// so the runs met from there are the note's own maximal runs. Most code spans
// close soon after they open: those are found by scanning ahead. Once the
// scans have read more than the note's size, every run is indexed instead
// (runs of many lengths, each unclosed, made the scans quadratic).
size_t Pass::FindClosingRun(size_t from, size_t n) {
  if (!runs_indexed_ && scanned_ > src_.size() + 4096) IndexRuns();
  if (runs_indexed_) return FindIndexedRun(from, n);
  size_t i = from;
  while (i < src_.size()) {
    ++scanned_;
    if (src_[i] == '\n') {
      size_t j = i + 1;
      while (j < src_.size() && IsBlank(src_[j])) ++j;
      if (j >= src_.size() || src_[j] == '\n') return kNpos;
      scanned_ += j - i;
      i = j;
      continue;
    }
    if (src_[i] != '`') {
      ++i;
      continue;
    }
    size_t k = i;
    while (k < src_.size() && src_[k] == '`') ++k;
    scanned_ += k - i;
    if (k - i == n) return i;
    i = k;
  }
  return kNpos;
}

void Pass::IndexRuns() {
  runs_indexed_ = true;
  for (size_t i = 0; i < src_.size();) {
    if (src_[i] == '\n' && BlankLineAt(src_, i + 1)) blank_breaks_.push_back(i);
    if (src_[i] != '`') {
      ++i;
      continue;
    }
    size_t k = i;
    while (k < src_.size() && src_[k] == '`') ++k;
    runs_[k - i].push_back(i);
    i = k;
  }
}

size_t Pass::FindIndexedRun(size_t from, size_t n) const {
  auto it = runs_.find(n);
  if (it == runs_.end()) return kNpos;
  auto run = std::lower_bound(it->second.begin(), it->second.end(), from);
  if (run == it->second.end()) return kNpos;
  auto blank = std::lower_bound(blank_breaks_.begin(), blank_breaks_.end(), from);
  return blank != blank_breaks_.end() && *blank < *run ? kNpos : *run;
}

// The closing '$' of inline math opened just before `from`, by Obsidian's
// (and Pandoc's) rule: it follows a non-space and no digit follows it; the
// math ends with its paragraph. kNpos if there is none. Every caller's
// src_[from - 1] is a '$', so backslash escapes read the same from any of
// them: an earlier answer still holds for a later `from` it does not pass.
size_t Pass::FindMathClose(size_t from) {
  if (math_from_ != kNpos && from >= math_from_ && (math_at_ != kNpos ? math_at_ > from : from <= math_stop_)) {
    return math_at_;
  }
  math_from_ = from;
  math_at_ = kNpos;
  math_stop_ = src_.size();
  for (size_t j = from; j < src_.size(); ++j) {
    char c = src_[j];
    if (c == '\\') {
      ++j;
    } else if (c == '\n') {
      if (BlankLineAt(src_, j + 1)) {
        math_stop_ = j;
        return kNpos;
      }
    } else if (c == '$' && j > from && !IsSpaceOrNewline(src_[j - 1]) &&
               (j + 1 >= src_.size() || src_[j + 1] < '0' || src_[j + 1] > '9')) {
      math_at_ = math_stop_ = j;
      return j;
    }
  }
  return kNpos;
}

// The "$$" closing display math opened before `from`, in its paragraph;
// remembered as FindMathClose's answers are.
size_t Pass::FindDisplayClose(size_t from) {
  if (display_from_ != kNpos && from >= display_from_ &&
      (display_at_ != kNpos ? display_at_ >= from : from <= display_stop_)) {
    return display_at_;
  }
  display_from_ = from;
  display_at_ = kNpos;
  display_stop_ = src_.size();
  for (size_t j = from; j + 1 < src_.size(); ++j) {
    if (src_[j] == '\\') {
      ++j;
    } else if (src_[j] == '\n' && BlankLineAt(src_, j + 1)) {
      display_stop_ = j;
      return kNpos;
    } else if (src_[j] == '$' && src_[j + 1] == '$') {
      display_at_ = display_stop_ = j;
      return j;
    }
  }
  return kNpos;
}

// src_[i] is '$': copies inline or display math through its end, or, when
// Obsidian would not open math there ("costs $5 and $10"), the '$' escaped
// so md4c does not either. Returns where to go on.
size_t Pass::ScanDollar(size_t i) {
  std::string* out = &pre_->body;
  if (i + 1 < src_.size() && src_[i + 1] == '$') {
    size_t close = FindDisplayClose(i + 2);
    size_t end = close == kNpos ? i + 2 : close + 2;
    out->append(src_.substr(i, end - i));
    return end;
  }
  size_t close = i + 1 < src_.size() && !IsSpaceOrNewline(src_[i + 1]) ? FindMathClose(i + 1) : kNpos;
  if (close == kNpos) {
    out->append("\\$");
    return i + 1;
  }
  out->push_back('$');
  for (size_t k = i + 1; k < close; ++k) {
    if (src_[k] == '\\' && k + 1 < close) {
      out->append(src_.substr(k++, 2));
    } else if (src_[k] == '$') {
      out->append("\\$");  // TeX's own escaped dollar; md4c does not close on it
    } else {
      out->push_back(src_[k]);
    }
  }
  out->push_back('$');
  return close + 1;
}

// The ']' closing the '[' at `open` on its line (brackets nest, backslash
// escapes); kNpos if it is not closed there. Pairs are found for the whole
// line at once, with a stack.
size_t Pass::MatchingBracket(size_t open) {
  if (bracket_line_ == kNpos || open < bracket_line_ || open >= bracket_end_) {
    size_t line = src_.rfind('\n', open);
    bracket_line_ = line == kNpos ? 0 : line + 1;
    brackets_.clear();
    std::vector<size_t> stack;
    size_t j = bracket_line_;
    for (; j < src_.size() && src_[j] != '\n'; ++j) {
      if (src_[j] == '\\') {
        ++j;
      } else if (src_[j] == '[') {
        stack.push_back(j);
      } else if (src_[j] == ']' && !stack.empty()) {
        brackets_.emplace_back(stack.back(), j);
        stack.pop_back();
      }
    }
    bracket_end_ = j;
    std::sort(brackets_.begin(), brackets_.end());
  }
  auto it = std::lower_bound(brackets_.begin(), brackets_.end(), std::make_pair(open, size_t{0}));
  return it != brackets_.end() && it->first == open ? it->second : kNpos;
}

// src_[i] starts "^[": an inline footnote. Records its text as a definition
// under a label no "[^label]:" line can have (it holds a space) and writes
// a reference to it. 0 if the brackets do not close on the line.
size_t Pass::ScanInlineFootnote(size_t i) {
  size_t close = MatchingBracket(i + 1);
  if (close == kNpos || close == i + 2) return 0;  // unclosed, or "^[]"
  std::vector<FootnoteDef>& defs = pre_->footnotes;
  std::string label = "inline " + std::to_string(defs.size() + 1);
  defs.push_back(FootnoteDef{label, std::string(src_.substr(i + 2, close - i - 2))});
  pre_->body.append("[^" + label + "]");
  return close + 1 - i;
}

// Length of what must reach md4c untouched at src_[i] ("[[target]]", an
// HTML tag or autolink, a link destination "](...)"), on this line; 0 if
// none starts there.
size_t Pass::VerbatimRun(size_t i) {
  auto through = [&](NextOf* close, size_t from) -> size_t {
    size_t eol = Find(&eol_, from);
    size_t e = Find(close, from);
    if (e == kNpos || (eol != kNpos && e > eol)) return 0;
    return e + close->needle.size() - i;
  };
  char c = src_[i], next = i + 1 < src_.size() ? src_[i + 1] : '\0';
  if (c == '[' && next == '[') return through(&wikilink_close_, i + 2);
  if (c == ']' && next == '(') return through(&paren_close_, i + 2);
  if (c == '<' && ((next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') || next == '/' || next == '!')) {
    return through(&angle_close_, i + 1);
  }
  return 0;
}

// Copies the line starting at src_[i] to the body without its comments;
// code spans, math and comments may carry it over following lines. Returns
// where the next line starts. Lines indented as code or opening an HTML
// block keep their '$' as written.
size_t Pass::ScanLine(size_t i) {
  std::string* out = &pre_->body;
  size_t line_out = out->size();  // where the current line starts in *out
  size_t lead = i;
  while (lead < src_.size() && src_[lead] == ' ') ++lead;
  bool raw_dollars = html_block_ || lead - i >= 4 || (lead < src_.size() && src_[lead] == '\t') ||
                     (lead < src_.size() && src_[lead] == '<' && VerbatimRun(lead) != 0);
  while (i < src_.size()) {
    char c = src_[i];
    if (c == '\n') {
      out->push_back('\n');
      return i + 1;
    }
    size_t verbatim = 0;
    if (c == '\\' && i + 1 < src_.size() && src_[i + 1] != '\n') {
      out->append(src_.substr(i, 2));
      i += 2;
    } else if ((c == '[' || c == ']' || c == '<') && (verbatim = VerbatimRun(i)) != 0) {
      out->append(src_.substr(i, verbatim));
      i += verbatim;
    } else if (c == '$' && !raw_dollars) {
      size_t before = out->size();
      i = ScanDollar(i);
      line_out = LineStartAfter(*out, before, line_out);
    } else if (c == '^' && i + 1 < src_.size() && src_[i + 1] == '[' && (verbatim = ScanInlineFootnote(i)) != 0) {
      i += verbatim;
    } else if (c == '`') {
      size_t n = 0;
      while (i + n < src_.size() && src_[i + n] == '`') ++n;
      size_t close = FindClosingRun(i + n, n);
      size_t end = close == kNpos ? i + n : close + n;
      size_t before = out->size();
      out->append(src_.substr(i, end - i));
      i = end;
      line_out = LineStartAfter(*out, before, line_out);
    } else if (c == '%' && i + 1 < src_.size() && src_[i + 1] == '%') {
      size_t close = src_.find("%%", i + 2);
      size_t end = close == kNpos ? src_.size() : close + 2;
      size_t eol = src_.find('\n', end);
      size_t line_end = eol == kNpos ? src_.size() : eol;
      bool blank_before = out->find_first_not_of(" \t", line_out) == std::string::npos;
      bool blank_after = src_.substr(end, line_end - end).find_first_not_of(" \t\r") == kNpos;
      if (blank_before && blank_after) {  // the comment fills its lines: drop them
        out->resize(line_out);
        return eol == kNpos ? src_.size() : eol + 1;
      }
      i = end;
    } else {
      out->push_back(c);
      ++i;
    }
  }
  return i;
}

void Pass::Run() {
  pre_->body.reserve(src_.size());
  FenceTracker fences;
  size_t i = 0;
  while (i < src_.size()) {
    size_t eol = src_.find('\n', i);
    size_t next = eol == kNpos ? src_.size() : eol + 1;
    std::string_view line = src_.substr(i, (eol == kNpos ? src_.size() : eol) - i);
    if (fences.InFence(line)) {
      pre_->body.append(src_.substr(i, next - i));
      i = next;
    } else if (ParseFootnoteDef(line)) {
      i = next;
    } else {
      bool blank = line.find_first_not_of(" \t\r") == kNpos;
      if (blank) html_block_ = false;
      else if (!html_block_) html_block_ = OpensHtmlBlock(i, i + line.size());
      prev_blank_ = blank;
      i = ScanLine(i);
    }
  }
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
  Pass(src, &pre).Run();
  return pre;
}

}  // namespace folio::markdown
