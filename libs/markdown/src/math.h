// TeX math to MathML Core, server-side, so readers need no JavaScript to
// read formulas (browsers render MathML natively). Internal to libs/markdown.
// Pure; thread-safe. Unknown commands are kept visibly as
// <merror><mtext>\cmd</mtext></merror>, never dropped silently; output is
// always well-formed XML, escaped, and valid UTF-8, whatever the input.
//
// math_parse.cc tokenizes and parses TeX into a tree of MathML nodes (each
// \command in math_commands.cc; the parser's private header is math_parse.h),
// looking names up in the tables of math.cc, which also writes the tree as markup.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace folio::markdown {

// <math display="block">…</math> (display) or <math>…</math> (inline) for the
// TeX source `tex` (no $ delimiters). The formula sits in <semantics> beside
// an <annotation encoding="application/x-tex"> holding the source, so copying
// keeps the TeX. Never fails: malformed input (unbalanced braces, unknown
// commands, invalid UTF-8, nesting deeper than kMaxMathDepth) yields
// best-effort markup with <merror> where something was wrong. Time and output
// size are linear in tex.size().
std::string TexToMathml(std::string_view tex, bool display);

// Groups, arguments and environments nest at most this deep; deeper input
// becomes <merror>. Bounds the parser's and emitter's stack use.
inline constexpr int kMaxMathDepth = 64;

namespace math_internal {

enum class NodeKind : uint8_t {
  kRow,    // a sequence; written as <mrow> unless it has exactly one kid
  kElem,   // <tag attrs>kids</tag>
  kToken,  // <tag attrs>text</tag>, tag is mi, mn, mo, mtext or mspace
};

// Node::flags.
inline constexpr uint8_t kFlagFunc = 1;          // \sin, \lim: a function application follows
inline constexpr uint8_t kFlagLimits = 2;        // scripts go under/over in display style
inline constexpr uint8_t kFlagAlwaysLimits = 4;  // scripts always under/over (\overbrace, \limits)

struct Node {
  NodeKind kind = NodeKind::kRow;
  const char* tag = "";  // static string
  std::string attrs;     // ready to write (` a="v"`), built only from constants
  std::string text;      // kToken content, unescaped UTF-8 (escaped when written)
  std::vector<Node> kids;
  uint8_t flags = 0;
};

// Parses `tex` into a node tree. Never fails (see TexToMathml).
Node ParseTex(std::string_view tex, bool display);

// ---- The vocabulary (tables in math.cc). Lookups return nullptr if unknown;
// results point to static data.

enum class Sym : uint8_t {
  kMi, kMiUp,        // identifier; kMiUp upright (capital Greek)
  kMo, kOpen, kClose,  // operator; delimiters
  kLarge, kInt,      // \sum-like (limits in display style), integrals
  kFunc, kLimFunc,   // \sin; \lim-like (limits in display style)
  kSpace,            // text is the width
};
struct Symbol { const char* name; const char* text; Sym kind; };
const Symbol* FindSymbol(std::string_view name);  // name without '\'

struct Accent { const char* name; const char* mark; bool stretchy, under, limits; };
const Accent* FindAccent(std::string_view name);

// Letters and digits map to Mathematical Alphanumeric Symbols: MathML Core
// supports no mathvariant but "normal", so \mathbb{R} is written as ℝ.
enum class Font : uint8_t { kNone, kNormal, kBold, kItalic, kBoldItalic, kScript, kFraktur,
                            kDouble, kSans, kSansBold, kMono };
uint32_t MapFont(Font f, uint32_t c);
std::string ApplyFont(Font f, std::string_view text);  // bad UTF-8 becomes U+FFFD
const Font* FindMathFont(std::string_view name);       // \mathbb, \mathrm, ...
const Font* FindTextFont(std::string_view name);       // \text, \textbf, ...

// Column alignment letters: c centre; l, r; L, R as in aligned, where column
// pairs sit tight. `align` repeats across columns. No style attributes: the
// site's HTML carries none (sanitize_test.cc).
struct Env { const char* name; const char* open; const char* close; const char* align; bool display; };
const Env* FindEnv(std::string_view name);
const char* AlignAttrs(char align);           // attributes for an <mtd>
const char* BigSize(std::string_view name);   // \bigl etc.: minsize/maxsize attributes
const char* StyleAttrs(std::string_view name);  // \displaystyle etc.
bool IsIgnored(std::string_view name);        // known commands that render nothing

}  // namespace math_internal
}  // namespace folio::markdown
