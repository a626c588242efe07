// TeX math tokenizer and recursive-descent parser: the grammar of rows,
// atoms, scripts, groups and characters; each \command is parsed in
// math_commands.cc. Builds the MathML node tree that math.cc writes. Every
// loop consumes a token or stops, so time is linear in the input; DepthGuard
// bounds recursion.
#include "math_parse.h"

#include <algorithm>

#include "utf8.h"

namespace folio::markdown::math_internal {

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

Node MakeToken(const char* tag, std::string text, std::string attrs, uint8_t flags) {
  Node n;
  n.kind = NodeKind::kToken;
  n.tag = tag;
  n.text = std::move(text);
  n.attrs = std::move(attrs);
  n.flags = flags;
  return n;
}

Node Error(std::string text) { return MakeElem("merror", {}, MakeToken("mtext", std::move(text))); }
Node Space(std::string_view width) {
  return MakeToken("mspace", {}, " width=\"" + std::string(width) + "\"");
}

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

namespace {

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

}  // namespace

Node Parser::ParseTop() {
  Cells rows = ParseCells(kStopCell);
  if (rows.size() == 1 && rows[0].size() == 1) return std::move(rows[0][0]);
  bool aligned = std::any_of(rows.begin(), rows.end(), [](auto& r) { return r.size() > 1; });
  return BuildTable(std::move(rows), aligned ? "RL" : "c", display_);
}

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

Node ParseTex(std::string_view tex, bool display) { return Parser(tex, display).ParseTop(); }

}  // namespace folio::markdown::math_internal
