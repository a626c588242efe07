// CommonMark 0.31.2 examples folio once rendered differently from the spec
// for no reason of its own (issue 28): character references from HTML5's
// whole list, in text and in every attribute; an image inside an image's
// text; '$' inside an HTML block. Inputs and outputs are the spec's, with
// folio's deliberate differences spelled out where they apply (raw HTML is
// re-emitted canonically by the sanitiser; relative links go through the
// resolver).
#include <doctest/doctest.h>

#include "folio/markdown/render.h"

using namespace folio::markdown;

namespace {

// Knows one note, "foo bä" (example 505's destination, decoded).
class OneNote : public LinkResolver {
 public:
  std::optional<std::string> Resolve(std::string_view target) override {
    asked.emplace_back(target);
    if (target == "foo b\xC3\xA4") return std::string("/foo-b\xC3\xA4");
    return std::nullopt;
  }
  std::vector<std::string> asked;
};

std::string Cm(std::string_view md, LinkResolver* resolver = nullptr) {
  RenderOptions opts;
  opts.strict_line_breaks = true;  // CommonMark's soft breaks
  opts.resolver = resolver;
  return RenderNote(md, "Here.md", opts).html;
}

}  // namespace

TEST_CASE("CommonMark 25: every HTML5 entity name decodes, two-code-point ones too") {
  CHECK(Cm("&nbsp; &amp; &copy; &AElig; &Dcaron;\n&frac34; &HilbertSpace; &DifferentialD;\n"
           "&ClockwiseContourIntegral; &ngE;\n") ==
        "<p>\xC2\xA0 &amp; \xC2\xA9 \xC3\x86 \xC4\x8E\n\xC2\xBE \xE2\x84\x8B \xE2\x85\x86\n"
        "\xE2\x88\xB2 \xE2\x89\xA7\xCC\xB8</p>\n");
}

TEST_CASE("CommonMark 28 and 30: what is no reference stays text") {
  CHECK(Cm("&nbsp &x; &#; &#x;\n&#87654321;\n&#abcdef0;\n&ThisIsNotDefined; &hi?;\n") ==
        "<p>&amp;nbsp &amp;x; &amp;#; &amp;#x;\n&amp;#87654321;\n&amp;#abcdef0;\n"
        "&amp;ThisIsNotDefined; &amp;hi?;</p>\n");
  CHECK(Cm("&MadeUpEntity;\n") == "<p>&amp;MadeUpEntity;</p>\n");
}

TEST_CASE("CommonMark 31 and 632: references in raw HTML attributes") {
  // The spec passes raw HTML through verbatim; the sanitiser writes the
  // decoded value (the same attribute to a browser): "öö.html".
  CHECK(Cm("<a href=\"&ouml;&ouml;.html\">\n") == "<a href=\"\xC3\xB6\xC3\xB6.html\">\n</a>");
  CHECK(Cm("foo <a href=\"&ouml;\">\n") == "<p>foo <a href=\"\xC3\xB6\"></a></p>\n");
}

TEST_CASE("CommonMark 32 and 33: references in a link's destination and title") {
  const std::string want = "<p><a href=\"/f%C3%B6%C3%B6\" title=\"f\xC3\xB6\xC3\xB6\">foo</a></p>\n";
  CHECK(Cm("[foo](/f&ouml;&ouml; \"f&ouml;&ouml;\")\n") == want);
  CHECK(Cm("[foo]\n\n[foo]: /f&ouml;&ouml; \"f&ouml;&ouml;\"\n") == want);
}

TEST_CASE("CommonMark 34: references in a fence's info string") {
  CHECK(Cm("``` f&ouml;&ouml;\nfoo\n```\n") == "<pre><code class=\"language-f\xC3\xB6\xC3\xB6\">foo\n</code></pre>\n");
}

TEST_CASE("CommonMark 505: a destination is looked up decoded") {
  OneNote vault;
  // The spec's href is "foo%20b%C3%A4"; folio resolves the relative link
  // in the vault, where the percent- and entity-decoded name is found.
  std::string html = Cm("[link](foo%20b&auml;)\n", &vault);
  CHECK(html == "<p><a href=\"/foo-b%C3%A4\" class=\"internal-link\">link</a></p>\n");
  REQUIRE(!vault.asked.empty());
  CHECK(vault.asked.front() == "foo b\xC3\xA4");
}

TEST_CASE("CommonMark 576: an image in an image's text keeps its alt") {
  CHECK(Cm("![foo ![bar](/url)](/url2)\n") == "<p><img src=\"/url2\" alt=\"foo bar\"></p>\n");
}

TEST_CASE("CommonMark 171: '$' inside an HTML block stays as written") {
  CHECK(Cm("<div>\nprice $5 or $6\n</div>\n") == "<div>\nprice $5 or $6\n</div>\n");
  // Still math outside it, and after the block ends at a blank line.
  std::string after = Cm("<div>\n$5\n</div>\n\nmath $x$ here\n");
  CHECK(after.find("<div>\n$5\n</div>\n") == 0);
  CHECK(after.find("<math") != std::string::npos);
  // A <span> line after a paragraph line is inline HTML, not a block.
  CHECK(Cm("costs\n<span>x</span> $5 and $6\n").find("\\$") == std::string::npos);
}
