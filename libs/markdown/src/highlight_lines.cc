// Line-based highlighters for the fence languages Source-highlight colours
// badly or not at all (highlight.h): diff (its definition colours nothing
// unless the fence starts with a "---"/"***" file header, and a snippet
// rarely does) and YAML (no definition). Each line is coloured on its own,
// except a YAML block scalar ("key: |"), whose lines are string.
#include <optional>
#include <string>
#include <string_view>

#include "folio/core/text.h"
#include "highlight.h"

namespace folio::markdown {

namespace {

void Emit(std::string_view kind, std::string_view text, std::string* out) {
  if (text.empty()) return;
  if (kind.empty()) {
    AppendHtmlEscaped(text, out);
    return;
  }
  *out += "<span class=\"hl-";
  out->append(kind);
  *out += "\">";
  AppendHtmlEscaped(text, out);
  *out += "</span>";
}

// "+" inserted, "-" deleted, "@@" hunk headers, file headers and commands.
void DiffLine(std::string_view line, std::string* out) {
  std::string_view kind;
  if (StartsWith(line, "+++") || StartsWith(line, "---") || StartsWith(line, "diff ") ||
      StartsWith(line, "index ") || StartsWith(line, "***")) {
    kind = "preproc";
  } else if (StartsWith(line, "@@")) {
    kind = "comment";
  } else if (!line.empty() && (line[0] == '+' || line[0] == '>')) {
    kind = "inserted";
  } else if (!line.empty() && (line[0] == '-' || line[0] == '<')) {
    kind = "deleted";
  }
  Emit(kind, line, out);
}

bool IsYamlSpace(char c) { return c == ' ' || c == '\t'; }

// The length of a quoted scalar at s[0] ('"' or '\''), through its closing
// quote (or the end of the line).
size_t QuotedLength(std::string_view s) {
  char q = s[0];
  for (size_t i = 1; i < s.size(); ++i) {
    if (q == '"' && s[i] == '\\') {
      ++i;
    } else if (s[i] == q) {
      if (q == '\'' && i + 1 < s.size() && s[i + 1] == '\'') {
        ++i;  // '' inside '...'
      } else {
        return i + 1;
      }
    }
  }
  return s.size();
}

// Where a mapping key at s[0] ends (at its ':'), or npos if s holds none:
// a quoted scalar or plain text, then ':' followed by a space or the end.
size_t YamlKeyEnd(std::string_view s) {
  if (s.empty() || std::string_view("[{|>&*!%@`#,?").find(s[0]) != std::string_view::npos) return std::string_view::npos;
  size_t i = s[0] == '"' || s[0] == '\'' ? QuotedLength(s) : 0;
  for (; i < s.size(); ++i) {
    if (s[i] == '#' && i > 0 && IsYamlSpace(s[i - 1])) return std::string_view::npos;
    if (s[i] == ':' && (i + 1 == s.size() || IsYamlSpace(s[i + 1]))) return i;
  }
  return std::string_view::npos;
}

bool IsYamlNumber(std::string_view v) {
  size_t i = v.size() > 1 && (v[0] == '-' || v[0] == '+') ? 1 : 0;
  bool digits = false, dot = false, exp = false;
  for (; i < v.size(); ++i) {
    char c = v[i];
    if (c >= '0' && c <= '9') {
      digits = true;
    } else if (c == '.' && !dot && !exp) {
      dot = true;
    } else if ((c == 'e' || c == 'E') && digits && !exp) {
      exp = true;
      if (i + 1 < v.size() && (v[i + 1] == '-' || v[i + 1] == '+')) ++i;
    } else if (c != '_') {
      return false;
    }
  }
  return digits;
}

// A value: quoted strings, numbers, constants, anchors, then a comment.
void YamlValue(std::string_view v, std::string* out) {
  size_t lead = 0;
  while (lead < v.size() && IsYamlSpace(v[lead])) ++lead;
  Emit("", v.substr(0, lead), out);
  v.remove_prefix(lead);
  if (v.empty()) return;
  if (v[0] == '#') {
    Emit("comment", v, out);
    return;
  }
  size_t end = v[0] == '"' || v[0] == '\'' ? QuotedLength(v) : 0;
  if (end == 0) {  // a plain scalar runs to a " #" comment
    end = v.size();
    for (size_t i = 1; i < v.size(); ++i) {
      if (v[i] == '#' && IsYamlSpace(v[i - 1])) {
        end = i;
        break;
      }
    }
  }
  std::string_view scalar = v.substr(0, end), rest = v.substr(end);
  size_t trail = scalar.size();
  while (trail > 0 && IsYamlSpace(scalar[trail - 1])) --trail;
  std::string_view word = scalar.substr(0, trail);
  std::string lower = AsciiLower(word);
  std::string_view kind;
  if (v[0] == '"' || v[0] == '\'') kind = "string";
  else if (IsYamlNumber(word)) kind = "number";
  else if (lower == "true" || lower == "false" || lower == "null" || lower == "yes" || lower == "no" || word == "~") kind = "keyword";
  else if (v[0] == '&' || v[0] == '*') kind = "variable";
  else if (v[0] == '!') kind = "type";
  Emit(kind, word, out);
  Emit("", scalar.substr(trail), out);
  if (!rest.empty()) YamlValue(rest, out);
}

class YamlHighlighter {
 public:
  void Line(std::string_view line, std::string* out) {
    size_t indent = 0;
    while (indent < line.size() && IsYamlSpace(line[indent])) ++indent;
    if (block_indent_ != std::string_view::npos) {  // inside "key: |": more indented lines are text
      if (indent > block_indent_ || indent == line.size()) {
        Emit("string", line, out);
        return;
      }
      block_indent_ = std::string_view::npos;
    }
    Emit("", line.substr(0, indent), out);
    std::string_view s = line.substr(indent);
    if (indent == 0 && (s == "---" || s == "..." || StartsWith(s, "--- "))) {
      Emit("preproc", s, out);
      return;
    }
    while (s.size() >= 2 && s[0] == '-' && IsYamlSpace(s[1])) {  // "- " sequence entries
      Emit("", s.substr(0, 2), out);
      s.remove_prefix(2);
    }
    if (size_t colon = YamlKeyEnd(s); colon != std::string_view::npos) {
      Emit("type", s.substr(0, colon), out);
      Emit("", ":", out);
      s.remove_prefix(colon + 1);
      std::string_view value = s.substr(s.find_first_not_of(" \t") == std::string_view::npos ? s.size() : s.find_first_not_of(" \t"));
      if (!value.empty() && (value[0] == '|' || value[0] == '>')) block_indent_ = indent;
    } else if (s == "|" || s == ">" || StartsWith(s, "|-") || StartsWith(s, ">-")) {
      block_indent_ = indent;
    }
    YamlValue(s, out);
  }

 private:
  size_t block_indent_ = std::string_view::npos;  // indentation of the line opening a block scalar
};

}  // namespace

std::optional<std::string> HighlightByLines(std::string_view lang, std::string_view code) {
  std::string key = AsciiLower(lang);
  bool diff = key == "diff" || key == "patch";
  bool yaml = key == "yaml" || key == "yml";
  if (!diff && !yaml) return std::nullopt;
  std::string out;
  out.reserve(code.size() * 2);
  YamlHighlighter yh;
  size_t i = 0;
  while (i < code.size()) {
    size_t eol = code.find('\n', i);
    size_t end = eol == std::string_view::npos ? code.size() : eol;
    std::string_view line = code.substr(i, end - i);
    std::string_view cr = !line.empty() && line.back() == '\r' ? "\r" : "";
    line.remove_suffix(cr.size());
    if (diff) DiffLine(line, &out);
    else yh.Line(line, &out);
    out.append(cr);
    if (eol != std::string_view::npos) out += '\n';
    i = end + 1;
  }
  return out;
}

}  // namespace folio::markdown
