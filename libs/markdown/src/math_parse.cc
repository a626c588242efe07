// TeX math tokenizer and recursive-descent parser; builds the MathML node
// tree that math.cc writes. Every loop consumes a token or stops, so time is
// linear in the input; DepthGuard bounds recursion.
#include <algorithm>
#include <charconv>
#include <optional>

#include "math.h"
#include "utf8.h"

namespace folio::markdown::math_internal {
namespace {

constexpr const char* kNormal = " mathvariant=\"normal\"";
constexpr const char* kNoStretch = " stretchy=\"false\"";
constexpr const char* kStretch = " stretchy=\"true\"";

// ---- Tokens ----------------------------------------------------------------

enum class T : uint8_t { kEnd, kChar, kCmd, kOpen, kClose, kSup, kSub, kAmp, kNewline, kPrime };

struct Token {
  T kind;
  uint32_t cp;            // kChar: the code point (U+FFFD if malformed)
  std::string_view name;  // kCmd: the name without '\'
  size_t pos, end;        // bytes of the source
};

bool IsLetter(uint32_t c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
bool IsDigit(uint32_t c) { return c >= '0' && c <= '9'; }

// Whitespace and comments vanish; the result always ends with kEnd.
std::vector<Token> Tokenize(std::string_view s) {
  std::vector<Token> toks;
  toks.reserve(s.size() / 2 + 1);
  size_t i = 0;
  while (i < s.size()) {
    size_t pos = i;
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '%') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    if (c <= ' ' || c == 0x7F) { ++i; continue; }
    T kind = c == '{' ? T::kOpen : c == '}' ? T::kClose : c == '^' ? T::kSup : c == '_' ? T::kSub
           : c == '&' ? T::kAmp : c == '\'' ? T::kPrime : T::kChar;
    if (kind != T::kChar) {
      toks.push_back({kind, 0, {}, pos, ++i});
    } else if (c == '\\') {
      size_t start = ++i;
      std::string_view name;
      if (i < s.size() && s[i] == '\\') {
        toks.push_back({T::kNewline, 0, {}, pos, ++i});
        continue;
      } else if (i < s.size() && IsLetter(static_cast<unsigned char>(s[i]))) {
        while (i < s.size() && IsLetter(static_cast<unsigned char>(s[i]))) ++i;
        name = s.substr(start, i - start);
      } else if (i < s.size() && static_cast<unsigned char>(s[i]) <= ' ') {
        name = " ";  // control space, also "\" before a newline
        ++i;
      } else if (i < s.size()) {
        DecodeUtf8(s, &i);
        name = s.substr(start, i - start);
      }
      toks.push_back({T::kCmd, 0, name, pos, i});
    } else {
      uint32_t cp = DecodeUtf8(s, &i);
      if (cp >= 0x80 && cp <= 0x9F) continue;  // C1 controls
      toks.push_back({T::kChar, cp == kBadCodePoint ? 0xFFFD : cp, {}, pos, i});
    }
  }
  toks.push_back({T::kEnd, 0, {}, s.size(), s.size()});
  return toks;
}

// ---- Node builders -----------------------------------------------------------

Node MakeToken(const char* tag, std::string text, std::string attrs = {}, uint8_t flags = 0) {
  Node n;
  n.kind = NodeKind::kToken;
  n.tag = tag;
  n.text = std::move(text);
  n.attrs = std::move(attrs);
  n.flags = flags;
  return n;
}

template <typename... Kids>
Node MakeElem(const char* tag, std::string attrs, Kids&&... kids) {
  Node n;
  n.kind = NodeKind::kElem;
  n.tag = tag;
  n.attrs = std::move(attrs);
  n.kids.reserve(sizeof...(kids));
  (n.kids.push_back(std::forward<Kids>(kids)), ...);
  return n;
}

Node Error(std::string text) { return MakeElem("merror", {}, MakeToken("mtext", std::move(text))); }
Node Space(std::string_view width) {
  return MakeToken("mspace", {}, " width=\"" + std::string(width) + "\"");
}

// <mrow> with stretchy delimiters around `body`; an empty delimiter is left out.
Node Fenced(std::string_view open, std::string_view close, Node body, std::string attrs) {
  Node row = MakeElem("mrow", {});
  if (!open.empty()) row.kids.push_back(MakeToken("mo", std::string(open), attrs));
  row.kids.push_back(std::move(body));
  if (!close.empty()) row.kids.push_back(MakeToken("mo", std::string(close), attrs));
  return row;
}

using Cells = std::vector<std::vector<Node>>;

Node BuildTable(Cells rows, std::string_view align, bool display) {
  Node table = MakeElem("mtable", display ? " displaystyle=\"true\"" : "");
  for (auto& row : rows) {
    Node tr = MakeElem("mtr", {});
    for (size_t j = 0; j < row.size(); ++j) {
      char a = align.empty() ? 'c' : align[j % align.size()];
      tr.kids.push_back(MakeElem("mtd", AlignAttrs(a), std::move(row[j])));
    }
    table.kids.push_back(std::move(tr));
  }
  if (align.find('R') != std::string_view::npos) {  // aligned: "x &= 1 & y &= 2"
    size_t cols = 0;
    for (const Node& tr : table.kids) cols = std::max(cols, tr.kids.size());
    std::string spacing;  // MathML repeats the last value
    for (size_t j = 1; j < std::min<size_t>(cols, 16); ++j) spacing += j % 2 ? "0em " : "2em ";
    if (!spacing.empty()) table.attrs += " columnspacing=\"" + spacing.substr(0, spacing.size() - 1) + "\"";
  }
  return table;
}

// Text of \text{…}: braces dropped, escapes resolved, spaces collapsed.
// Other commands stay visible as written.
std::string TextContent(std::string_view raw) {
  std::string out;
  auto space = [&out] { if (out.empty() || out.back() != ' ') out += ' '; };
  for (size_t i = 0; i < raw.size();) {
    char c = raw[i++];
    if (c == '{' || c == '}') continue;
    if (c == '~') { out += "\u00A0"; continue; }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') { space(); continue; }
    if (c != '\\' || i == raw.size()) { out += c; continue; }
    size_t start = i;
    while (i < raw.size() && IsLetter(static_cast<unsigned char>(raw[i]))) ++i;
    std::string_view cmd = raw.substr(start, i - start);
    if (cmd == "textbackslash") out += '\\';
    else if (cmd == "quad" || cmd == "qquad") space();
    else if (!cmd.empty()) out.append(raw.substr(start - 1, i - start + 1));
    else if (std::string_view("{}$%&_#").find(raw[i]) != std::string_view::npos) out += raw[i++];
    else if (raw[i++] != '!') space();  // "\ ", "\,", "\\" and the like
  }
  if (!out.empty() && out.back() == ' ') out.replace(out.size() - 1, 1, "\u00A0");
  if (!out.empty() && out.front() == ' ') out.replace(0, 1, "\u00A0");
  return out;
}

// "2em", "-0.5ex", "3mu": a CSS length for an attribute, or nothing.
// Locale-independent, so the attribute never holds a decimal comma.
std::optional<std::string> CssLength(std::string_view raw) {
  std::string s(raw);
  std::erase(s, ' ');
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::fixed);
  if (ec != std::errc()) return std::nullopt;
  std::string_view unit(end, static_cast<size_t>(s.data() + s.size() - end));
  if (unit == "mu") { v /= 18; unit = "em"; }  // 18mu = 1em
  for (const char* u : {"em", "ex", "pt", "px", "mm", "cm", "in"}) {
    if (unit != u || !(v >= -100 && v <= 100)) continue;
    char buf[32];
    auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 4);
    return std::string(buf, r.ptr) + u;
  }
  return std::nullopt;
}

// ---- Parser ------------------------------------------------------------------

// ParseRow stops before these tokens (by flag) instead of consuming them.
constexpr uint8_t kStopBrace = 1, kStopBracket = 2, kStopRight = 4, kStopCell = 8, kStopEnd = 16;

class DepthGuard {
 public:
  explicit DepthGuard(int* depth) : depth_(depth) { ++*depth_; }
  ~DepthGuard() { --*depth_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
  bool too_deep() const { return *depth_ > kMaxMathDepth; }

 private:
  int* depth_;
};

class Parser {
 public:
  Parser(std::string_view src, bool display) : src_(src), toks_(Tokenize(src)), display_(display) {}

  Node ParseTop() {
    Cells rows = ParseCells(kStopCell);
    if (rows.size() == 1 && rows[0].size() == 1) return std::move(rows[0][0]);
    bool aligned = std::any_of(rows.begin(), rows.end(), [](auto& r) { return r.size() > 1; });
    return BuildTable(std::move(rows), aligned ? "RL" : "c", display_);
  }

 private:
  const Token& Peek() const { return toks_[i_]; }
  bool PeekCmd(std::string_view name) const { return Peek().kind == T::kCmd && Peek().name == name; }
  bool PeekChar(uint32_t c) const { return Peek().kind == T::kChar && Peek().cp == c; }
  void Advance() { if (toks_[i_].kind != T::kEnd) ++i_; }

  Node ParseRow(uint8_t stops);
  std::optional<Node> ParseAtom();
  std::optional<Node> ParsePrimary(bool single);
  std::optional<Node> ParseCommand(std::string_view name);
  Node ParseChar(uint32_t cp, bool single);
  Node ParseSymbol(const Symbol& s);
  Node ParseGroup();
  Node ParseEnv();
  Node ParseLeft();
  Cells ParseCells(uint8_t stops);
  std::string_view RawArg();
  std::optional<std::string> ReadDelim();

  // One argument: a {group} or a single token; nothing if none follows.
  Node ParseArg() {
    if (Peek().kind == T::kOpen) return ParseGroup();
    if (Peek().kind != T::kChar && Peek().kind != T::kCmd) return Node{};
    return ParsePrimary(true).value_or(Node{});
  }
  // An argument set in text style (scripts, fraction parts).
  Node ParseInnerArg() {
    bool saved = display_;
    display_ = false;
    Node n = ParseArg();
    display_ = saved;
    return n;
  }

  std::string_view src_;
  std::vector<Token> toks_;
  size_t i_ = 0;
  int depth_ = 0;
  int left_depth_ = 0;  // open \left, for \middle
  bool display_;        // display style where the parser is
  Font font_ = Font::kNone;
};

Cells Parser::ParseCells(uint8_t stops) {
  Cells rows(1);
  while (true) {
    rows.back().push_back(ParseRow(stops));
    if (Peek().kind == T::kAmp) {
      Advance();
    } else if (Peek().kind == T::kNewline) {
      Advance();
      if (PeekChar('[')) {  // "\\[2pt]": the spacing is dropped
        for (size_t j = i_ + 1; j < i_ + 8 && toks_[j].kind != T::kEnd; ++j) {
          if (toks_[j].kind == T::kChar && toks_[j].cp == ']') { i_ = j + 1; break; }
        }
      }
      rows.emplace_back();
    } else {
      break;
    }
  }
  // A trailing "\\" does not start a row.
  if (rows.size() > 1 && rows.back().size() == 1 && rows.back()[0].kids.empty()) rows.pop_back();
  return rows;
}

Node Parser::ParseRow(uint8_t stops) {
  Node row;
  Node* target = &row;  // the row, or the last style switch in it
  bool saved_display = display_;
  bool func_pending = false;
  while (true) {
    const Token& t = Peek();
    if (t.kind == T::kEnd) break;
    if (t.kind == T::kClose) {
      if (stops & kStopBrace) break;
      Advance();
      target->kids.push_back(Error("}"));
      func_pending = false;
      continue;
    }
    if ((stops & kStopCell) && (t.kind == T::kAmp || t.kind == T::kNewline)) break;
    if ((stops & kStopEnd) && PeekCmd("end")) break;
    if ((stops & kStopRight) && PeekCmd("right")) break;
    if ((stops & kStopBracket) && PeekChar(']')) break;
    if (const char* style = t.kind == T::kCmd ? StyleAttrs(t.name) : nullptr) {
      // Later switches are siblings, not nested: the last one wins anyway.
      display_ = t.name == "displaystyle";
      Advance();
      row.kids.push_back(MakeElem("mstyle", style));
      target = &row.kids.back();
      func_pending = false;
      continue;
    }
    std::optional<Node> atom = ParseAtom();
    if (!atom) continue;
    if (func_pending) {
      // U+2061 FUNCTION APPLICATION; TeX puts a thin space after an operator
      // name unless a delimiter or operator follows.
      bool tight = atom->kind == NodeKind::kToken && std::string_view(atom->tag) != "mi" &&
                   std::string_view(atom->tag) != "mn";
      target->kids.push_back(MakeToken("mo", "\u2061", tight ? "" : " rspace=\"0.1667em\""));
    }
    func_pending = atom->flags & kFlagFunc;
    target->kids.push_back(std::move(*atom));
  }
  display_ = saved_display;
  return row;
}

std::optional<Node> Parser::ParseAtom() {
  std::optional<Node> base;
  T k = Peek().kind;
  if (k == T::kSup || k == T::kSub || k == T::kPrime) {
    base = Node{};  // "^2" alone: empty base
  } else if (!(base = ParsePrimary(false))) {
    return std::nullopt;
  }
  uint8_t flags = base->flags;
  while (PeekCmd("limits") || PeekCmd("nolimits")) {
    flags &= ~(kFlagLimits | kFlagAlwaysLimits);
    if (Peek().name == "limits") flags |= kFlagAlwaysLimits;
    Advance();
  }
  std::optional<Node> sub, sup;
  int primes = 0;
  while (true) {  // a second ^ or _ starts the next atom, with an empty base
    T kind = Peek().kind;
    if (kind == T::kPrime && !sup) { Advance(); ++primes; }
    else if (kind == T::kSup && !sup) { Advance(); sup = ParseInnerArg(); }
    else if (kind == T::kSub && !sub) { Advance(); sub = ParseInnerArg(); }
    else break;
  }
  if (primes > 0) {
    std::string marks;
    if (primes <= 4) marks = primes == 1 ? "′" : primes == 2 ? "″" : primes == 3 ? "‴" : "⁗";
    else for (int p = 0; p < primes; ++p) marks += "′";
    Node mark = MakeToken("mo", std::move(marks));
    if (sup) {
      Node both;
      both.kids.push_back(std::move(mark));
      both.kids.push_back(std::move(*sup));
      sup = std::move(both);
    } else {
      sup = std::move(mark);
    }
  }
  if (!sub && !sup) {
    base->flags = flags;
    return base;
  }
  bool limits = (flags & kFlagAlwaysLimits) || ((flags & kFlagLimits) && display_);
  if (limits && !display_ && base->kind == NodeKind::kToken) base->attrs += " movablelimits=\"false\"";
  const char* tag = limits ? (sub && sup ? "munderover" : sub ? "munder" : "mover")
                           : (sub && sup ? "msubsup" : sub ? "msub" : "msup");
  Node n = MakeElem(tag, {}, std::move(*base));
  if (sub) n.kids.push_back(std::move(*sub));
  if (sup) n.kids.push_back(std::move(*sup));
  n.flags = flags & kFlagFunc;
  return n;
}

Node Parser::ParseGroup() {
  DepthGuard guard(&depth_);
  if (guard.too_deep()) {  // skip the whole group
    int open = 0;
    do {
      if (Peek().kind == T::kOpen) ++open;
      if (Peek().kind == T::kClose) --open;
      Advance();
    } while (open > 0 && Peek().kind != T::kEnd);
    return Error("nesting too deep");
  }
  Advance();  // '{'
  Node row = ParseRow(kStopBrace);
  if (Peek().kind == T::kClose) Advance();
  return row;
}

std::optional<Node> Parser::ParsePrimary(bool single) {
  const Token t = Peek();
  if (t.kind == T::kOpen) return ParseGroup();
  if (t.kind == T::kEnd) return std::nullopt;
  Advance();
  DepthGuard guard(&depth_);
  if (guard.too_deep()) return Error("nesting too deep");
  switch (t.kind) {
    case T::kChar: return ParseChar(t.cp, single);
    case T::kCmd: return ParseCommand(t.name);
    case T::kAmp: return Error("&");
    case T::kNewline: return Error("\\\\");
    case T::kClose: return Error("}");
    default: return std::nullopt;  // ^ _ ' are taken by ParseAtom
  }
}

Node Parser::ParseChar(uint32_t cp, bool single) {
  std::string text;
  if (IsLetter(cp) || IsDigit(cp)) {
    bool letter = IsLetter(cp);
    AppendUtf8(MapFont(font_, cp), &text);
    size_t n = 1;
    // Runs: digits form one number ("3.14"); letters under a font one name.
    while (!single && Peek().kind == T::kChar) {
      uint32_t c = Peek().cp;
      if (letter ? (font_ != Font::kNone && IsLetter(c)) : IsDigit(c)) {
        AppendUtf8(MapFont(font_, c), &text);
      } else if (!letter && c == '.' && toks_[i_ + 1].kind == T::kChar &&
                 IsDigit(toks_[i_ + 1].cp) && toks_[i_ + 1].pos == Peek().end) {
        text += '.';
      } else {
        break;
      }
      Advance();
      ++n;
    }
    if (!letter) return MakeToken("mn", std::move(text));
    return MakeToken("mi", std::move(text), n == 1 && font_ == Font::kNormal ? kNormal : "");
  }
  switch (cp) {
    case '(': case '[': case ')': case ']': case '|':
      return MakeToken("mo", std::string(1, static_cast<char>(cp)), kNoStretch);
    case '-': return MakeToken("mo", "−");
    case '*': return MakeToken("mo", "∗");
    case '~': return Space("0.3333em");
    default: break;
  }
  AppendUtf8(cp, &text);
  bool op = cp < 0x80 || cp == 0xB1 || cp == 0xB7 || cp == 0xD7 || cp == 0xF7 || cp == 0xAC ||
            (cp >= 0x2190 && cp <= 0x22FF && cp != 0x2202 && cp != 0x2205 && cp != 0x2207 &&
             cp != 0x221E) ||
            (cp >= 0x27C0 && cp <= 0x27FF) || (cp >= 0x2A00 && cp <= 0x2AFF);
  return op ? MakeToken("mo", std::move(text)) : MakeToken("mi", ApplyFont(font_, text));
}

Node Parser::ParseSymbol(const Symbol& s) {
  using enum Sym;
  switch (s.kind) {
    case kMi: case kMiUp: {
      std::string text = ApplyFont(font_, s.text);
      bool upright = (s.kind == kMiUp || font_ == Font::kNormal) && text == s.text;
      return MakeToken("mi", std::move(text), upright ? kNormal : "");
    }
    case kOpen: case kClose: return MakeToken("mo", s.text, kNoStretch);
    case kLarge: return MakeToken("mo", s.text, {}, kFlagLimits);
    case kFunc: return MakeToken("mi", s.text, {}, kFlagFunc);
    case kLimFunc: return MakeToken("mi", s.text, {}, kFlagFunc | kFlagLimits);
    case kSpace: return Space(s.text);
    default: return MakeToken("mo", s.text);
  }
}

// A delimiter after \left, \right, \middle, \big…: "" for ".", nothing if
// the next token is not one (then it is not consumed).
std::optional<std::string> Parser::ReadDelim() {
  const Token& t = Peek();
  std::optional<std::string> d;
  if (t.kind == T::kChar) {
    if (t.cp == '.') d = "";
    else if (t.cp == '<') d = "⟨";
    else if (t.cp == '>') d = "⟩";
    else if (t.cp < 0x80 && std::string_view("()[]|/").find(static_cast<char>(t.cp)) != std::string_view::npos)
      d = std::string(1, static_cast<char>(t.cp));
    else if (t.cp == 0x2016 || (t.cp >= 0x2308 && t.cp <= 0x230B) || (t.cp >= 0x27E6 && t.cp <= 0x27EF))
      d = std::string(src_.substr(t.pos, t.end - t.pos));
  } else if (t.kind == T::kCmd) {
    const Symbol* s = FindSymbol(t.name);
    if (s && (s->kind == Sym::kOpen || s->kind == Sym::kClose || std::string_view(s->name).ends_with("arrow") ||
              s->name == std::string_view("backslash"))) {
      d = s->text;
    }
  }
  if (d) Advance();
  return d;
}

Node Parser::ParseLeft() {
  std::optional<std::string> open = ReadDelim();
  ++left_depth_;
  Node body = ParseRow(kStopRight | kStopBrace);
  --left_depth_;
  std::optional<std::string> close;
  if (PeekCmd("right")) {
    Advance();
    close = ReadDelim();
    if (!close) body.kids.push_back(Error("\\right"));
  }
  if (!open) body.kids.insert(body.kids.begin(), Error("\\left"));
  return Fenced(open.value_or(""), close.value_or(""), std::move(body), kStretch);
}

// The source inside a {group} (or of one token), consuming its tokens.
std::string_view Parser::RawArg() {
  const Token& t = Peek();
  if (t.kind == T::kChar || t.kind == T::kCmd) {
    Advance();
    return src_.substr(t.pos, t.end - t.pos);
  }
  if (t.kind != T::kOpen) return {};
  size_t start = t.end, depth = 1, j = start;
  for (; j < src_.size(); ++j) {
    if (src_[j] == '\\') ++j;
    else if (src_[j] == '{') ++depth;
    else if (src_[j] == '}' && --depth == 0) break;
  }
  size_t close = std::min(j, src_.size());
  while (Peek().kind != T::kEnd && Peek().pos <= close) Advance();
  return src_.substr(start, close - start);
}

Node Parser::ParseEnv() {
  std::string name(RawArg());
  name.erase(std::remove(name.begin(), name.end(), ' '), name.end());
  const Env* env = FindEnv(name);
  std::string align = env ? env->align : "c";
  if (name == "array" || name == "darray" || name == "subarray") {
    align.clear();
    int braces = 0;
    for (char c : RawArg()) {
      braces += c == '{' ? 1 : c == '}' ? -1 : 0;
      if (braces == 0 && (c == 'l' || c == 'c' || c == 'r')) align += c;
    }
  } else if (name.starts_with("alignat") || name == "alignedat") {
    RawArg();  // column count
  }
  bool saved = display_;
  display_ = env && env->display;
  Cells rows = ParseCells(kStopCell | kStopEnd | kStopBrace);
  display_ = saved;
  if (PeekCmd("end")) {
    Advance();
    RawArg();
  }
  bool plain = !env || (!*env->open && !*env->close);
  Node table = plain && rows.size() == 1 && rows[0].size() == 1
                   ? std::move(rows[0][0])
                   : BuildTable(std::move(rows), align, env && env->display);
  if (!env) return MakeElem("mrow", {}, Error("\\begin{" + name + "}"), std::move(table));
  return plain ? std::move(table) : Fenced(env->open, env->close, std::move(table), kStretch);
}

std::optional<Node> Parser::ParseCommand(std::string_view name) {
  if (const Symbol* s = FindSymbol(name)) return ParseSymbol(*s);
  if (const Accent* a = FindAccent(name)) {
    Node base = ParseArg();
    Node n = MakeElem(a->under ? "munder" : "mover", a->under ? " accentunder=\"true\"" : " accent=\"true\"",
                      std::move(base), MakeToken("mo", a->mark, a->stretchy ? kStretch : kNoStretch));
    if (a->limits) n.flags = kFlagAlwaysLimits;
    return n;
  }
  if (name == "frac" || name == "dfrac" || name == "tfrac" || name == "cfrac" ||
      name == "binom" || name == "dbinom" || name == "tbinom") {
    Node num = ParseInnerArg();
    Node den = ParseInnerArg();
    bool binom = name.ends_with("binom");
    Node f = MakeElem("mfrac", binom ? " linethickness=\"0\"" : "", std::move(num), std::move(den));
    if (binom) f = Fenced("(", ")", std::move(f), kStretch);
    if (name[0] == 'd' || name[0] == 'c') return MakeElem("mstyle", StyleAttrs("displaystyle"), std::move(f));
    if (name[0] == 't') return MakeElem("mstyle", StyleAttrs("textstyle"), std::move(f));
    return f;
  }
  if (name == "sqrt") {
    std::optional<Node> index;
    if (PeekChar('[')) {
      Advance();
      bool saved = display_;
      display_ = false;
      index = ParseRow(kStopBracket | kStopBrace);
      display_ = saved;
      if (PeekChar(']')) Advance();
    }
    Node body = ParseArg();
    if (index) return MakeElem("mroot", {}, std::move(body), std::move(*index));
    return MakeElem("msqrt", {}, std::move(body));
  }
  if (name == "left") return ParseLeft();
  if (name == "right" || name == "middle") {
    std::optional<std::string> d = ReadDelim();
    if (name == "right" || left_depth_ == 0 || !d) return Error("\\" + std::string(name));
    return MakeToken("mo", *d, kStretch);
  }
  if (const char* size = BigSize(name)) {
    std::optional<std::string> d = ReadDelim();
    if (!d) return Error("\\" + std::string(name));
    if (d->empty()) return std::nullopt;
    return MakeToken("mo", *d, std::string(kStretch) + " symmetric=\"true\"" + size);
  }
  if (const Font* f = FindTextFont(name)) {
    std::string text = TextContent(RawArg());
    return MakeToken("mtext", ApplyFont(*f, text));
  }
  if (const Font* f = FindMathFont(name)) {
    Font saved = font_;
    font_ = *f;
    Node n = ParseArg();
    font_ = saved;
    return n;
  }
  if (name == "operatorname") {
    bool star = PeekChar('*');
    if (star) Advance();
    std::string text = TextContent(RawArg());
    std::erase(text, ' ');
    return MakeToken("mi", text, text.size() == 1 ? kNormal : "",
                     kFlagFunc | (star ? kFlagLimits : 0));
  }
  if (name == "begin") return ParseEnv();
  if (name == "end") return Error("\\end{" + std::string(RawArg()) + "}");
  if (name == "overset" || name == "underset" || name == "stackrel") {
    Node script = ParseInnerArg();
    Node base = ParseArg();
    return MakeElem(name == "underset" ? "munder" : "mover", {}, std::move(base), std::move(script));
  }
  if (name == "phantom" || name == "hphantom" || name == "vphantom") {
    return MakeElem("mphantom", {}, ParseArg());
  }
  if (name == "not") {
    Node next = ParseArg();
    if (next.kind != NodeKind::kToken) return MakeElem("mrow", {}, Error("\\not"), std::move(next));
    next.text = next.text == "=" ? "≠" : next.text == "∈" ? "∉" : next.text + "\u0338";
    return next;
  }
  if (name == "substack") {
    if (Peek().kind != T::kOpen) return ParseArg();
    Advance();
    Cells rows = ParseCells(kStopCell | kStopBrace);
    if (Peek().kind == T::kClose) Advance();
    return BuildTable(std::move(rows), "c", false);
  }
  if (name == "pmod") {
    Node arg = ParseArg();
    return MakeElem("mrow", {}, Space("1em"), MakeToken("mo", "(", kNoStretch), MakeToken("mi", "mod"),
                    Space("0.3333em"), std::move(arg), MakeToken("mo", ")", kNoStretch));
  }
  if (name == "hspace") {
    if (PeekChar('*')) Advance();
    std::optional<std::string> width = CssLength(RawArg());
    return width ? Space(*width) : Error("\\hspace");
  }
  if (name == "tag") {
    bool star = PeekChar('*');
    if (star) Advance();
    std::string text = TextContent(RawArg());
    return MakeElem("mrow", {}, Space("2em"), MakeToken("mtext", star ? text : "(" + text + ")"));
  }
  if (name == "mathop" || name == "mathrel" || name == "mathbin" || name == "mathord" ||
      name == "mathopen" || name == "mathclose" || name == "mathpunct") {
    return ParseArg();
  }
  if (IsIgnored(name)) return std::nullopt;
  return Error("\\" + std::string(name));
}

}  // namespace

Node ParseTex(std::string_view tex, bool display) { return Parser(tex, display).ParseTop(); }

}  // namespace folio::markdown::math_internal
