#include "folio/markdown/frontmatter.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <exception>
#include <unordered_set>

#include "folio/core/text.h"
#include "folio/core/utf8.h"

namespace folio::markdown {

namespace {

// Length of the line ending at s[pos] ("\n" or "\r\n"), 0 if none.
size_t NewlineAt(std::string_view s, size_t pos) {
  if (pos < s.size() && s[pos] == '\n') return 1;
  if (pos + 1 < s.size() && s[pos] == '\r' && s[pos + 1] == '\n') return 2;
  return 0;
}

// True if `line` (without its newline) closes the block: "---" or "...",
// optionally followed by spaces or tabs.
bool IsClosingLine(std::string_view line) {
  if (line.size() < 3 || (line.substr(0, 3) != "---" && line.substr(0, 3) != "...")) return false;
  return line.find_first_not_of(" \t\r", 3) == std::string_view::npos;
}

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

// A list field being read: its values in order, each once. The set keeps a
// long list linear (a scan per value was quadratic, issue 22).
struct UniqueList {
  std::vector<std::string>* list;
  std::unordered_set<std::string> seen;

  explicit UniqueList(std::vector<std::string>* l) : list(l), seen(l->begin(), l->end()) {}
  void Add(std::string v) {
    if (!v.empty() && seen.insert(v).second) list->push_back(std::move(v));
  }
};

// Splits a string on commas and whitespace.
void AddSplit(std::string_view s, bool strip_hash, UniqueList* out) {
  size_t i = 0;
  while (i < s.size()) {
    size_t e = s.find_first_of(", \t\r\n", i);
    if (e == std::string_view::npos) e = s.size();
    std::string_view word = s.substr(i, e - i);
    while (strip_hash && !word.empty() && word.front() == '#') word.remove_prefix(1);
    out->Add(std::string(word));
    i = e + 1;
  }
}

// Past these, yaml-cpp (whose parser recurses per level, up to 2,000) is not
// asked at all: flow collections ("[", "{") nested deeper than
// kMaxYamlFlowDepth, or a line whose content starts past column
// kMaxYamlIndent once its indentation and block indicators ("- ", "? ",
// ": ") are skipped. Real frontmatter nests a few levels (issue 22).
constexpr int kMaxYamlFlowDepth = 64;
constexpr size_t kMaxYamlIndent = 256;

// The 1-based line of `yaml` that nests too deep, or 0. Quoted scalars and
// comments are skipped, so brackets inside them do not count.
int TooDeepLine(std::string_view yaml) {
  int depth = 0, line = 1;
  bool line_start = true;
  for (size_t i = 0; i < yaml.size(); ++i) {
    char c = yaml[i];
    if (line_start) {
      size_t j = i;
      while (j < yaml.size() && std::string_view(" -?:").find(yaml[j]) != std::string_view::npos) ++j;
      if (j - i > kMaxYamlIndent) return line;
      line_start = false;
    }
    if (c == '\n') {
      ++line;
      line_start = true;
    } else if (c == '"' || c == '\'') {
      for (++i; i < yaml.size() && yaml[i] != c; ++i) {
        if (c == '"' && yaml[i] == '\\') ++i;
        if (i < yaml.size() && yaml[i] == '\n') ++line;
      }
    } else if (c == '#' && (i == 0 || yaml[i - 1] == ' ' || yaml[i - 1] == '\t' || yaml[i - 1] == '\n')) {
      while (i + 1 < yaml.size() && yaml[i + 1] != '\n') ++i;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxYamlFlowDepth) return line;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return 0;
}

// The scalar's text as valid UTF-8. yaml-cpp (0.7) decodes the escapes "\N"
// and "\_" to the single bytes 0x85 and 0xA0 instead of U+0085 and U+00A0
// (found by fuzzing: tests/fuzz/regressions/markdown_frontmatter_fuzz/);
// a byte that is not part of a valid sequence is taken as that code point.
std::string ScalarText(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  if (IsValidUtf8(s)) return s;
  std::string out;
  for (size_t i = 0; i < s.size();) {
    size_t at = i;
    uint32_t cp = DecodeUtf8(s, &i);
    AppendUtf8(cp == kBadCodePoint ? static_cast<unsigned char>(s[at]) : cp, &out);
  }
  return out;
}

// A list field: a YAML sequence of scalars, or one scalar. `split` splits the
// scalar form (and each item) on commas/spaces, as for tags and cssclasses.
void ReadList(const YAML::Node& node, bool split, bool strip_hash, std::vector<std::string>* list) {
  UniqueList out(list);
  auto add = [&](const std::string& v) {
    if (split) {
      AddSplit(v, strip_hash, &out);
    } else {
      out.Add(Trim(v));
    }
  };
  if (node.IsSequence()) {
    for (const auto& item : node) {
      if (item.IsScalar()) add(ScalarText(item));
    }
  } else if (node.IsScalar()) {
    add(ScalarText(node));
  }
}

void ReadScalar(const YAML::Node& node, std::string* out) {
  if (out->empty() && node.IsScalar()) *out = Trim(ScalarText(node));
}

// YAML booleans (true/false/yes/no/on/off); nullopt-like `fallback` otherwise.
bool ReadBool(const YAML::Node& node, bool fallback) {
  if (!node.IsScalar()) return fallback;
  bool v = fallback;
  return YAML::convert<bool>::decode(node, v) ? v : fallback;
}

// publish: true/false, or `private` (any case): published for signed-in
// readers only and unlisted (README "Private notes").
void ReadPublish(const YAML::Node& v, Frontmatter* fm) {
  if (v.IsScalar() && EqualsIgnoreAsciiCase(v.Scalar(), "private")) {
    fm->private_note = true;
    return;
  }
  fm->publish = fm->publish && ReadBool(v, true);
}

void ReadField(std::string_view key, const YAML::Node& v, Frontmatter* fm) {
  std::string k = AsciiLower(key);
  if (k == "title") ReadScalar(v, &fm->title);
  else if (k == "aliases" || k == "alias") ReadList(v, false, false, &fm->aliases);
  else if (k == "tags" || k == "tag") ReadList(v, true, true, &fm->tags);
  else if (k == "permalink" || k == "slug") ReadScalar(v, &fm->permalink);
  else if (k == "description") ReadScalar(v, &fm->description);
  else if (k == "publish") ReadPublish(v, fm);
  else if (k == "draft") fm->publish = fm->publish && !ReadBool(v, false);
  else if (k == "cssclasses" || k == "cssclass") ReadList(v, true, false, &fm->cssclasses);
  else if (k == "date" || k == "created") ReadScalar(v, &fm->date);
  else if (k == "updated" || k == "modified") ReadScalar(v, &fm->updated);
  else if (k == "image" || k == "cover") ReadScalar(v, &fm->image);
  else if (k == "lang") ReadScalar(v, &fm->lang);
}

// The common frontmatter without yaml-cpp (which costs ~20 us a note, as
// much as rendering it): every line `key: value`, the key a plain word, the
// value one line of plain text that YAML reads as exactly that text (no
// indicator first, no quotes, no ": " or " #", nothing YAML would call null
// or a line break). Each pair goes through ReadField as the scalar node
// yaml-cpp would have built, so both paths give the same fields (checked by
// markdown_test and the frontmatter fuzzer). False, with *fm unchanged, for
// anything else: yaml-cpp then reads the block.
bool IsSimpleKey(std::string_view k) {
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (k.empty() || !alpha(k[0])) return false;
  return std::all_of(k.begin(), k.end(), [&](char c) { return alpha(c) || (c >= '0' && c <= '9') || c == '-'; });
}

bool IsSimpleValue(std::string_view v) {
  if (v.empty()) return false;
  if (std::string_view("-?:,[]{}#&*!|>'\"%@`~ ").find(v.front()) != std::string_view::npos) return false;
  if (v == "null" || v == "Null" || v == "NULL") return false;
  for (size_t i = 0; i < v.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(v[i]);
    if (c < 0x20 || c == 0x7F || c == '[' || c == ']' || c == '{' || c == '}') return false;
    if (c == ':' && (i + 1 == v.size() || v[i + 1] == ' ')) return false;
    if (c == '#' && v[i - 1] == ' ') return false;
  }
  // U+0085, U+2028 and U+2029 are line breaks to YAML, U+FEFF a byte order mark.
  for (std::string_view bad : {"\xC2\x85", "\xE2\x80\xA8", "\xE2\x80\xA9", "\xEF\xBB\xBF"}) {
    if (v.find(bad) != std::string_view::npos) return false;
  }
  return IsValidUtf8(v);
}

bool ParseSimple(std::string_view yaml, Frontmatter* fm) {
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  std::unordered_set<std::string_view> keys;
  size_t i = 0;
  while (i < yaml.size()) {
    size_t eol = yaml.find('\n', i);
    if (eol == std::string_view::npos) eol = yaml.size();
    std::string_view line = yaml.substr(i, eol - i);
    i = eol + 1;
    size_t colon = line.find(": ");
    if (colon == std::string_view::npos || !IsSimpleKey(line.substr(0, colon))) return false;
    std::string_view value = line.substr(colon + 2);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
    if (!IsSimpleValue(value)) return false;
    if (!keys.insert(line.substr(0, colon)).second) return false;  // a repeated key: yaml-cpp's business
    pairs.emplace_back(line.substr(0, colon), value);
  }
  if (pairs.empty()) return false;
  for (const auto& [k, v] : pairs) ReadField(k, YAML::Node(std::string(v)), fm);
  return true;
}

// Parses the YAML text (which starts on document line `first_line`).
void ParseYaml(const std::string& yaml, int first_line, Frontmatter* fm, bool allow_simple) {
  if (allow_simple && ParseSimple(yaml, fm)) return;
  if (int line = TooDeepLine(yaml); line != 0) {
    fm->error = "frontmatter line " + std::to_string(line + first_line - 1) + ": nested more than " +
                std::to_string(kMaxYamlFlowDepth) + " brackets or " + std::to_string(kMaxYamlIndent) +
                " columns deep; frontmatter is ignored";
    return;
  }
  try {
    YAML::Node root = YAML::Load(yaml);
    if (root.IsNull()) return;
    if (!root.IsMap()) {
      fm->error = "frontmatter line " + std::to_string(first_line) + ": expected 'key: value' lines";
      return;
    }
    for (const auto& kv : root) {
      if (kv.first.IsScalar()) ReadField(kv.first.Scalar(), kv.second, fm);
    }
  } catch (const YAML::Exception& e) {
    fm->error = e.mark.is_null() ? "frontmatter: " + e.msg
                                 : "frontmatter line " + std::to_string(e.mark.line + first_line) +
                                       ": " + e.msg;
  } catch (const std::exception& e) {
    fm->error = std::string("frontmatter: ") + e.what();
  }
}

}  // namespace

Frontmatter ParseFrontmatter(std::string_view doc) { return ParseFrontmatterWith(doc, /*simple_lines=*/true); }

Frontmatter ParseFrontmatterWith(std::string_view doc, bool simple_lines) {
  Frontmatter fm;
  size_t pos = 0;
  if (doc.substr(0, 3) == "\xEF\xBB\xBF") pos = 3;  // UTF-8 byte order mark
  if (doc.substr(pos, 3) != "---") return fm;
  size_t nl = NewlineAt(doc, pos + 3);
  if (nl == 0) return fm;
  fm.present = true;
  size_t yaml_start = pos + 3 + nl;
  size_t line_start = yaml_start;
  while (line_start < doc.size()) {
    size_t eol = doc.find('\n', line_start);
    size_t line_end = eol == std::string_view::npos ? doc.size() : eol;
    if (IsClosingLine(doc.substr(line_start, line_end - line_start))) {
      fm.body_offset = eol == std::string_view::npos ? doc.size() : eol + 1;
      ParseYaml(std::string(doc.substr(yaml_start, line_start - yaml_start)), 2, &fm, simple_lines);
      return fm;
    }
    line_start = line_end + 1;
  }
  fm.present = false;
  fm.error = "frontmatter line 1: '---' block is not closed (no '---' line after it)";
  fm.body_offset = 0;
  return fm;
}

}  // namespace folio::markdown
