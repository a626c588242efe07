// Internal to libs/markdown: the TeX parser shared by math_parse.cc (the
// tokenizer and the grammar: rows, atoms, scripts, groups, characters) and
// math_commands.cc (each \command: symbols, accents, fractions, roots,
// delimiters, fonts, environments). One Parser per formula, on one thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "math.h"

namespace folio::markdown::math_internal {

inline constexpr const char* kNormal = " mathvariant=\"normal\"";
inline constexpr const char* kNoStretch = " stretchy=\"false\"";
inline constexpr const char* kStretch = " stretchy=\"true\"";

// ---- Tokens ----------------------------------------------------------------

enum class T : uint8_t { kEnd, kChar, kCmd, kOpen, kClose, kSup, kSub, kAmp, kNewline, kPrime };

struct Token {
  T kind;
  uint32_t cp;            // kChar: the code point (U+FFFD if malformed)
  std::string_view name;  // kCmd: the name without '\'
  size_t pos, end;        // bytes of the source
};

inline bool IsLetter(uint32_t c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }
inline bool IsDigit(uint32_t c) { return c >= '0' && c <= '9'; }

// Whitespace and comments vanish; the result always ends with kEnd.
std::vector<Token> Tokenize(std::string_view s);

// ---- Node builders -----------------------------------------------------------

Node MakeToken(const char* tag, std::string text, std::string attrs = {}, uint8_t flags = 0);

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

Node Error(std::string text);        // <merror> showing `text`
Node Space(std::string_view width);  // <mspace width="…">

using Cells = std::vector<std::vector<Node>>;

// <mtable> of `rows`; `align` letters as in Env::align, repeating across columns.
Node BuildTable(Cells rows, std::string_view align, bool display);

// ---- Parser ------------------------------------------------------------------

// ParseRow stops before these tokens (by flag) instead of consuming them.
inline constexpr uint8_t kStopBrace = 1, kStopBracket = 2, kStopRight = 4, kStopCell = 8, kStopEnd = 16;

class Parser {
 public:
  Parser(std::string_view src, bool display) : src_(src), toks_(Tokenize(src)), display_(display) {}

  Node ParseTop();

 private:
  const Token& Peek() const { return toks_[i_]; }
  bool PeekCmd(std::string_view name) const { return Peek().kind == T::kCmd && Peek().name == name; }
  bool PeekChar(uint32_t c) const { return Peek().kind == T::kChar && Peek().cp == c; }
  void Advance() { if (toks_[i_].kind != T::kEnd) ++i_; }
  // Consumes a '*' after a command name; whether there was one.
  bool SkipStar() {
    bool star = PeekChar('*');
    if (star) Advance();
    return star;
  }

  // The grammar (math_parse.cc).
  Node ParseRow(uint8_t stops);
  std::optional<Node> ParseAtom();
  std::optional<Node> ParsePrimary(bool single);
  Node ParseChar(uint32_t cp, bool single);
  Node ParseGroup();
  Cells ParseCells(uint8_t stops);

  // Commands (math_commands.cc).
  std::optional<Node> ParseCommand(std::string_view name);
  Node ParseSymbol(const Symbol& s);
  Node ParseAccent(const Accent& a);
  Node ParseFraction(std::string_view name);
  Node ParseSqrt();
  Node ParseLeft();
  Node ParseRightOrMiddle(std::string_view name);
  std::optional<Node> ParseBig(std::string_view name, const char* size);
  Node ParseInFont(Font font);
  Node ParseOperatorName();
  Node ParseEnv();
  Node ParseOverUnder(std::string_view name);
  Node ParseNot();
  Node ParseSubstack();
  Node ParsePmod();
  Node ParseHspace();
  Node ParseTag();
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

}  // namespace folio::markdown::math_internal
