// TexToMathml: exact MathML for representative formulas, error handling,
// and a well-formedness check over malformed and random input.
#include <doctest/doctest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "folio/core/text.h"
#include "math.h"

using folio::markdown::TexToMathml;

namespace {

// The formula inside <semantics>, without the wrapper and the annotation.
std::string Body(std::string_view tex, bool display = false) {
  std::string out = TexToMathml(tex, display);
  size_t b = out.find("<semantics>");
  size_t e = out.rfind("<annotation");
  if (b == std::string::npos || e == std::string::npos || e < b) return "BAD: " + out;
  return out.substr(b + 11, e - b - 11);
}

// Empty if `s` is one well-formed <math> element: tags balanced and known to
// MathML Core, attributes quoted, only the five XML entities, valid UTF-8.
std::string WellFormedError(const std::string& s) {
  static const std::set<std::string> kTags = {
      "math", "semantics", "annotation", "mrow", "mi", "mn", "mo", "mtext", "mspace",
      "mfrac", "msqrt", "mroot", "msub", "msup", "msubsup", "munder", "mover", "munderover",
      "mtable", "mtr", "mtd", "mstyle", "merror", "mphantom"};
  // No style attributes anywhere in the site's HTML (sanitize_test.cc).
  static const std::set<std::string> kAttrs = {
      "display", "encoding", "mathvariant", "stretchy", "symmetric", "minsize", "maxsize",
      "movablelimits", "rspace", "accent", "accentunder", "linethickness", "displaystyle",
      "scriptlevel", "width", "columnalign", "columnspacing"};
  if (!folio::IsValidUtf8(s)) return "invalid UTF-8";
  std::vector<std::string> stack;
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '&') {
      size_t semi = s.find(';', i);
      if (semi == std::string::npos) return "bare &";
      std::string ent = s.substr(i, semi - i + 1);
      if (ent != "&amp;" && ent != "&lt;" && ent != "&gt;" && ent != "&quot;" && ent != "&#39;")
        return "entity " + ent;
      i = semi + 1;
      continue;
    }
    if (c == '>') return "bare >";
    if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') return "control";
    if (c != '<') { ++i; continue; }
    if (i > 0 && stack.empty()) return "content after root";
    bool close = i + 1 < s.size() && s[i + 1] == '/';
    size_t name_start = i + (close ? 2 : 1);
    size_t name_end = s.find_first_of(" >", name_start);
    if (name_end == std::string::npos) return "unterminated tag";
    std::string name = s.substr(name_start, name_end - name_start);
    if (!kTags.count(name)) return "unknown tag " + name;
    size_t j = name_end;
    while (j < s.size() && s[j] == ' ') {  // attributes: ` name="value"`
      size_t eq = s.find("=\"", j);
      size_t q = eq == std::string::npos ? eq : s.find('"', eq + 2);
      if (q == std::string::npos) return "bad attribute";
      std::string attr = s.substr(j + 1, eq - j - 1);
      if (!kAttrs.count(attr)) return "unexpected attribute " + attr;
      if (s.substr(eq + 2, q - eq - 2).find_first_of("<>&") != std::string::npos) return "raw <>& in value";
      j = q + 1;
    }
    if (j < s.size() && s[j] != '>') return "bad tag";
    if (j == s.size()) return "unterminated tag";
    if (close) {
      if (stack.empty() || stack.back() != name) return "mismatched </" + name + ">";
      stack.pop_back();
    } else {
      stack.push_back(name);
    }
    i = j + 1;
  }
  if (!stack.empty()) return "unclosed <" + stack.back() + ">";
  if (s.rfind("<math", 0) != 0) return "root is not math";
  return {};
}

void CheckWellFormed(std::string_view tex) {
  for (bool display : {false, true}) {
    std::string out = TexToMathml(tex, display);
    INFO("tex: " << std::string(tex) << "\nout: " << out);
    CHECK(WellFormedError(out) == "");
  }
}

}  // namespace

TEST_SUITE("math") {

TEST_CASE("math: the well-formedness checker rejects broken markup") {
  CHECK(WellFormedError("<math><mi>x</mi></math>") == "");
  CHECK(WellFormedError("<math><mi>x</math>") != "");
  CHECK(WellFormedError("<math><mi>x</mi>") != "");
  CHECK(WellFormedError("<math><mi>a<b</mi></math>") != "");
  CHECK(WellFormedError("<math><mi>a&b</mi></math>") != "");
  CHECK(WellFormedError("<math><mtd style=\"x\"></mtd></math>") != "");
  CHECK(WellFormedError("<math><script></script></math>") != "");
  CHECK(WellFormedError("<math></math><mi></mi>") != "");
}

TEST_CASE("math: wrapper, annotation, inline vs display") {
  CHECK(TexToMathml("x^2", false) ==
        "<math><semantics><msup><mi>x</mi><mn>2</mn></msup>"
        "<annotation encoding=\"application/x-tex\">x^2</annotation></semantics></math>");
  CHECK(TexToMathml("x", true) ==
        "<math display=\"block\"><semantics><mi>x</mi>"
        "<annotation encoding=\"application/x-tex\">x</annotation></semantics></math>");
  CHECK(TexToMathml("", false) ==
        "<math><semantics><mrow></mrow>"
        "<annotation encoding=\"application/x-tex\"></annotation></semantics></math>");
}

TEST_CASE("math: identifiers, numbers, operators") {
  CHECK(Body("e^{i\\pi}+1=0") ==
        "<mrow><msup><mi>e</mi><mrow><mi>i</mi><mi>π</mi></mrow></msup><mo>+</mo><mn>1</mn>"
        "<mo>=</mo><mn>0</mn></mrow>");
  CHECK(Body("3.14 \\times 10^{-3}") ==
        "<mrow><mn>3.14</mn><mo>×</mo><msup><mn>10</mn><mrow><mo>−</mo><mn>3</mn></mrow></msup></mrow>");
  CHECK(Body("a \\le b \\ge c \\ne d \\pm e \\div f \\cdot g") ==
        "<mrow><mi>a</mi><mo>≤</mo><mi>b</mi><mo>≥</mo><mi>c</mi><mo>≠</mo><mi>d</mi><mo>±</mo>"
        "<mi>e</mi><mo>÷</mo><mi>f</mi><mo>⋅</mo><mi>g</mi></mrow>");
  CHECK(Body("\\to\\Rightarrow\\iff\\implies\\in\\notin\\subseteq\\cup\\cap\\forall\\exists"
             "\\approx\\equiv\\sim\\propto\\ldots\\cdots") ==
        "<mrow><mo>→</mo><mo>⇒</mo><mo>⟺</mo><mo>⟹</mo><mo>∈</mo><mo>∉</mo><mo>⊆</mo><mo>∪</mo>"
        "<mo>∩</mo><mo>∀</mo><mo>∃</mo><mo>≈</mo><mo>≡</mo><mo>∼</mo><mo>∝</mo><mo>…</mo>"
        "<mo>⋯</mo></mrow>");
  CHECK(Body("\\infty\\partial\\nabla") ==
        "<mrow><mi>∞</mi><mi>∂</mi><mi mathvariant=\"normal\">∇</mi></mrow>");
  CHECK(Body("\\not= \\not\\in") == "<mrow><mo>≠</mo><mo>∉</mo></mrow>");
}

TEST_CASE("math: Greek letters") {
  CHECK(Body("\\alpha\\beta\\Gamma\\varepsilon\\varphi\\Omega") ==
        "<mrow><mi>α</mi><mi>β</mi><mi mathvariant=\"normal\">Γ</mi><mi>ε</mi><mi>φ</mi>"
        "<mi mathvariant=\"normal\">Ω</mi></mrow>");
}

TEST_CASE("math: scripts and primes") {
  CHECK(Body("x_i^2 x_{i,j} x^{2}_{k}") ==
        "<mrow><msubsup><mi>x</mi><mi>i</mi><mn>2</mn></msubsup><msub><mi>x</mi><mrow><mi>i</mi>"
        "<mo>,</mo><mi>j</mi></mrow></msub><msubsup><mi>x</mi><mi>k</mi><mn>2</mn></msubsup></mrow>");
  CHECK(Body("x^23") == "<mrow><msup><mi>x</mi><mn>2</mn></msup><mn>3</mn></mrow>");
  CHECK(Body("f'(x) = g''") ==
        "<mrow><msup><mi>f</mi><mo>′</mo></msup><mo stretchy=\"false\">(</mo><mi>x</mi>"
        "<mo stretchy=\"false\">)</mo><mo>=</mo><msup><mi>g</mi><mo>″</mo></msup></mrow>");
  CHECK(Body("f'^2") == "<msup><mi>f</mi><mrow><mo>′</mo><mn>2</mn></mrow></msup>");
  CHECK(Body("^2") == "<msup><mrow></mrow><mn>2</mn></msup>");
}

TEST_CASE("math: fractions, binomials, roots") {
  CHECK(Body("\\frac{a}{b}") == "<mfrac><mi>a</mi><mi>b</mi></mfrac>");
  CHECK(Body("\\frac12") == "<mfrac><mn>1</mn><mn>2</mn></mfrac>");
  CHECK(Body("\\dfrac{1}{2}") ==
        "<mstyle displaystyle=\"true\" scriptlevel=\"0\"><mfrac><mn>1</mn><mn>2</mn></mfrac></mstyle>");
  CHECK(Body("\\tfrac{1}{2}") ==
        "<mstyle displaystyle=\"false\" scriptlevel=\"0\"><mfrac><mn>1</mn><mn>2</mn></mfrac></mstyle>");
  CHECK(Body("\\binom{n}{k}") ==
        "<mrow><mo stretchy=\"true\">(</mo><mfrac linethickness=\"0\"><mi>n</mi><mi>k</mi></mfrac>"
        "<mo stretchy=\"true\">)</mo></mrow>");
  CHECK(Body("\\sqrt{x+1}") == "<msqrt><mi>x</mi><mo>+</mo><mn>1</mn></msqrt>");
  CHECK(Body("\\sqrt[3]{x}") == "<mroot><mi>x</mi><mn>3</mn></mroot>");
}

TEST_CASE("math: big operators take limits in display style only") {
  const char* sum = "\\sum_{i=1}^n i";
  CHECK(Body(sum) ==
        "<mrow><msubsup><mo>∑</mo><mrow><mi>i</mi><mo>=</mo><mn>1</mn></mrow><mi>n</mi></msubsup>"
        "<mi>i</mi></mrow>");
  CHECK(Body(sum, true) ==
        "<mrow><munderover><mo>∑</mo><mrow><mi>i</mi><mo>=</mo><mn>1</mn></mrow><mi>n</mi>"
        "</munderover><mi>i</mi></mrow>");
  CHECK(Body("\\int_0^\\infty f(x)\\,dx", true) ==
        "<mrow><msubsup><mo>∫</mo><mn>0</mn><mi>∞</mi></msubsup><mi>f</mi><mo stretchy=\"false\">(</mo>"
        "<mi>x</mi><mo stretchy=\"false\">)</mo><mspace width=\"0.1667em\"></mspace><mi>d</mi>"
        "<mi>x</mi></mrow>");
  CHECK(Body("\\lim_{n\\to\\infty} a_n", true) ==
        "<mrow><munder><mi>lim</mi><mrow><mi>n</mi><mo>→</mo><mi>∞</mi></mrow></munder>"
        "<mo rspace=\"0.1667em\">\u2061</mo><msub><mi>a</mi><mi>n</mi></msub></mrow>");
  CHECK(Body("\\sum\\limits_{i} x") ==
        "<mrow><munder><mo movablelimits=\"false\">∑</mo><mi>i</mi></munder><mi>x</mi></mrow>");
  CHECK(Body("\\displaystyle \\sum_i x") ==
        "<mstyle displaystyle=\"true\" scriptlevel=\"0\"><munder><mo>∑</mo><mi>i</mi></munder>"
        "<mi>x</mi></mstyle>");
  // A fraction's parts are in text style even in display math.
  CHECK(Body("\\frac{\\sum_i x}{2}", true) ==
        "<mfrac><mrow><msub><mo>∑</mo><mi>i</mi></msub><mi>x</mi></mrow><mn>2</mn></mfrac>");
}

TEST_CASE("math: functions") {
  CHECK(Body("\\sin x + \\cos(y)") ==
        "<mrow><mi>sin</mi><mo rspace=\"0.1667em\">\u2061</mo><mi>x</mi><mo>+</mo><mi>cos</mi>"
        "<mo>\u2061</mo><mo stretchy=\"false\">(</mo><mi>y</mi><mo stretchy=\"false\">)</mo></mrow>");
  CHECK(Body("\\log_2 n") ==
        "<mrow><msub><mi>log</mi><mn>2</mn></msub><mo rspace=\"0.1667em\">\u2061</mo><mi>n</mi></mrow>");
  CHECK(Body("\\operatorname{sgn} x") ==
        "<mrow><mi>sgn</mi><mo rspace=\"0.1667em\">\u2061</mo><mi>x</mi></mrow>");
  CHECK(Body("\\operatorname*{arg\\,max}_x", true) ==
        "<munder><mi>argmax</mi><mi>x</mi></munder>");
}

TEST_CASE("math: delimiters") {
  CHECK(Body("\\left(\\frac{1}{2}\\right)") ==
        "<mrow><mo stretchy=\"true\">(</mo><mfrac><mn>1</mn><mn>2</mn></mfrac>"
        "<mo stretchy=\"true\">)</mo></mrow>");
  CHECK(Body("\\left\\langle a \\middle| b \\right\\rangle") ==
        "<mrow><mo stretchy=\"true\">⟨</mo><mi>a</mi><mo stretchy=\"true\">|</mo><mi>b</mi>"
        "<mo stretchy=\"true\">⟩</mo></mrow>");
  CHECK(Body("\\left. x \\right|_0") ==
        "<msub><mrow><mi>x</mi><mo stretchy=\"true\">|</mo></mrow><mn>0</mn></msub>");
  CHECK(Body("\\bigl( x \\bigr)") ==
        "<mrow><mo stretchy=\"true\" symmetric=\"true\" minsize=\"1.2em\" maxsize=\"1.2em\">(</mo>"
        "<mi>x</mi><mo stretchy=\"true\" symmetric=\"true\" minsize=\"1.2em\" maxsize=\"1.2em\">)"
        "</mo></mrow>");
  CHECK(Body("\\{ x \\} \\| y \\|") ==
        "<mrow><mo stretchy=\"false\">{</mo><mi>x</mi><mo stretchy=\"false\">}</mo>"
        "<mo stretchy=\"false\">‖</mo><mi>y</mi><mo stretchy=\"false\">‖</mo></mrow>");
}

TEST_CASE("math: fonts and text") {
  CHECK(Body("\\mathbb{R}^n") == "<msup><mi>ℝ</mi><mi>n</mi></msup>");
  CHECK(Body("\\mathcal{L} \\mathbf{x} \\mathfrak{g} \\mathbb{1} \\boldsymbol{\\alpha}") ==
        "<mrow><mi>ℒ</mi><mi>𝐱</mi><mi>𝔤</mi><mn>𝟙</mn><mi>𝜶</mi></mrow>");
  CHECK(Body("\\mathrm{d}x \\mathrm{Var}") ==
        "<mrow><mi mathvariant=\"normal\">d</mi><mi>x</mi><mi>Var</mi></mrow>");
  // Leading and trailing spaces survive as U+00A0 (token text is trimmed).
  CHECK(Body("\\text{if } x \\text{ a\\{b\\} }") ==
        "<mrow><mtext>if\u00A0</mtext><mi>x</mi><mtext>\u00A0a{b}\u00A0</mtext></mrow>");
}

TEST_CASE("math: accents") {
  CHECK(Body("\\hat{x}\\bar y\\vec{v}\\dot x\\tilde{n}") ==
        "<mrow><mover accent=\"true\"><mi>x</mi><mo stretchy=\"false\">^</mo></mover>"
        "<mover accent=\"true\"><mi>y</mi><mo stretchy=\"false\">¯</mo></mover>"
        "<mover accent=\"true\"><mi>v</mi><mo stretchy=\"false\">→</mo></mover>"
        "<mover accent=\"true\"><mi>x</mi><mo stretchy=\"false\">˙</mo></mover>"
        "<mover accent=\"true\"><mi>n</mi><mo stretchy=\"false\">~</mo></mover></mrow>");
  CHECK(Body("\\overline{AB}\\underline{c}") ==
        "<mrow><mover accent=\"true\"><mrow><mi>A</mi><mi>B</mi></mrow><mo stretchy=\"true\">‾</mo>"
        "</mover><munder accentunder=\"true\"><mi>c</mi><mo stretchy=\"true\">_</mo></munder></mrow>");
  CHECK(Body("\\overbrace{a+b}^{n}") ==
        "<mover><mover accent=\"true\"><mrow><mi>a</mi><mo>+</mo><mi>b</mi></mrow>"
        "<mo stretchy=\"true\">⏞</mo></mover><mi>n</mi></mover>");
}

TEST_CASE("math: matrices, cases, aligned") {
  CHECK(Body("\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}") ==
        "<mrow><mo stretchy=\"true\">(</mo><mtable><mtr><mtd><mn>1</mn></mtd><mtd><mn>2</mn></mtd>"
        "</mtr><mtr><mtd><mn>3</mn></mtd><mtd><mn>4</mn></mtd></mtr></mtable>"
        "<mo stretchy=\"true\">)</mo></mrow>");
  CHECK(Body("\\begin{bmatrix} a \\\\ \\end{bmatrix}") ==
        "<mrow><mo stretchy=\"true\">[</mo><mtable><mtr><mtd><mi>a</mi></mtd></mtr></mtable>"
        "<mo stretchy=\"true\">]</mo></mrow>");
  CHECK(Body("\\begin{vmatrix} a \\end{vmatrix}") ==
        "<mrow><mo stretchy=\"true\">|</mo><mtable><mtr><mtd><mi>a</mi></mtd></mtr></mtable>"
        "<mo stretchy=\"true\">|</mo></mrow>");
  std::string left = " columnalign=\"left\"";
  CHECK(Body("\\begin{cases} 1 & x > 0 \\\\ 0 & \\text{otherwise} \\end{cases}") ==
        "<mrow><mo stretchy=\"true\">{</mo><mtable><mtr><mtd" + left + "><mn>1</mn></mtd><mtd" +
            left + "><mi>x</mi><mo>&gt;</mo><mn>0</mn></mtd></mtr><mtr><mtd" + left +
            "><mn>0</mn></mtd><mtd" + left + "><mtext>otherwise</mtext></mtd></mtr></mtable></mrow>");
  const char* r = "<mtd columnalign=\"right\">";
  const char* l = "<mtd columnalign=\"left\">";
  CHECK(Body("\\begin{aligned} x &= 1 \\\\ y &= 2 \\end{aligned}", true) ==
        std::string("<mtable displaystyle=\"true\" columnspacing=\"0em\"><mtr>") + r + "<mi>x</mi></mtd>" + l +
            "<mo>=</mo><mn>1</mn></mtd></mtr><mtr>" + r + "<mi>y</mi></mtd>" + l +
            "<mo>=</mo><mn>2</mn></mtd></mtr></mtable>");
  CHECK(Body("a &= b & c &= d") ==
        "<mtable columnspacing=\"0em 2em 0em\"><mtr><mtd columnalign=\"right\"><mi>a</mi></mtd>"
        "<mtd columnalign=\"left\"><mo>=</mo><mi>b</mi></mtd><mtd columnalign=\"right\"><mi>c</mi>"
        "</mtd><mtd columnalign=\"left\"><mo>=</mo><mi>d</mi></mtd></mtr></mtable>");
  // Bare \\ and & at the top level, as in notes that paste align bodies.
  CHECK(Body("a \\\\ b") ==
        "<mtable><mtr><mtd><mi>a</mi></mtd></mtr><mtr><mtd><mi>b</mi></mtd></mtr></mtable>");
}

TEST_CASE("math: spacing") {
  CHECK(Body("a\\,b\\;c\\quad d\\qquad e\\!f") ==
        "<mrow><mi>a</mi><mspace width=\"0.1667em\"></mspace><mi>b</mi>"
        "<mspace width=\"0.2778em\"></mspace><mi>c</mi><mspace width=\"1em\"></mspace><mi>d</mi>"
        "<mspace width=\"2em\"></mspace><mi>e</mi><mspace width=\"-0.1667em\"></mspace><mi>f</mi></mrow>");
  CHECK(Body("\\hspace{3mu}") == "<mspace width=\"0.1667em\"></mspace>");
  CHECK(Body("\\hspace{1em\" onload=x}") == "<merror><mtext>\\hspace</mtext></merror>");
}

TEST_CASE("math: unknown commands stay visible") {
  CHECK(Body("\\foo{x}") == "<mrow><merror><mtext>\\foo</mtext></merror><mi>x</mi></mrow>");
  CHECK(Body("\\") == "<merror><mtext>\\</mtext></merror>");
  CHECK(Body("\\begin{weird} a \\end{weird}") ==
        "<mrow><merror><mtext>\\begin{weird}</mtext></merror><mi>a</mi></mrow>");
}

TEST_CASE("math: escaping") {
  CHECK(TexToMathml("a<b>c & \\text{<&\">}", false) ==
        "<math><semantics><mtable columnspacing=\"0em\"><mtr><mtd columnalign=\"right\">"
        "<mi>a</mi><mo>&lt;</mo><mi>b</mi><mo>&gt;</mo><mi>c</mi></mtd><mtd columnalign=\"left\">"
        "<mtext>&lt;&amp;&quot;&gt;</mtext></mtd></mtr></mtable>"
        "<annotation encoding=\"application/x-tex\">a&lt;b&gt;c &amp; \\text{&lt;&amp;&quot;&gt;}"
        "</annotation></semantics></math>");
  CHECK(Body("\\text{</mtext><script>}") == "<mtext>&lt;/mtext&gt;&lt;script&gt;</mtext>");
  // Invalid UTF-8 and control characters never reach the output.
  std::string bad = TexToMathml(std::string("x\xff\x01\x7f y\0z", 9), false);
  CHECK(WellFormedError(bad) == "");
  CHECK(bad.find("\xEF\xBF\xBD") != std::string::npos);  // U+FFFD
}

TEST_CASE("math: unbalanced and malformed input is well-formed") {
  CHECK(Body("{a") == "<mi>a</mi>");
  CHECK(Body("a}") == "<mrow><mi>a</mi><merror><mtext>}</mtext></merror></mrow>");
  CHECK(Body("\\frac{a") == "<mfrac><mi>a</mi><mrow></mrow></mfrac>");
  CHECK(Body("\\left( x") == "<mrow><mo stretchy=\"true\">(</mo><mi>x</mi></mrow>");
  CHECK(Body("x \\right)") == "<mrow><mi>x</mi><merror><mtext>\\right</mtext></merror></mrow>");
  for (const char* tex :
       {"}", "}}{{", "x^", "_", "^^", "x^^2", "x''^'", "\\sqrt[", "\\sqrt[3", "\\text{abc", "\\text",
        "\\begin{matrix} a & b", "\\end{matrix}", "\\begin{", "\\begin{cases} } \\end{cases}",
        "\\left", "\\left\\right", "\\middle|", "\\bigl", "\\frac", "\\frac{", "&&\\\\&",
        "\\\\[", "\\operatorname", "\\not", "\\not{}", "\\mathbb", "\\hspace{", "x_1_2^3^4",
        "\\left( \\begin{matrix} a \\right) \\end{matrix}", "\\sqrt[\\left(]{x}", "%}", "\\%}",
        "\\text{\\}", "\\limits^2", "\\displaystyle", "{\\displaystyle}x"}) {
    CheckWellFormed(tex);
  }
}

TEST_CASE("math: nesting depth is bounded") {
  std::string deep(20000, '{');
  CheckWellFormed(deep);
  CheckWellFormed(deep + "x" + std::string(20000, '}'));
  std::string fracs;
  for (int i = 0; i < 3000; ++i) fracs += "\\frac";
  CheckWellFormed(fracs);
  std::string sups;
  for (int i = 0; i < 3000; ++i) sups += "x^{";
  CheckWellFormed(sups);
  std::string lefts;
  for (int i = 0; i < 3000; ++i) lefts += "\\left(\\begin{matrix}\\sqrt[";
  CheckWellFormed(lefts);
  std::string styles;
  for (int i = 0; i < 3000; ++i) styles += "\\displaystyle x \\not\\not";
  CheckWellFormed(styles);
  // 60 levels are fine; beyond the limit is an error, not a crash.
  CHECK(Body(std::string(60, '{') + "x" + std::string(60, '}')) == "<mi>x</mi>");
  CHECK(Body(std::string(80, '{') + "x" + std::string(80, '}')).find("nesting too deep") !=
        std::string::npos);
}

TEST_CASE("math: output grows linearly") {
  for (std::string unit : {"x^2+", "\\frac{a}{b}", "\\text{ab}", "\\alpha'", "x_1_2", "a&b\\\\"}) {
    std::string tex;
    while (tex.size() < 30000) tex += unit;
    std::string out = TexToMathml(tex, true);
    CHECK(out.size() < 40 * tex.size());
    CHECK(WellFormedError(out) == "");
  }
}

TEST_CASE("math: random TeX-ish input stays well-formed") {
  static const char* const kPieces[] = {
      "{", "}", "^", "_", "'", "&", "\\\\", "[", "]", "(", ")", "|", "x", "12", ".5", "+", "<", ">",
      "\"", " ", "%", "~", "\\", "\\frac", "\\sqrt", "\\left(", "\\right)", "\\left", "\\right",
      "\\middle|", "\\bigl[", "\\begin{pmatrix}", "\\end{pmatrix}", "\\begin{cases}",
      "\\end{cases}", "\\begin{array}{c|l}", "\\end{array}", "\\begin{", "\\end{", "\\text{",
      "\\mathbb", "\\mathrm{", "\\operatorname*{", "\\alpha", "\\sum", "\\int", "\\lim", "\\sin",
      "\\limits", "\\nolimits", "\\hat", "\\overbrace", "\\not", "\\foo", "\\displaystyle",
      "\\substack{", "\\hspace{", "\\binom", "\\{", "\\}", "\\,", "\\ ", "\xff", "\xce\xb1",
      "\xe2\x88\x91", "\x01", "\\pmod", "\\tag{", "\\\\[2pt]"};
  std::mt19937 rng(12345);
  std::uniform_int_distribution<size_t> piece(0, std::size(kPieces) - 1);
  std::uniform_int_distribution<int> length(0, 60);
  for (int n = 0; n < 2000; ++n) {
    std::string tex;
    for (int k = length(rng); k > 0; --k) tex += kPieces[piece(rng)];
    std::string out = TexToMathml(tex, n % 2 == 0);
    INFO("tex: " << tex << "\nout: " << out);
    REQUIRE(WellFormedError(out) == "");
  }
}

}  // TEST_SUITE("math")
