// Hostile notes (issue 22): deep nesting of every construct that nests, and
// the long runs that used to make a render quadratic. Each is rendered on a
// thread with a small stack (folio/testing/small_stack.h), so a recursion
// without a bound crashes here at a few hundred levels; each must finish,
// give clean HTML and, where a bound applies, say so in a warning. The time
// limit is a hang guard, hundreds of times what a render takes (the figures
// are in README's "Reliability and security"), not a speed test.
#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "folio/markdown/frontmatter.h"
#include "folio/markdown/render.h"
#include "folio/testing/small_stack.h"
#include "html_check.h"
#include "sanitize_internal.h"

using namespace folio::markdown;

namespace {

std::string Rep(std::string_view s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out.append(s);
  return out;
}

std::string Lines(size_t n, const std::function<std::string(size_t)>& line) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += line(i) + "\n";
  return out;
}

constexpr double kHangSeconds = 60;

RenderResult RenderSmall(const std::string& src, const RenderOptions& options = {}) {
  RenderResult r;
  auto start = std::chrono::steady_clock::now();
  folio::testing::RunOnSmallStack([&] { r = RenderNote(src, "deep.md", options); });
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK_MESSAGE(took < kHangSeconds, "rendering took " << took << " s");
  CHECK(folio::fuzz::CheckRenderedHtml(r.html) == "");
  return r;
}

bool HasWarning(const RenderResult& r, std::string_view part) {
  for (const std::string& w : r.warnings) {
    if (w.find(part) != std::string::npos) return true;
  }
  return false;
}

size_t Count(std::string_view hay, std::string_view needle) {
  size_t n = 0;
  for (size_t i = hay.find(needle); i != std::string_view::npos; i = hay.find(needle, i + needle.size())) ++n;
  return n;
}

struct Case {
  const char* name;
  std::string source;
};

// Each ~0.1-2 MB (a note may be 4 MiB): CommonMark's pathological inputs
// (cmark's test/pathological_tests.py) and Obsidian's own syntax.
std::vector<Case> HostileNotes() {
  const size_t n = 100'000;
  return {
      {"nested inline footnotes", Rep("^[", n) + "x" + Rep("]", n)},
      {"unclosed inline footnotes", Rep("^[", n)},
      {"nested strong emphasis", Rep("*a **a ", n / 10) + "b" + Rep(" a** a*", n / 10)},
      {"emphasis closers without openers", Rep("a_ ", n)},
      {"emphasis openers without closers", Rep("_a ", n)},
      {"mismatched emphasis", Rep("*a_ ", n)},
      {"emphasis runs of multiples of 3", "a**b" + Rep("c* ", n)},
      {"link closers without openers", Rep("a]", n)},
      {"link openers without closers", Rep("[a", n)},
      {"link openers and emphasis closers", Rep("[ a_", n)},
      {"nested brackets", Rep("[", n) + "a" + Rep("]", n)},
      {"nested links", Rep("[", n) + "x" + Rep("](u)", n)},
      {"nested images", Rep("![", n) + "x" + Rep("](u)", n)},
      {"unclosed link destinations", Rep("[a](<b", n)},
      {"unclosed link destinations, plain", Rep("[a](b", n)},
      {"nested wikilinks", Rep("[[", n) + "x" + Rep("]]", n)},
      {"nested embeds", Rep("![[", n) + "x" + Rep("]]", n)},
      {"unclosed wikilinks", Rep("[[a ", n)},
      {"nested block quotes", Rep("> ", n) + "a"},
      {"nested lists", Lines(1000, [](size_t i) { return std::string(i * 2, ' ') + "- a"; })},
      {"nested ordered lists", Lines(1000, [](size_t i) { return std::string(i * 3, ' ') + "1. a"; })},
      {"nested callouts", Lines(1000, [](size_t i) { return Rep("> ", i) + "> [!note] t"; })},
      {"nested quotes and lists", Rep("> - ", n) + "x"},
      {"NUL bytes", Rep(std::string("abc\0de\0", 7), n)},
      {"backtick runs of every length", Lines(1400, [](size_t i) { return Rep("`", i + 1) + "a"; })},
      {"unclosed code spans on one line", Rep("`a ", n)},
      {"many references", Lines(n / 4, [](size_t i) { return "[r" + std::to_string(i) + "]: /u"; }) +
                              Lines(n / 4, [](size_t i) { return "[r" + std::to_string(i) + "]"; })},
      {"nested math groups", "$" + Rep("{", n) + "x" + Rep("}", n) + "$"},
      {"nested fractions", "$$" + Rep("\\frac{", n) + "x" + Rep("}{y}", n) + "$$"},
      {"nested \\left", "$" + Rep("\\left(", n / 10) + "x" + Rep("\\right)", n / 10) + "$"},
      {"nested superscripts", "$" + Rep("x^{", n) + "x" + Rep("}", n) + "$"},
      {"unclosed inline math", Rep("$a ", n)},
      {"unclosed display math", Rep("$$a ", n)},
      {"nested divs", "<div>\n" + Rep("<div>", n) + "x" + Rep("</div>", n) + "\n</div>"},
      {"nested spans", "a " + Rep("<span>", n) + "x" + Rep("</span>", n)},
      {"unmatched end tags", "a " + Rep("<span>", 300) + Rep("</div>", n)},
      {"nested comments", Rep("<!--", n) + Rep("-->", n)},
      {"unclosed highlights", Rep("==a ", n)},
      {"highlights around emphasis", Rep("*==a ", n) + Rep("*", n)},
      {"equal headings", Rep("# a\n", n)},
      {"footnote definitions and references",
       Lines(n / 4, [](size_t i) { return "[^" + std::to_string(i) + "]: d"; }) +
           Lines(n / 4, [](size_t i) { return "x[^" + std::to_string(i) + "]"; })},
      {"distinct tags", Lines(n, [](size_t i) { return "#t" + std::to_string(i); })},
      {"comments", Rep("%%a ", n)},
      {"a highlighted fence of nested brackets", "```cpp\n" + Rep("{(", n) + "\n```"},
      {"a highlighted fence of nested comments (Haskell)", "```haskell\n" + Rep("{- ", n) + "\n```"},
      {"a highlighted fence of nested comments (OCaml)", "```ocaml\n" + Rep("(* ", n) + "\n" + Rep("*) ", n) + "\n```"},
      {"a highlighted fence of nested lists (Lisp)", "```lisp\n" + Rep("(", n) + Rep(")", n) + "\n```"},
      {"a highlighted fence of nested strings (Lua)", "```lua\n" + Rep("[[ ", n) + "\n```"},
      {"a highlighted fence of nested groups (LaTeX)", "```latex\n" + Rep("{", n) + Rep("}", n) + "\n```"},
      {"highlighted fences of long lines of nested groups (LaTeX)",
       Rep("```latex\n" + Lines(250, [](size_t) { return Rep("{", 499) + Rep("}", 499); }) + "```\n\n", 8)},
      {"wide table", "|" + Rep("a|", n / 10) + "\n|" + Rep("-|", n / 10) + "\n|" + Rep("b|", n / 10)},
      {"frontmatter flow nesting", "---\na: " + Rep("[", n) + Rep("]", n) + "\n---\nx"},
      {"frontmatter map nesting", "---\na: " + Rep("{b: ", n) + "1" + Rep("}", n) + "\n---\nx"},
      {"frontmatter block nesting", "---\n" + Lines(600, [](size_t i) { return std::string(i, ' ') + "a:"; }) + "---\nx"},
      {"frontmatter sequence of sequences", "---\na:\n" + Rep("- ", n) + "x\n---\nx"},
      {"frontmatter tags", "---\ntags:\n" + Lines(n, [](size_t i) { return "  - t" + std::to_string(i); }) + "---\nx"},
      {"frontmatter keys", "---\n" + Lines(n, [](size_t i) { return "k" + std::to_string(i) + ": v"; }) + "---\nx"},
  };
}

}  // namespace

TEST_CASE("limits: hostile notes render on a small stack, in bounded time, to clean HTML (issue 22)") {
  for (const Case& c : HostileNotes()) {
    CAPTURE(c.name);
    CAPTURE(c.source.size());
    RenderSmall(c.source);
  }
}

TEST_CASE("limits: the reported note, 5,000 nested inline footnotes, renders with a warning (issue 22)") {
  RenderResult r = RenderSmall(Rep("^[", 5000) + "x" + Rep("]", 5000));
  CHECK(HasWarning(r, "footnotes nested more than 16 levels deep"));
  // Renders at depths 0..15 each turn their "^[" into a footnote; the
  // deepest one's footnote is its text as written.
  CHECK(Count(r.html, "class=\"footnote-ref\"") == kMaxRenderDepth);
  CHECK(r.html.find("^[^[^[") != std::string::npos);
}

TEST_CASE("limits: footnotes nested within the bound all render") {
  RenderResult r = RenderSmall(Rep("^[", 5) + "x" + Rep("]", 5));
  CHECK(r.warnings.empty());
  CHECK(Count(r.html, "class=\"footnote-ref\"") == 5);
}

namespace {

// Embeds every "self" note as the note being rendered, with no cycle check:
// only the renderer's own bounds stop it.
class SelfEmbedder : public LinkResolver {
 public:
  explicit SelfEmbedder(std::string source) : source_(std::move(source)) {}
  std::optional<std::string> Resolve(std::string_view) override { return "/self"; }
  std::optional<std::string> EmbedNote(std::string_view, std::string_view, const RenderOptions& nested) override {
    ++calls;
    max_depth = std::max(max_depth, nested.depth);
    RenderOptions opts = nested;
    opts.resolver = this;
    return RenderNote(source_, "self.md", opts).html;
  }
  int calls = 0;
  int max_depth = 0;

 private:
  std::string source_;
};

}  // namespace

TEST_CASE("limits: an embed chain stops at the depth bound, shown as a link") {
  SelfEmbedder self("a\n\n![[self]]\n");
  RenderOptions opts;
  opts.resolver = &self;
  RenderResult r = RenderSmall("a\n\n![[self]]\n", opts);
  CHECK(self.max_depth == kMaxRenderDepth - 1);
  CHECK(HasWarning(r, "embeds nested more than 16 levels deep"));
  CHECK(Count(r.html, "class=\"embed markdown-embed\"") == static_cast<size_t>(kMaxRenderDepth - 1));
}

TEST_CASE("limits: fan-out of embeds stops at the page's budget, however it nests") {
  // Each level embeds itself ten times: 10^15 renders without the budget.
  std::string note = Rep("![[self]]\n\n", 10);
  SelfEmbedder self(note);
  RenderOptions opts;
  opts.resolver = &self;
  RenderResult r = RenderSmall(note, opts);
  CHECK(self.calls == static_cast<int>(kMaxPageEmbeds));
  CHECK(HasWarning(r, "more than 1000 note embeds on one page"));
}

TEST_CASE("limits: embedded HTML is bounded per page") {
  // Each embed returns ~1 MiB: the page takes 16 MiB of them, then links.
  struct Big : LinkResolver {
    std::optional<std::string> Resolve(std::string_view) override { return "/big"; }
    std::optional<std::string> EmbedNote(std::string_view, std::string_view, const RenderOptions&) override {
      ++calls;
      return "<p>" + std::string(1 << 20, 'x') + "</p>";
    }
    int calls = 0;
  } big;
  RenderOptions opts;
  opts.resolver = &big;
  RenderResult r = RenderSmall(Rep("![[big]]\n\n", 40), opts);
  CHECK(big.calls == 16);
  CHECK(HasWarning(r, "more than 16 MiB of embedded notes on one page"));
}

TEST_CASE("limits: the sanitiser keeps at most kMaxOpenElements elements open") {
  RenderResult r = RenderSmall("<div>\n" + Rep("<div>", 1000) + "x" + Rep("</div>", 1000) + "\n</div>");
  CHECK(Count(r.html, "<div>") <= kMaxOpenElements + 1);
  CHECK(Count(r.html, "<div>") == Count(r.html, "</div>"));
  CHECK(r.text.find('x') != std::string::npos);
}

TEST_CASE("limits: fences are highlighted up to a line length and a share per note") {
  std::string fence = "```cpp\nint x = 1;\n```\n\n";
  RenderResult ok = RenderSmall(fence);
  CHECK(ok.html.find("hl-type") != std::string::npos);
  RenderResult long_line = RenderSmall("```cpp\nint x = 1; // " + std::string(1000, 'c') + "\n```\n");
  CHECK(long_line.html.find("hl-") == std::string::npos);
  // 1 MiB of fences (five of 220 KB), then plain: the last stays uncoloured.
  std::string big = "```cpp\n" + Lines(20000, [](size_t) { return "int a = 1;"; }) + "```\n\n";
  RenderResult share = RenderSmall(Rep(big, 5) + fence);
  std::string_view tail = std::string_view(share.html).substr(share.html.rfind("<pre>"));
  CHECK(tail.find("hl-") == std::string_view::npos);
  CHECK(share.html.find("hl-type") < 100);
}

TEST_CASE("limits: equal headings get unique ids in linear time") {
  RenderResult r = RenderSmall(Rep("# a\n", 20000) + "# a-1\n");
  std::set<std::string> ids;
  for (const Heading& h : r.headings) ids.insert(h.id);
  CHECK(ids.size() == r.headings.size());
  CHECK(r.headings[1].id == "a-1");
  CHECK(r.headings.back().id == "a-1-1");
}

TEST_CASE("limits: at most kMaxOpenMarks highlights are open at once; closed ones are unlimited") {
  RenderResult open = RenderSmall(Rep("==a ", 1000));
  CHECK(Count(open.html, "<mark>") == 0);  // never closed: all back to "=="
  RenderResult closed = RenderSmall(Rep("==a== ", 1000));
  CHECK(Count(closed.html, "<mark>") == 1000);
}

TEST_CASE("limits: frontmatter nested too deep is refused with its line, the note still renders") {
  Frontmatter flow = ParseFrontmatter("---\ntitle: T\na: " + Rep("[", 65) + Rep("]", 65) + "\n---\nbody");
  CHECK(flow.error == "frontmatter line 3: nested more than 64 brackets or 256 columns deep; frontmatter is ignored");
  CHECK(flow.title.empty());
  Frontmatter ok = ParseFrontmatter("---\ntitle: T\na: " + Rep("[", 64) + Rep("]", 64) + "\n---\nbody");
  CHECK(ok.error.empty());
  CHECK(ok.title == "T");
  // Brackets inside quoted scalars and comments are text.
  Frontmatter quoted = ParseFrontmatter("---\ntitle: \"" + Rep("[", 100) + "\" # " + Rep("{", 100) + "\n---\nx");
  CHECK(quoted.error.empty());
  CHECK(quoted.title == Rep("[", 100));
  Frontmatter dashes = ParseFrontmatter("---\na:\n" + Rep("- ", 200) + "x\n---\nx");
  CHECK(dashes.error.find("frontmatter line 3: nested") == 0);
  RenderResult r = RenderSmall("---\na: " + Rep("[", 5000) + "\n---\nbody");
  CHECK(r.html == "<p>body</p>\n");
  CHECK(HasWarning(r, "nested more than 64 brackets"));
}
