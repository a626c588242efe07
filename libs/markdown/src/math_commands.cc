// The TeX commands of the math parser: after a '\name' token, each command
// reads its arguments and builds its MathML node. The names themselves are
// looked up in the tables of math.cc; the grammar around them is in
// math_parse.cc.
#include <algorithm>
#include <charconv>
#include <initializer_list>
#include <optional>

#include "math_parse.h"

namespace folio::markdown::math_internal {
namespace {

// <mrow> with stretchy delimiters around `body`; an empty delimiter is left out.
Node Fenced(std::string_view open, std::string_view close, Node body, std::string attrs) {
  Node row = MakeElem("mrow", {});
  if (!open.empty()) row.kids.push_back(MakeToken("mo", std::string(open), attrs));
  row.kids.push_back(std::move(body));
  if (!close.empty()) row.kids.push_back(MakeToken("mo", std::string(close), attrs));
  return row;
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

bool IsOneOf(std::string_view name, std::initializer_list<std::string_view> names) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

std::optional<Node> Parser::ParseCommand(std::string_view name) {
  if (const Symbol* s = FindSymbol(name)) return ParseSymbol(*s);
  if (const Accent* a = FindAccent(name)) return ParseAccent(*a);
  if (IsOneOf(name, {"frac", "dfrac", "tfrac", "cfrac", "binom", "dbinom", "tbinom"})) return ParseFraction(name);
  if (name == "sqrt") return ParseSqrt();
  if (name == "left") return ParseLeft();
  if (name == "right" || name == "middle") return ParseRightOrMiddle(name);
  if (const char* size = BigSize(name)) return ParseBig(name, size);
  if (const Font* f = FindTextFont(name)) return MakeToken("mtext", ApplyFont(*f, TextContent(RawArg())));
  if (const Font* f = FindMathFont(name)) return ParseInFont(*f);
  if (name == "operatorname") return ParseOperatorName();
  if (name == "begin") return ParseEnv();
  if (name == "end") return Error("\\end{" + std::string(RawArg()) + "}");
  if (IsOneOf(name, {"overset", "underset", "stackrel"})) return ParseOverUnder(name);
  if (IsOneOf(name, {"phantom", "hphantom", "vphantom"})) return MakeElem("mphantom", {}, ParseArg());
  if (name == "not") return ParseNot();
  if (name == "substack") return ParseSubstack();
  if (name == "pmod") return ParsePmod();
  if (name == "hspace") return ParseHspace();
  if (name == "tag") return ParseTag();
  if (IsOneOf(name, {"mathop", "mathrel", "mathbin", "mathord", "mathopen", "mathclose", "mathpunct"})) {
    return ParseArg();  // TeX's spacing classes: MathML decides spacing itself
  }
  if (IsIgnored(name)) return std::nullopt;
  return Error("\\" + std::string(name));
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


Node Parser::ParseAccent(const Accent& a) {
  Node base = ParseArg();
  Node n = MakeElem(a.under ? "munder" : "mover", a.under ? " accentunder=\"true\"" : " accent=\"true\"",
                    std::move(base), MakeToken("mo", a.mark, a.stretchy ? kStretch : kNoStretch));
  if (a.limits) n.flags = kFlagAlwaysLimits;
  return n;
}

// \frac and \binom, with their d- (display), c- (continued) and t- (text) forms.
Node Parser::ParseFraction(std::string_view name) {
  Node num = ParseInnerArg();
  Node den = ParseInnerArg();
  bool binom = name.ends_with("binom");
  Node f = MakeElem("mfrac", binom ? " linethickness=\"0\"" : "", std::move(num), std::move(den));
  if (binom) f = Fenced("(", ")", std::move(f), kStretch);
  if (name[0] == 'd' || name[0] == 'c') return MakeElem("mstyle", StyleAttrs("displaystyle"), std::move(f));
  if (name[0] == 't') return MakeElem("mstyle", StyleAttrs("textstyle"), std::move(f));
  return f;
}

// \sqrt{x} or \sqrt[n]{x}.
Node Parser::ParseSqrt() {
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

// \middle inside \left…\right; a \right that ParseLeft did not take is an error.
Node Parser::ParseRightOrMiddle(std::string_view name) {
  std::optional<std::string> d = ReadDelim();
  if (name == "right" || left_depth_ == 0 || !d) return Error("\\" + std::string(name));
  return MakeToken("mo", *d, kStretch);
}

// \big( and the like: a delimiter of a fixed size; "\big." is nothing.
std::optional<Node> Parser::ParseBig(std::string_view name, const char* size) {
  std::optional<std::string> d = ReadDelim();
  if (!d) return Error("\\" + std::string(name));
  if (d->empty()) return std::nullopt;
  return MakeToken("mo", *d, std::string(kStretch) + " symmetric=\"true\"" + size);
}

// \mathbb{R} and the like: the argument with letters and digits in `font`.
Node Parser::ParseInFont(Font font) {
  Font saved = font_;
  font_ = font;
  Node n = ParseArg();
  font_ = saved;
  return n;
}

// \operatorname{name}; the starred form takes limits like \lim.
Node Parser::ParseOperatorName() {
  bool star = SkipStar();
  std::string text = TextContent(RawArg());
  std::erase(text, ' ');
  return MakeToken("mi", text, text.size() == 1 ? kNormal : "", kFlagFunc | (star ? kFlagLimits : 0));
}

// \overset{script}{base}, \underset, \stackrel.
Node Parser::ParseOverUnder(std::string_view name) {
  Node script = ParseInnerArg();
  Node base = ParseArg();
  return MakeElem(name == "underset" ? "munder" : "mover", {}, std::move(base), std::move(script));
}

// \not=: the negated character, or a combining long solidus.
Node Parser::ParseNot() {
  Node next = ParseArg();
  if (next.kind != NodeKind::kToken) return MakeElem("mrow", {}, Error("\\not"), std::move(next));
  next.text = next.text == "=" ? "≠" : next.text == "∈" ? "∉" : next.text + "\u0338";
  return next;
}

// \substack{a \\ b}: rows stacked in one column.
Node Parser::ParseSubstack() {
  if (Peek().kind != T::kOpen) return ParseArg();
  Advance();
  Cells rows = ParseCells(kStopCell | kStopBrace);
  if (Peek().kind == T::kClose) Advance();
  return BuildTable(std::move(rows), "c", false);
}

Node Parser::ParsePmod() {
  Node arg = ParseArg();
  return MakeElem("mrow", {}, Space("1em"), MakeToken("mo", "(", kNoStretch), MakeToken("mi", "mod"),
                  Space("0.3333em"), std::move(arg), MakeToken("mo", ")", kNoStretch));
}

Node Parser::ParseHspace() {
  SkipStar();
  std::optional<std::string> width = CssLength(RawArg());
  return width ? Space(*width) : Error("\\hspace");
}

// \tag{n} shows "(n)" after a gap; \tag*{n} shows "n".
Node Parser::ParseTag() {
  bool star = SkipStar();
  std::string text = TextContent(RawArg());
  return MakeElem("mrow", {}, Space("2em"), MakeToken("mtext", star ? text : "(" + text + ")"));
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

}  // namespace folio::markdown::math_internal
