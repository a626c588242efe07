// The vocabulary: what TeX names mean in MathML (symbols, accents, fonts,
// environments), and writing the parsed tree as MathML Core markup.
#include "math.h"

#include <cstring>
#include <unordered_map>

#include "folio/core/text.h"
#include "utf8.h"

namespace folio::markdown {
namespace math_internal {
namespace {

using enum Sym;
constexpr Symbol kSymbols[] = {
  {"alpha", "α", kMi}, {"beta", "β", kMi}, {"gamma", "γ", kMi}, {"delta", "δ", kMi},
  {"epsilon", "ϵ", kMi}, {"varepsilon", "ε", kMi}, {"zeta", "ζ", kMi}, {"eta", "η", kMi},
  {"theta", "θ", kMi}, {"vartheta", "ϑ", kMi}, {"iota", "ι", kMi}, {"kappa", "κ", kMi},
  {"varkappa", "ϰ", kMi}, {"lambda", "λ", kMi}, {"mu", "μ", kMi}, {"nu", "ν", kMi},
  {"xi", "ξ", kMi}, {"omicron", "ο", kMi}, {"pi", "π", kMi}, {"varpi", "ϖ", kMi},
  {"rho", "ρ", kMi}, {"varrho", "ϱ", kMi}, {"sigma", "σ", kMi}, {"varsigma", "ς", kMi},
  {"tau", "τ", kMi}, {"upsilon", "υ", kMi}, {"phi", "ϕ", kMi}, {"varphi", "φ", kMi},
  {"chi", "χ", kMi}, {"psi", "ψ", kMi}, {"omega", "ω", kMi}, {"digamma", "ϝ", kMi},
  {"Gamma", "Γ", kMiUp}, {"Delta", "Δ", kMiUp}, {"Theta", "Θ", kMiUp}, {"Lambda", "Λ", kMiUp},
  {"Xi", "Ξ", kMiUp}, {"Pi", "Π", kMiUp}, {"Sigma", "Σ", kMiUp}, {"Upsilon", "Υ", kMiUp},
  {"Phi", "Φ", kMiUp}, {"Psi", "Ψ", kMiUp}, {"Omega", "Ω", kMiUp}, {"nabla", "∇", kMiUp},
  {"Re", "ℜ", kMiUp}, {"Im", "ℑ", kMiUp},
  {"ell", "ℓ", kMi}, {"hbar", "ℏ", kMi}, {"hslash", "ℏ", kMi}, {"imath", "ı", kMi},
  {"jmath", "ȷ", kMi}, {"infty", "∞", kMi}, {"partial", "∂", kMi}, {"aleph", "ℵ", kMi},
  {"beth", "ℶ", kMi}, {"wp", "℘", kMi}, {"emptyset", "∅", kMi}, {"varnothing", "∅", kMi},
  {"top", "⊤", kMi}, {"bot", "⊥", kMi}, {"angle", "∠", kMi}, {"triangle", "△", kMi},
  {"prime", "′", kMi}, {"Box", "□", kMi}, {"checkmark", "✓", kMi}, {"degree", "°", kMi},
  {"flat", "♭", kMi}, {"sharp", "♯", kMi}, {"S", "§", kMi}, {"P", "¶", kMi},
  // Binary operators.
  {"pm", "±", kMo}, {"mp", "∓", kMo}, {"times", "×", kMo}, {"div", "÷", kMo},
  {"cdot", "⋅", kMo}, {"cdotp", "⋅", kMo}, {"centerdot", "⋅", kMo}, {"ast", "∗", kMo},
  {"star", "⋆", kMo}, {"circ", "∘", kMo}, {"bullet", "∙", kMo}, {"oplus", "⊕", kMo},
  {"ominus", "⊖", kMo}, {"otimes", "⊗", kMo}, {"oslash", "⊘", kMo}, {"odot", "⊙", kMo},
  {"cup", "∪", kMo}, {"cap", "∩", kMo}, {"sqcup", "⊔", kMo}, {"sqcap", "⊓", kMo},
  {"vee", "∨", kMo}, {"lor", "∨", kMo}, {"wedge", "∧", kMo}, {"land", "∧", kMo},
  {"setminus", "∖", kMo}, {"smallsetminus", "∖", kMo}, {"wr", "≀", kMo}, {"uplus", "⊎", kMo},
  {"amalg", "⨿", kMo}, {"dagger", "†", kMo}, {"ddagger", "‡", kMo}, {"diamond", "⋄", kMo},
  {"ltimes", "⋉", kMo}, {"rtimes", "⋊", kMo}, {"boxplus", "⊞", kMo}, {"boxtimes", "⊠", kMo},
  {"triangleleft", "◃", kMo}, {"triangleright", "▹", kMo}, {"bmod", "mod", kMo},
  // Relations.
  {"le", "≤", kMo}, {"leq", "≤", kMo}, {"ge", "≥", kMo}, {"geq", "≥", kMo},
  {"ne", "≠", kMo}, {"neq", "≠", kMo}, {"leqslant", "⩽", kMo}, {"geqslant", "⩾", kMo},
  {"ll", "≪", kMo}, {"gg", "≫", kMo}, {"lll", "⋘", kMo}, {"ggg", "⋙", kMo},
  {"approx", "≈", kMo}, {"approxeq", "≊", kMo}, {"equiv", "≡", kMo}, {"sim", "∼", kMo},
  {"simeq", "≃", kMo}, {"cong", "≅", kMo}, {"propto", "∝", kMo}, {"asymp", "≍", kMo},
  {"doteq", "≐", kMo}, {"prec", "≺", kMo}, {"succ", "≻", kMo}, {"preceq", "⪯", kMo},
  {"succeq", "⪰", kMo}, {"subset", "⊂", kMo}, {"supset", "⊃", kMo}, {"subseteq", "⊆", kMo},
  {"supseteq", "⊇", kMo}, {"subsetneq", "⊊", kMo}, {"supsetneq", "⊋", kMo},
  {"nsubseteq", "⊈", kMo}, {"sqsubseteq", "⊑", kMo}, {"sqsupseteq", "⊒", kMo},
  {"in", "∈", kMo}, {"ni", "∋", kMo}, {"owns", "∋", kMo}, {"notin", "∉", kMo},
  {"mid", "∣", kMo}, {"nmid", "∤", kMo}, {"parallel", "∥", kMo}, {"nparallel", "∦", kMo},
  {"perp", "⊥", kMo}, {"vdash", "⊢", kMo}, {"dashv", "⊣", kMo}, {"models", "⊨", kMo},
  {"vDash", "⊨", kMo}, {"coloneqq", "≔", kMo}, {"coloneq", "≔", kMo}, {"triangleq", "≜", kMo},
  {"lesssim", "≲", kMo}, {"gtrsim", "≳", kMo}, {"nleq", "≰", kMo}, {"ngeq", "≱", kMo},
  {"nless", "≮", kMo}, {"ngtr", "≯", kMo}, {"nsim", "≁", kMo}, {"ncong", "≇", kMo},
  {"neg", "¬", kMo}, {"lnot", "¬", kMo}, {"colon", ":", kMo}, {"forall", "∀", kMo},
  {"exists", "∃", kMo}, {"nexists", "∄", kMo}, {"therefore", "∴", kMo}, {"because", "∵", kMo},
  // Arrows.
  {"to", "→", kMo}, {"rightarrow", "→", kMo}, {"leftarrow", "←", kMo}, {"gets", "←", kMo},
  {"leftrightarrow", "↔", kMo}, {"Rightarrow", "⇒", kMo}, {"Leftarrow", "⇐", kMo},
  {"Leftrightarrow", "⇔", kMo}, {"implies", "⟹", kMo}, {"impliedby", "⟸", kMo},
  {"iff", "⟺", kMo}, {"longrightarrow", "⟶", kMo}, {"longleftarrow", "⟵", kMo},
  {"longleftrightarrow", "⟷", kMo}, {"Longrightarrow", "⟹", kMo}, {"Longleftarrow", "⟸", kMo},
  {"Longleftrightarrow", "⟺", kMo}, {"mapsto", "↦", kMo}, {"longmapsto", "⟼", kMo},
  {"uparrow", "↑", kMo}, {"downarrow", "↓", kMo}, {"updownarrow", "↕", kMo},
  {"Uparrow", "⇑", kMo}, {"Downarrow", "⇓", kMo}, {"nearrow", "↗", kMo}, {"searrow", "↘", kMo},
  {"swarrow", "↙", kMo}, {"nwarrow", "↖", kMo}, {"hookrightarrow", "↪", kMo},
  {"hookleftarrow", "↩", kMo}, {"rightharpoonup", "⇀", kMo}, {"leftharpoonup", "↼", kMo},
  {"rightleftharpoons", "⇌", kMo}, {"leadsto", "⇝", kMo}, {"twoheadrightarrow", "↠", kMo},
  {"nrightarrow", "↛", kMo}, {"nRightarrow", "⇏", kMo}, {"circlearrowleft", "↺", kMo},
  {"circlearrowright", "↻", kMo},
  // Dots and escaped characters.
  {"ldots", "…", kMo}, {"dots", "…", kMo}, {"dotsc", "…", kMo}, {"dotso", "…", kMo},
  {"cdots", "⋯", kMo}, {"dotsb", "⋯", kMo}, {"dotsm", "⋯", kMo}, {"dotsi", "⋯", kMo},
  {"vdots", "⋮", kMo}, {"ddots", "⋱", kMo}, {"#", "#", kMo}, {"$", "$", kMo},
  {"%", "%", kMo}, {"&", "&", kMo}, {"_", "_", kMo}, {"backslash", "\\", kMo},
  // Delimiters.
  {"{", "{", kOpen}, {"lbrace", "{", kOpen}, {"langle", "⟨", kOpen}, {"lfloor", "⌊", kOpen},
  {"lceil", "⌈", kOpen}, {"lbrack", "[", kOpen}, {"lvert", "|", kOpen}, {"lVert", "‖", kOpen},
  {"}", "}", kClose}, {"rbrace", "}", kClose}, {"rangle", "⟩", kClose}, {"rfloor", "⌋", kClose},
  {"rceil", "⌉", kClose}, {"rbrack", "]", kClose}, {"rvert", "|", kClose}, {"rVert", "‖", kClose},
  {"vert", "|", kClose}, {"Vert", "‖", kClose}, {"|", "‖", kClose},
  // Big operators: limits in display style; integrals never.
  {"sum", "∑", kLarge}, {"prod", "∏", kLarge}, {"coprod", "∐", kLarge}, {"bigcup", "⋃", kLarge},
  {"bigcap", "⋂", kLarge}, {"bigsqcup", "⨆", kLarge}, {"bigvee", "⋁", kLarge},
  {"bigwedge", "⋀", kLarge}, {"bigoplus", "⨁", kLarge}, {"bigotimes", "⨂", kLarge},
  {"bigodot", "⨀", kLarge}, {"biguplus", "⨄", kLarge},
  {"int", "∫", kInt}, {"iint", "∬", kInt}, {"iiint", "∭", kInt}, {"oint", "∮", kInt},
  {"oiint", "∯", kInt},
  // Named functions.
  {"arcsin", "arcsin", kFunc}, {"arccos", "arccos", kFunc}, {"arctan", "arctan", kFunc},
  {"arg", "arg", kFunc}, {"cos", "cos", kFunc}, {"cosh", "cosh", kFunc}, {"cot", "cot", kFunc},
  {"coth", "coth", kFunc}, {"csc", "csc", kFunc}, {"deg", "deg", kFunc}, {"dim", "dim", kFunc},
  {"exp", "exp", kFunc}, {"hom", "hom", kFunc}, {"ker", "ker", kFunc}, {"lg", "lg", kFunc},
  {"ln", "ln", kFunc}, {"log", "log", kFunc}, {"sec", "sec", kFunc}, {"sin", "sin", kFunc},
  {"sinh", "sinh", kFunc}, {"tan", "tan", kFunc}, {"tanh", "tanh", kFunc},
  {"det", "det", kLimFunc}, {"gcd", "gcd", kLimFunc}, {"inf", "inf", kLimFunc},
  {"lim", "lim", kLimFunc}, {"liminf", "lim inf", kLimFunc}, {"limsup", "lim sup", kLimFunc},
  {"max", "max", kLimFunc}, {"min", "min", kLimFunc}, {"sup", "sup", kLimFunc},
  {"Pr", "Pr", kLimFunc}, {"argmax", "arg max", kLimFunc}, {"argmin", "arg min", kLimFunc},
  // Spaces: the text is the width.
  {",", "0.1667em", kSpace}, {":", "0.2222em", kSpace}, {">", "0.2222em", kSpace},
  {";", "0.2778em", kSpace}, {"!", "-0.1667em", kSpace}, {" ", "0.3333em", kSpace},
  {"quad", "1em", kSpace}, {"qquad", "2em", kSpace}, {"enspace", "0.5em", kSpace},
  {"thinspace", "0.1667em", kSpace}, {"medspace", "0.2222em", kSpace},
  {"thickspace", "0.2778em", kSpace}, {"negthinspace", "-0.1667em", kSpace},
};

constexpr Accent kAccents[] = {
  {"hat", "^", false, false, false}, {"widehat", "^", true, false, false},
  {"check", "ˇ", false, false, false}, {"widecheck", "ˇ", true, false, false},
  {"tilde", "~", false, false, false}, {"widetilde", "~", true, false, false},
  {"bar", "¯", false, false, false}, {"overline", "‾", true, false, false},
  {"vec", "→", false, false, false}, {"dot", "˙", false, false, false},
  {"ddot", "¨", false, false, false}, {"acute", "´", false, false, false},
  {"grave", "`", false, false, false}, {"breve", "˘", false, false, false},
  {"mathring", "˚", false, false, false}, {"overrightarrow", "→", true, false, false},
  {"overleftarrow", "←", true, false, false}, {"overleftrightarrow", "↔", true, false, false},
  {"overbrace", "⏞", true, false, true}, {"underbrace", "⏟", true, true, true},
  {"underline", "_", true, true, false},
};

struct FontRange { uint32_t upper, lower, digit, greek_upper, greek_lower; };
constexpr FontRange kFontRanges[] = {
  {0, 0, 0, 0, 0}, {0, 0, 0, 0, 0},
  {0x1D400, 0x1D41A, 0x1D7CE, 0x1D6A8, 0x1D6C2}, {0x1D434, 0x1D44E, 0, 0, 0},
  {0x1D468, 0x1D482, 0x1D7CE, 0x1D71C, 0x1D736}, {0x1D49C, 0x1D4B6, 0, 0, 0},
  {0x1D504, 0x1D51E, 0, 0, 0}, {0x1D538, 0x1D552, 0x1D7D8, 0, 0},
  {0x1D5A0, 0x1D5BA, 0x1D7E2, 0, 0}, {0x1D5D4, 0x1D5EE, 0x1D7EC, 0, 0},
  {0x1D670, 0x1D68A, 0x1D7F6, 0, 0},
};
// Letters Unicode encoded before the block (the block has holes there).
struct Hole { Font font; char c; uint32_t cp; };
constexpr Hole kHoles[] = {
  {Font::kItalic, 'h', 0x210E}, {Font::kScript, 'B', 0x212C}, {Font::kScript, 'E', 0x2130},
  {Font::kScript, 'F', 0x2131}, {Font::kScript, 'H', 0x210B}, {Font::kScript, 'I', 0x2110},
  {Font::kScript, 'L', 0x2112}, {Font::kScript, 'M', 0x2133}, {Font::kScript, 'R', 0x211B},
  {Font::kScript, 'e', 0x212F}, {Font::kScript, 'g', 0x210A}, {Font::kScript, 'o', 0x2134},
  {Font::kFraktur, 'C', 0x212D}, {Font::kFraktur, 'H', 0x210C}, {Font::kFraktur, 'I', 0x2111},
  {Font::kFraktur, 'R', 0x211C}, {Font::kFraktur, 'Z', 0x2128}, {Font::kDouble, 'C', 0x2102},
  {Font::kDouble, 'H', 0x210D}, {Font::kDouble, 'N', 0x2115}, {Font::kDouble, 'P', 0x2119},
  {Font::kDouble, 'Q', 0x211A}, {Font::kDouble, 'R', 0x211D}, {Font::kDouble, 'Z', 0x2124},
};

struct NamedFont { const char* name; Font font; };
constexpr NamedFont kMathFonts[] = {
  {"mathrm", Font::kNormal}, {"mathup", Font::kNormal}, {"mathnormal", Font::kNone},
  {"mathbf", Font::kBold}, {"mathit", Font::kItalic}, {"boldsymbol", Font::kBoldItalic},
  {"bm", Font::kBoldItalic}, {"mathcal", Font::kScript}, {"mathscr", Font::kScript},
  {"mathfrak", Font::kFraktur}, {"mathbb", Font::kDouble}, {"mathsf", Font::kSans},
  {"mathbfsf", Font::kSansBold}, {"mathtt", Font::kMono},
};
constexpr NamedFont kTextFonts[] = {
  {"text", Font::kNone}, {"textrm", Font::kNone}, {"textnormal", Font::kNone},
  {"textup", Font::kNone}, {"mbox", Font::kNone}, {"hbox", Font::kNone},
  {"textbf", Font::kBold}, {"textit", Font::kItalic}, {"textsf", Font::kSans},
  {"texttt", Font::kMono},
};

constexpr Env kEnvs[] = {
  {"matrix", "", "", "c", false}, {"smallmatrix", "", "", "c", false},
  {"pmatrix", "(", ")", "c", false}, {"bmatrix", "[", "]", "c", false},
  {"Bmatrix", "{", "}", "c", false}, {"vmatrix", "|", "|", "c", false},
  {"Vmatrix", "‖", "‖", "c", false}, {"cases", "{", "", "ll", false},
  {"dcases", "{", "", "ll", true}, {"rcases", "", "}", "ll", false},
  {"aligned", "", "", "RL", true}, {"align", "", "", "RL", true}, {"align*", "", "", "RL", true},
  {"alignat", "", "", "RL", true}, {"alignat*", "", "", "RL", true},
  {"alignedat", "", "", "RL", true}, {"split", "", "", "RL", true},
  {"eqnarray", "", "", "rcl", true}, {"eqnarray*", "", "", "rcl", true},
  {"gathered", "", "", "c", true}, {"gather", "", "", "c", true}, {"gather*", "", "", "c", true},
  {"multline", "", "", "c", true}, {"multline*", "", "", "c", true},
  {"equation", "", "", "c", true}, {"equation*", "", "", "c", true},
  {"array", "", "", "c", false}, {"darray", "", "", "c", true}, {"subarray", "", "", "c", false},
};

}  // namespace

const Symbol* FindSymbol(std::string_view name) {
  static const auto map = [] {
    std::unordered_map<std::string_view, const Symbol*> m;
    for (const Symbol& s : kSymbols) m.emplace(s.name, &s);
    return m;
  }();
  auto it = map.find(name);
  return it == map.end() ? nullptr : it->second;
}

const Accent* FindAccent(std::string_view name) {
  for (const Accent& a : kAccents) {
    if (name == a.name) return &a;
  }
  return nullptr;
}

uint32_t MapFont(Font f, uint32_t c) {
  for (const Hole& h : kHoles) {
    if (h.font == f && static_cast<uint32_t>(h.c) == c) return h.cp;
  }
  const FontRange& r = kFontRanges[static_cast<int>(f)];
  auto in = [c](uint32_t lo, uint32_t hi, uint32_t base) { return base && c >= lo && c <= hi; };
  if (in('A', 'Z', r.upper)) return r.upper + (c - 'A');
  if (in('a', 'z', r.lower)) return r.lower + (c - 'a');
  if (in('0', '9', r.digit)) return r.digit + (c - '0');
  if (in(0x391, 0x3A9, r.greek_upper)) return r.greek_upper + (c - 0x391);
  if (in(0x3B1, 0x3C9, r.greek_lower)) return r.greek_lower + (c - 0x3B1);
  return c;
}

std::string ApplyFont(Font f, std::string_view text) {
  if (f == Font::kNone || f == Font::kNormal) return std::string(text);
  std::string out;
  for (size_t i = 0; i < text.size();) AppendUtf8(MapFont(f, DecodeUtf8(text, &i)), &out);
  return out;
}

const Font* FindMathFont(std::string_view name) {
  for (const NamedFont& f : kMathFonts) {
    if (name == f.name) return &f.font;
  }
  return nullptr;
}

const Font* FindTextFont(std::string_view name) {
  for (const NamedFont& f : kTextFonts) {
    if (name == f.name) return &f.font;
  }
  return nullptr;
}

const Env* FindEnv(std::string_view name) {
  for (const Env& e : kEnvs) {
    if (name == e.name) return &e;
  }
  return nullptr;
}

const char* AlignAttrs(char a) {
  switch (a) {
    case 'l': case 'L': return " columnalign=\"left\"";
    case 'r': case 'R': return " columnalign=\"right\"";
    default: return "";
  }
}

const char* BigSize(std::string_view name) {
  if (!name.empty() && (name.back() == 'l' || name.back() == 'r' || name.back() == 'm')) {
    name.remove_suffix(1);
  }
  if (name == "big") return " minsize=\"1.2em\" maxsize=\"1.2em\"";
  if (name == "Big") return " minsize=\"1.623em\" maxsize=\"1.623em\"";
  if (name == "bigg") return " minsize=\"2.047em\" maxsize=\"2.047em\"";
  if (name == "Bigg") return " minsize=\"2.470em\" maxsize=\"2.470em\"";
  return nullptr;
}

const char* StyleAttrs(std::string_view name) {
  if (name == "displaystyle") return " displaystyle=\"true\" scriptlevel=\"0\"";
  if (name == "textstyle") return " displaystyle=\"false\" scriptlevel=\"0\"";
  if (name == "scriptstyle") return " displaystyle=\"false\" scriptlevel=\"1\"";
  if (name == "scriptscriptstyle") return " displaystyle=\"false\" scriptlevel=\"2\"";
  return nullptr;
}

bool IsIgnored(std::string_view name) {
  for (const char* n : {"limits", "nolimits", "nonumber", "notag", "hline", "hdashline",
                        "relax", "allowbreak", "nobreak"}) {
    if (name == n) return true;
  }
  return StyleAttrs(name) != nullptr;
}

}  // namespace math_internal

namespace {

using math_internal::Node;
using math_internal::NodeKind;

// Elements whose children form an inferred <mrow>: a kRow kid is inlined.
bool InfersRow(const char* tag) {
  for (const char* t : {"msqrt", "mstyle", "mrow", "mtd", "mphantom", "merror"}) {
    if (std::strcmp(tag, t) == 0) return true;
  }
  return false;
}

// Writes `n` as exactly one element. Recursion depth follows the tree,
// which the parser bounds (kMaxMathDepth).
void EmitOne(const Node& n, std::string* out) {
  switch (n.kind) {
    case NodeKind::kToken:
      *out += '<'; *out += n.tag; *out += n.attrs; *out += '>';
      AppendXmlText(n.text, out);
      *out += "</"; *out += n.tag; *out += '>';
      return;
    case NodeKind::kRow:
      if (n.kids.size() == 1) return EmitOne(n.kids[0], out);
      *out += "<mrow>";
      for (const Node& k : n.kids) EmitOne(k, out);
      *out += "</mrow>";
      return;
    case NodeKind::kElem: {
      *out += '<'; *out += n.tag; *out += n.attrs; *out += '>';
      bool inline_rows = InfersRow(n.tag);
      for (const Node& k : n.kids) {
        if (inline_rows && k.kind == NodeKind::kRow) {
          for (const Node& kk : k.kids) EmitOne(kk, out);
        } else {
          EmitOne(k, out);
        }
      }
      *out += "</"; *out += n.tag; *out += '>';
      return;
    }
  }
}

}  // namespace

std::string TexToMathml(std::string_view tex, bool display) {
  Node root = math_internal::ParseTex(tex, display);
  std::string out;
  out.reserve(tex.size() * 6 + 128);
  out += display ? "<math display=\"block\"><semantics>" : "<math><semantics>";
  EmitOne(root, &out);
  out += "<annotation encoding=\"application/x-tex\">";
  AppendXmlText(tex, &out);
  out += "</annotation></semantics></math>";
  return out;
}

}  // namespace folio::markdown
