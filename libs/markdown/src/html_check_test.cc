// The fuzz target's HTML check (html_check.h) itself: it must pass what the
// renderer writes and catch every way script could get in, or the fuzzer's
// verdicts mean nothing.
#include "html_check.h"

#include <doctest/doctest.h>

#include "folio/markdown/render.h"

using folio::fuzz::CheckRenderedHtml;

namespace {

class Resolver final : public folio::markdown::LinkResolver {
 public:
  std::optional<std::string> Resolve(std::string_view target) override { return "/" + std::string(target); }
  std::optional<std::string> ResolveAttachment(std::string_view target) override {
    return "/assets/0123456789abcdef/" + std::string(target);
  }
};

}  // namespace

TEST_CASE("html check: the renderer's own output is clean") {
  Resolver resolver;
  folio::markdown::RenderOptions options;
  options.resolver = &resolver;
  const char* notes[] = {
      "# Title\n\nText with **bold**, [[Link|alias]], [ext](https://example.com \"t\") and `code <b>`.\n",
      "- [ ] task\n- [x] done\n\n| a | b |\n|:-|-:|\n| 1 | 2 |\n",
      "![[pic.png|200]] ![[doc.pdf]] ![[song.mp3]] ![[clip.mp4]] ![[file.zip]]\n",
      "> [!note] Title\n> body\n\nFootnote[^1].\n\n[^1]: the note\n",
      "$x^2 + \\frac{a}{b}$ and $$\\sqrt{x}$$\n\n```mermaid\ngraph TD; A-->B\n```\n",
      "<details open><summary>s</summary><b>raw</b> <img src=\"x.png\" alt=\"a\"></details>\n",
      "<script>alert(1)</script> <img src=x onerror=alert(1)> [x](javascript:alert(1))\n",
  };
  for (const char* note : notes) {
    auto r = folio::markdown::RenderNote(note, "n.md", options);
    INFO(note, "\n", r.html);
    CHECK(CheckRenderedHtml(r.html) == "");
  }
}

TEST_CASE("html check: catches script, handlers, dangerous URLs and broken markup") {
  struct Case {
    const char* html;
    const char* problem;  // a substring of the report
  };
  const Case cases[] = {
      {"<p>x</p><script>alert(1)</script>", "element <script>"},
      {"<SCRIPT>alert(1)</SCRIPT>", "element <script>"},
      {"<svg onload=alert(1)>", "element <svg>"},
      {"<img src=x onerror=alert(1)>", "event handler attribute onerror"},
      {"<img src=x ONERROR=\"alert(1)\">", "event handler attribute onerror"},
      {"<img/src/onerror=alert(1)>", "event handler attribute onerror"},
      {"<img src=\"x\"onerror=\"alert(1)\">", "event handler attribute onerror"},
      {"<a href=\"javascript:alert(1)\">x</a>", "javascript: URL in href"},
      {"<a href=\" JaVa&#x09;ScRiPt&colon;alert(1)\">x</a>", "javascript: URL in href"},
      {"<a href=\"&#106;avascript:alert(1)\">x</a>", "javascript: URL in href"},
      {"<a href=\"&#0000106avascript:alert(1)\">x</a>", "javascript: URL in href"},
      {"<a href=java&Tab;script:alert(1)>x</a>", "javascript: URL in href"},
      {"<a href='vbscript:msgbox(1)'>x</a>", "vbscript: URL in href"},
      {"<img src=\"data:image/svg+xml,<svg onload=alert(1)>\">", "data: URL in src"},
      {"<iframe src=\"https://evil.example/\"></iframe>", "<iframe> that is neither a PDF embed"},
      {"<iframe class=\"embed-pdf\" src=\"/assets/0123/x.pdf\" srcdoc=\"<script>alert(1)</script>\"></iframe>",
       "attribute srcdoc"},
      {"<div style=\"background:url(javascript:alert(1))\">x</div>", "style holding url("},
      {"<a xlink:href=\"javascript:alert(1)\">x</a>", "namespaced attribute"},
      {"<input type=\"text\" autofocus>", "<input> that is not a task checkbox"},
      {"<!-- x --><p>", "markup declaration"},
      {"<p title=\"unterminated>", "not closed before the end"},
      {"<p", "not closed before the end"},
      {"</p x", "not closed before the end"},
      {"text </ b>", "'</' not followed by a tag name"},
      // A quoted '>' does not end the tag; what follows is still inside it.
      {"<p title=\">\" onclick=\"alert(1)\">", "event handler attribute onclick"},
  };
  for (const auto& c : cases) {
    std::string report = CheckRenderedHtml(c.html);
    INFO(std::string(c.html), " -> ", report);
    CHECK(report.find(c.problem) != std::string::npos);
  }
  // Escaped markup and plain text are fine.
  CHECK(CheckRenderedHtml("&lt;script&gt;alert(1)&lt;/script&gt; a < b <p title=\"javascript:x\">t</p>") == "");
  CHECK(CheckRenderedHtml("<a href=\"/javascript:x\">x</a><a href=\"javascript%3Ax\">y</a>") == "");
}
