// FastRules (highlight_rule.h) and the per-line cache must colour exactly as
// Source-highlight's own rules do: each snippet is highlighted both ways and
// compared byte for byte. The snippets aim at what the shortcuts assume:
// matches remembered across a line (\b at a token's start, a keyword right
// after punctuation), states open across lines (comments, strings,
// here-documents whose end marker is taken from the match), repeated lines
// inside and outside such states, CR, tabs and UTF-8.
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include "highlight.h"

using folio::markdown::HighlightCodeWithRules;

namespace {

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("FastRules and the line cache colour exactly as Source-highlight's own rules") {
  const std::pair<const char*, const char*> cases[] = {
      // After /a/gi a search starts at "for" and sees no word character
      // before it, so Source-highlight colours "for" as a keyword.
      {"js", "x = /a/gifor; y = /b/min;\n"},
      {"js", "x = 5in y; z = 0x1Fif;\n"},
      {"js", "const x = 5;\nconsole.log(x * 2);\nconsole.log(x * 2);\n"},
      {"js", "a = b / c / d; r = /ab+c/gi.test(s); x++ / 2;\nif(x5&&y){return\"s\\\"q\"+'t'}\n"},
      {"js", "/* open\n}\nconsole.log(x * 2);\nstill */ }\n}\nconsole.log(x * 2);\n"},
      {"c", "int x5=0x1F,y=x5+5e3;/*a*/int/**/z;// end\n#include <stdio.h>\n\tif(a)b();\r\n}\r\n"},
      {"cpp", "auto s = R\"(raw \" text)\"; std::string t{\"é ü\"}; template<class T> T f(T);\n"},
      {"python", "def f(x):\n    \"\"\"doc\n    def inside():\n    \"\"\"\n    def inside():\n    return x\n"},
      {"python", "s = 'a' 'b' r'\\d' f\"{x}\"  # comment\nclass A(B): pass\n"},
      {"perl", "my $x = <<EOT;\nmy $y = 1;\nEOT\nmy $y = 1;\nprint \"$x\\n\" if $x =~ /a.b/;\n"},
      {"sh", "cat <<EOF\nif true; then\nEOF\nif true; then echo \"$HOME\"; fi # c\n"},
      {"sql", "SELECT a, 'x''y' FROM t WHERE b = 1; -- c\nselect * from T;\n"},
      {"html", "<p class=\"a\">x &amp; y</p>\n<script>var a = 1;</script>\n<!-- c\n<p>\n-->\n<p>\n"},
      {"css", "a:hover { color: #fff; }\n/* a { */\na { margin: 0 }\n"},
      {"diff", "--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n"},
      {"makefile", "CC = gcc\nall: $(OBJ)\n\t$(CC) -o $@ $^\n"},
      {"ruby", "def f; puts \"#{x}\"; end # c\n=begin\ndef f; end\n=end\ndef f; end\n"},
      {"rust", "let a = r\"x\"; let b = br\"y\"; for\"z\"; fn f() -> u8 { b'c' }\n"},  // a lookbehind: searched afresh
      {"go", "func main() { x := `raw\nfunc main() {\n` }\nfunc main() {\n"},
  };
  for (const auto& [lang, code] : cases) {
    std::string name = lang;
    CAPTURE(name);
    CAPTURE(code);
    const auto fast = HighlightCodeWithRules(lang, code, true);
    const auto plain = HighlightCodeWithRules(lang, code, false);
    REQUIRE(plain.has_value());
    CHECK(fast == plain);
    CHECK(HighlightCodeWithRules(lang, code, true) == plain);  // again: every line now in the line cache
  }
}

TEST_CASE("a line cached outside a comment is coloured as comment inside one") {
  const std::string out = HighlightCodeWithRules("c", "}\n/*\n}\n*/\n}\n", true).value();
  CHECK(out == "}\n<span class=\"hl-comment\">/*</span>\n<span class=\"hl-comment\">}</span>\n"
               "<span class=\"hl-comment\">*/</span>\n}\n");
  // The library's regexes, not a simplification, decide: a number glued to
  // a word is no number, in either mode.
  for (bool fast : {true, false}) {
    CHECK(!Contains(HighlightCodeWithRules("js", "x5 = a5;\n", fast).value(), "hl-number"));
    CHECK(Contains(HighlightCodeWithRules("js", "x = 5;\n", fast).value(), "<span class=\"hl-number\">5</span>"));
  }
}

TEST_CASE("diff, yaml and JSON keys are coloured (issue 28)") {
  using folio::markdown::HighlightCode;
  // diff without a file header, as snippets usually are.
  CHECK(HighlightCode("diff", "@@ -1,2 +1,2 @@\n-old\n+new\n same\n").value() ==
        "<span class=\"hl-comment\">@@ -1,2 +1,2 @@</span>\n<span class=\"hl-deleted\">-old</span>\n"
        "<span class=\"hl-inserted\">+new</span>\n same\n");
  CHECK(HighlightCode("patch", "--- a/x\n+++ b/x\n").value() ==
        "<span class=\"hl-preproc\">--- a/x</span>\n<span class=\"hl-preproc\">+++ b/x</span>\n");
  // yaml: keys, strings, numbers, constants, comments, block scalars.
  CHECK(HighlightCode("yaml", "name: \"folio\" # the app\nport: 8080\nlist:\n  - on: true\n  - 'x'\n").value() ==
        "<span class=\"hl-type\">name</span>: <span class=\"hl-string\">&quot;folio&quot;</span> "
        "<span class=\"hl-comment\"># the app</span>\n"
        "<span class=\"hl-type\">port</span>: <span class=\"hl-number\">8080</span>\n"
        "<span class=\"hl-type\">list</span>:\n"
        "  - <span class=\"hl-type\">on</span>: <span class=\"hl-keyword\">true</span>\n"
        "  - <span class=\"hl-string\">&#39;x&#39;</span>\n");
  CHECK(HighlightCode("yml", "# c\n---\nrun: |\n  a: b\n  c\nnext: plain text\n").value() ==
        "<span class=\"hl-comment\"># c</span>\n<span class=\"hl-preproc\">---</span>\n"
        "<span class=\"hl-type\">run</span>: |\n<span class=\"hl-string\">  a: b</span>\n"
        "<span class=\"hl-string\">  c</span>\n<span class=\"hl-type\">next</span>: plain text\n");
  CHECK(HighlightCode("yaml", "url: http://x.y:80/a#b\n").value() ==
        "<span class=\"hl-type\">url</span>: http://x.y:80/a#b\n");
  // json: keys are not strings.
  std::string json = HighlightCode("json", "{\"name\": \"folio\", \"n\": 1}\n").value();
  CHECK(Contains(json, "<span class=\"hl-type\">&quot;name&quot;</span>"));
  // The library's JSON rule takes the space before a value's quote with it.
  CHECK(Contains(json, "<span class=\"hl-string\"> &quot;folio&quot;</span>"));
  CHECK(Contains(json, "<span class=\"hl-number\">1</span>"));
}
