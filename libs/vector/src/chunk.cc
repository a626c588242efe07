#include "folio/vector/chunk.h"

#include <algorithm>
#include <utility>

namespace folio::vector {

namespace {

struct Line {
  std::string_view text;  // without the line ending
  size_t offset;          // of text in the input
};

std::vector<Line> SplitLines(std::string_view s, size_t base) {
  std::vector<Line> lines;
  size_t pos = 0;
  while (pos < s.size()) {
    size_t nl = s.find('\n', pos);
    size_t end = nl == std::string_view::npos ? s.size() : nl;
    std::string_view t = s.substr(pos, end - pos);
    if (!t.empty() && t.back() == '\r') t.remove_suffix(1);
    lines.push_back({t, base + pos});
    pos = end + 1;
  }
  return lines;
}

bool IsBlank(std::string_view s) {
  return s.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

std::string_view Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

size_t Indent(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  return i;
}

// Fence tracking for ``` and ~~~ code blocks (CommonMark rules, simplified).
struct Fence {
  char ch = 0;
  size_t len = 0;
  bool open() const { return ch != 0; }
  // Feeds a line; returns true if the line is part of (or opens/closes) a fence.
  bool Feed(std::string_view line) {
    size_t ind = Indent(line);
    if (ind > 3) return open();
    std::string_view rest = line.substr(ind);
    char c = rest.empty() ? 0 : rest[0];
    size_t run = 0;
    if (c == '`' || c == '~') {
      while (run < rest.size() && rest[run] == c) ++run;
    }
    if (!open()) {
      if (run >= 3 && (c == '~' || rest.substr(run).find('`') == std::string_view::npos)) {
        ch = c;
        len = run;
        return true;
      }
      return false;
    }
    if (c == ch && run >= len && IsBlank(rest.substr(run))) ch = 0;
    return true;
  }
};

// Parses an ATX heading; returns level 1..6 and sets *text, or 0.
int AtxHeading(std::string_view line, std::string_view* text) {
  size_t ind = Indent(line);
  if (ind > 3) return 0;
  std::string_view rest = line.substr(ind);
  size_t level = 0;
  while (level < rest.size() && rest[level] == '#') ++level;
  if (level == 0 || level > 6) return 0;
  if (level < rest.size() && rest[level] != ' ' && rest[level] != '\t') return 0;
  std::string_view t = Trim(rest.substr(level));
  // Optional closing sequence: spaces then #s at the end.
  size_t e = t.size();
  while (e > 0 && t[e - 1] == '#') --e;
  if (e == 0) {
    t = {};
  } else if (e < t.size() && (t[e - 1] == ' ' || t[e - 1] == '\t')) {
    t = Trim(t.substr(0, e));
  }
  *text = t;
  return static_cast<int>(level);
}

struct Section {
  std::string heading;
  std::vector<Line> lines;
};

// Last UTF-8 character boundary at or before n.
size_t Utf8Floor(std::string_view s, size_t n) {
  if (n >= s.size()) return s.size();
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

void Emit(const std::string& heading, std::string_view body, size_t offset, std::vector<Chunk>* out) {
  if (IsBlank(body)) return;
  size_t lead = body.find_first_not_of(" \t\r\n");
  Chunk c;
  c.heading = heading;
  c.body = std::string(Trim(body));
  c.offset = offset + lead;
  out->push_back(std::move(c));
}

// Splits one section's lines into pieces of at most max_chars.
void SplitSection(std::string_view input, const Section& sec, size_t max_chars,
                  std::vector<Chunk>* out) {
  if (sec.lines.empty()) return;
  size_t begin = sec.lines.front().offset;
  size_t end = sec.lines.back().offset + sec.lines.back().text.size();
  std::string_view all = input.substr(begin, end - begin);
  if (Trim(all).size() <= max_chars) {
    Emit(sec.heading, all, begin, out);
    return;
  }
  // Paragraphs: runs of lines separated by blank lines outside fences.
  struct Para {
    size_t begin, end;  // byte range in input
  };
  std::vector<Para> paras;
  Fence fence;
  bool in_para = false;
  for (const Line& l : sec.lines) {
    bool fenced = fence.Feed(l.text);
    if (!fenced && IsBlank(l.text)) {
      in_para = false;
      continue;
    }
    if (!in_para) paras.push_back({l.offset, l.offset});
    in_para = true;
    paras.back().end = l.offset + l.text.size();
  }
  // Over-long paragraphs: split at line ends, then at character boundaries.
  std::vector<Para> pieces;
  for (const Para& p : paras) {
    if (p.end - p.begin <= max_chars) {
      pieces.push_back(p);
      continue;
    }
    size_t pos = p.begin;
    while (pos < p.end) {
      size_t limit = pos + max_chars;
      if (limit >= p.end) {
        pieces.push_back({pos, p.end});
        break;
      }
      std::string_view window = input.substr(pos, limit - pos + 1);
      size_t nl = window.rfind('\n');
      size_t cut = (nl != std::string_view::npos && nl > 0) ? pos + nl
                                                            : Utf8Floor(input, limit);
      if (cut <= pos) cut = Utf8Floor(input, limit);
      pieces.push_back({pos, cut});
      pos = cut;
      while (pos < p.end && input[pos] == '\n') ++pos;
    }
  }
  // Greedy packing of consecutive pieces.
  size_t i = 0;
  while (i < pieces.size()) {
    size_t j = i + 1;
    while (j < pieces.size() && pieces[j].end - pieces[i].begin <= max_chars) ++j;
    Emit(sec.heading, input.substr(pieces[i].begin, pieces[j - 1].end - pieces[i].begin),
         pieces[i].begin, out);
    i = j;
  }
}

}  // namespace

std::string Chunk::EmbedText() const {
  if (heading.empty()) return body;
  return heading + "\n\n" + body;
}

std::vector<Chunk> ChunkByHeadings(std::string_view markdown, size_t max_chars) {
  max_chars = std::max<size_t>(max_chars, 16);
  std::vector<Chunk> out;
  size_t start = 0;
  // Front matter: "---" first line up to the next "---" or "..." line.
  if (markdown.starts_with("---\n") || markdown.starts_with("---\r\n")) {
    std::vector<Line> lines = SplitLines(markdown, 0);
    for (size_t i = 1; i < lines.size(); ++i) {
      std::string_view t = Trim(lines[i].text);
      if (t == "---" || t == "...") {
        start = std::min(markdown.size(), lines[i].offset + lines[i].text.size() + 1);
        if (start < markdown.size() && markdown[start - 1] == '\r') ++start;
        break;
      }
    }
  }
  std::string_view body = markdown.substr(start);
  if (IsBlank(body)) return out;
  if (Trim(body).size() <= max_chars) {
    Emit("", body, start, &out);
    return out;
  }

  std::vector<Section> sections(1);
  std::vector<std::pair<int, std::string>> stack;  // open headings (level, text)
  Fence fence;
  for (const Line& l : SplitLines(body, start)) {
    bool fenced = fence.Feed(l.text);
    std::string_view htext;
    int level = fenced ? 0 : AtxHeading(l.text, &htext);
    if (level == 0) {
      sections.back().lines.push_back(l);
      continue;
    }
    while (!stack.empty() && stack.back().first >= level) stack.pop_back();
    stack.emplace_back(level, std::string(htext));
    Section s;
    for (const auto& [lv, text] : stack) {
      if (text.empty()) continue;
      if (!s.heading.empty()) s.heading += " > ";
      s.heading += text;
    }
    sections.push_back(std::move(s));
  }
  for (const Section& s : sections) SplitSection(markdown, s, max_chars, &out);
  return out;
}

}  // namespace folio::vector
