// ExtractSection / ExtractBlock: parts of a note's markdown, for embeds.
// Line-based: ATX headings ("## x") only, fenced code skipped; setext
// headings ("x\n===") are not sections.
#include <algorithm>
#include <vector>

#include "folio/core/text.h"
#include "folio/markdown/frontmatter.h"
#include "folio/markdown/render.h"
#include "folio/markdown/slug.h"
#include "preprocess.h"

namespace folio::markdown {

namespace {

struct Line {
  std::string_view text;  // without the newline
  size_t start = 0;       // offset in the body
  size_t end = 0;         // offset after the newline
  bool code = false;      // part of a fenced code block
};

std::string_view BodyOf(std::string_view source) {
  Frontmatter fm = ParseFrontmatter(source);
  return source.substr(std::min(fm.body_offset, source.size()));
}

std::vector<Line> SplitLines(std::string_view body) {
  std::vector<Line> lines;
  FenceTracker fences;
  size_t i = 0;
  while (i < body.size()) {
    size_t eol = body.find('\n', i);
    size_t end = eol == std::string_view::npos ? body.size() : eol + 1;
    std::string_view text = body.substr(i, end - i);
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.remove_suffix(1);
    bool code = fences.InFence(text);
    lines.push_back(Line{text, i, end, code});
    i = end;
  }
  return lines;
}

bool IsBlankLine(std::string_view s) { return s.find_first_not_of(" \t") == std::string_view::npos; }

size_t Indent(std::string_view s) {
  size_t i = s.find_first_not_of(" \t");
  return i == std::string_view::npos ? s.size() : i;
}

// Level of an ATX heading line (0 if it is none); *text = its text.
int HeadingLevel(std::string_view line, std::string_view* text) {
  size_t i = 0;
  while (i < 3 && i < line.size() && line[i] == ' ') ++i;
  size_t n = 0;
  while (i + n < line.size() && line[i + n] == '#') ++n;
  if (n == 0 || n > 6) return 0;
  std::string_view t = line.substr(i + n);
  if (!t.empty() && t.front() != ' ' && t.front() != '\t') return 0;
  size_t b = t.find_first_not_of(" \t");
  t = b == std::string_view::npos ? std::string_view() : t.substr(b);
  size_t e = t.find_last_not_of(" \t#");  // the optional closing "###"
  if (e != std::string_view::npos && e + 1 < t.size() && (t[e] == ' ' || t[e] == '\t')) t = t.substr(0, e);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  *text = t;
  return static_cast<int>(n);
}

bool IsListItem(std::string_view line) {
  std::string_view s = line.substr(Indent(line));
  if (s.size() >= 2 && (s[0] == '-' || s[0] == '*' || s[0] == '+') && (s[1] == ' ' || s[1] == '\t')) return true;
  size_t d = 0;
  while (d < s.size() && s[d] >= '0' && s[d] <= '9') ++d;
  return d > 0 && d + 1 < s.size() && (s[d] == '.' || s[d] == ')') && (s[d + 1] == ' ' || s[d + 1] == '\t');
}

// Where "^id" ends `line` (after trimming), or npos.
size_t BlockIdAt(std::string_view line, std::string_view id) {
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  if (line.size() < id.size() + 1 || line.substr(line.size() - id.size()) != id) return std::string_view::npos;
  size_t caret = line.size() - id.size() - 1;
  if (line[caret] != '^') return std::string_view::npos;
  if (caret > 0 && line[caret - 1] != ' ' && line[caret - 1] != '\t' && line[caret - 1] != ']') {
    return std::string_view::npos;
  }
  return caret;
}

// A heading's text without its #tags ("Plan #draft" -> "Plan "), as the
// renderer names headings; "#1" and "C#" are not tags.
std::string WithoutTags(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    bool at_word = i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t';
    if (text[i] == '#' && at_word && i + 1 < text.size()) {
      size_t e = i + 1;
      while (e < text.size() && text[e] != ' ' && text[e] != '\t' && text[e] != '#') ++e;
      std::string_view tag = text.substr(i + 1, e - i - 1);
      bool digits = tag.find_first_not_of("0123456789") == std::string_view::npos;
      if (!tag.empty() && !digits) {
        i = e;
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

// The label of a footnote definition line "[^label]: text", or "".
std::string_view DefinitionLabel(std::string_view line) {
  size_t i = 0;
  while (i < 3 && i < line.size() && line[i] == ' ') ++i;
  if (line.substr(i, 2) != "[^") return {};
  size_t close = line.find("]:", i + 2);
  if (close == std::string_view::npos || close == i + 2) return {};
  std::string_view label = line.substr(i + 2, close - i - 2);
  if (label.find_first_of(" \t[]") != std::string_view::npos) return {};
  return label;
}

// `part` (lines [first, last) of the body) with the definitions of the
// footnotes it references but does not define appended, so an embedded
// section shows its footnotes as the whole note does.
std::string WithFootnotes(std::string part, const std::vector<Line>& lines, size_t first, size_t last) {
  std::vector<std::string_view> wanted;
  for (size_t at = part.find("[^"); at != std::string::npos; at = part.find("[^", at + 2)) {
    size_t close = part.find(']', at + 2);
    if (close == std::string::npos || close == at + 2) continue;
    std::string_view label = std::string_view(part).substr(at + 2, close - at - 2);
    if (label.find_first_of(" \t[\n") != std::string_view::npos) continue;
    if (std::find(wanted.begin(), wanted.end(), label) == wanted.end()) wanted.push_back(label);
  }
  if (wanted.empty()) return part;
  for (size_t k = first; k < last; ++k) {  // defined inside the part already
    std::string_view label = lines[k].code ? std::string_view() : DefinitionLabel(lines[k].text);
    if (!label.empty()) wanted.erase(std::remove(wanted.begin(), wanted.end(), label), wanted.end());
  }
  std::string defs;
  for (size_t k = 0; k < lines.size() && !wanted.empty(); ++k) {
    if (lines[k].code || (k >= first && k < last)) continue;
    std::string_view label = DefinitionLabel(lines[k].text);
    auto it = std::find(wanted.begin(), wanted.end(), label);
    if (label.empty() || it == wanted.end()) continue;
    wanted.erase(it);
    defs.append(lines[k].text);
    defs += '\n';
  }
  if (defs.empty()) return part;
  if (!part.empty() && part.back() != '\n') part += '\n';
  return part + "\n" + defs;
}

}  // namespace

std::optional<std::string> ExtractSection(std::string_view source, std::string_view heading) {
  std::string_view body = BodyOf(source);
  std::vector<Line> lines = SplitLines(body);
  size_t from = 0, to = lines.size(), found = lines.size();
  bool any = false;
  size_t i = 0;
  while (i <= heading.size()) {  // "A#B": B inside A's section
    size_t hash = std::min(heading.find('#', i), heading.size());
    std::string_view part = heading.substr(i, hash - i);
    i = hash + 1;
    if (IsBlankLine(part)) continue;
    any = true;
    std::string want = HeadingId(part);
    found = to;
    int level = 0;
    for (size_t k = from; k < to && found == to; ++k) {
      std::string_view text;
      if (lines[k].code || (level = HeadingLevel(lines[k].text, &text)) == 0) continue;
      if (HeadingId(WithoutTags(text)) == want || HeadingId(text) == want) found = k;
    }
    if (found == to) return std::nullopt;
    size_t end = found + 1;
    std::string_view text;
    while (end < to && (lines[end].code || HeadingLevel(lines[end].text, &text) == 0 ||
                        HeadingLevel(lines[end].text, &text) > level)) {
      ++end;
    }
    from = found + 1;
    to = end;
  }
  if (!any) return std::nullopt;
  size_t end_offset = to < lines.size() ? lines[to].start : body.size();
  return WithFootnotes(std::string(body.substr(lines[found].start, end_offset - lines[found].start)), lines, found, to);
}

std::optional<std::string> ExtractBlock(std::string_view source, std::string_view block_id) {
  if (!block_id.empty() && block_id.front() == '^') block_id.remove_prefix(1);
  if (block_id.empty()) return std::nullopt;
  std::string_view body = BodyOf(source);
  std::vector<Line> lines = SplitLines(body);
  size_t at = lines.size(), caret = 0;
  for (size_t k = 0; k < lines.size() && at == lines.size(); ++k) {
    if (lines[k].code) continue;
    caret = BlockIdAt(lines[k].text, block_id);
    if (caret != std::string_view::npos) at = k;
  }
  if (at == lines.size()) return std::nullopt;
  size_t first = at, last = at;
  auto part_of_block = [&](size_t k) { return !IsBlankLine(lines[k].text) && !lines[k].code; };
  if (IsBlankLine(lines[at].text.substr(0, caret))) {  // "^id" alone: the block above it
    if (at == 0) return std::nullopt;
    last = at - 1;
    while (last > 0 && IsBlankLine(lines[last].text)) --last;
    first = last;
    while (first > 0 && !IsBlankLine(lines[first - 1].text)) --first;
    std::string out(body.substr(lines[first].start, lines[last].end - lines[first].start));
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return WithFootnotes(out + "\n", lines, first, last + 1);
  }
  std::string_view head;
  if (IsListItem(lines[at].text)) {  // the item and what is nested under it
    size_t indent = Indent(lines[at].text);
    while (last + 1 < lines.size() && !IsBlankLine(lines[last + 1].text) &&
           Indent(lines[last + 1].text) > indent) {
      ++last;
    }
  } else {  // the paragraph the line ends
    while (first > 0 && part_of_block(first - 1) && HeadingLevel(lines[first - 1].text, &head) == 0 &&
           !IsListItem(lines[first - 1].text)) {
      --first;
    }
  }
  std::string out;
  for (size_t k = first; k <= last; ++k) {
    std::string_view t = lines[k].text;
    if (k == at) {
      t = t.substr(0, caret);
      while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
    }
    out.append(t);
    out += '\n';
  }
  return WithFootnotes(std::move(out), lines, first, last + 1);
}

}  // namespace folio::markdown
