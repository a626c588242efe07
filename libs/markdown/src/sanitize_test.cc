// The sanitiser and an XSS corpus run through both SanitizeHtml and RenderNote.
#include <doctest/doctest.h>

#include <cctype>

#include "folio/core/text.h"
#include "folio/markdown/render.h"
#include "folio/markdown/sanitize.h"
#include "sanitize_internal.h"

using namespace folio::markdown;

namespace {

std::string Sanitize(std::string_view raw) {
  std::string out;
  SanitizeHtml(raw, &out);
  return out;
}

std::string Lower(std::string_view s) { return folio::AsciiLower(s); }

// A decoded URL as a browser would see it: entities decoded, whitespace and
// controls removed, lower-cased.
std::string Squash(std::string_view v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '&') {
      size_t semi = v.find(';', i);
      if (semi != std::string_view::npos) {
        std::string_view ref = v.substr(i, semi + 1 - i);
        if (ref == "&amp;") out += '&';
        else if (ref == "&quot;") out += '"';
        else if (ref == "&#39;") out += '\'';
        else if (ref == "&lt;") out += '<';
        else if (ref == "&gt;") out += '>';
        else out += ref;  // our output only ever contains the five above in attributes
        i = semi;
        continue;
      }
    }
    if (static_cast<unsigned char>(v[i]) > 0x20) out += static_cast<char>(std::tolower(v[i]));
  }
  return out;
}

// Scans the real tags of `html` (text was escaped, so every '<' opens a tag)
// and checks that none can run script. `rendered`: the output of RenderNote,
// which may hold the embeds we emit (<iframe class="embed-pdf">) and, when
// `has_math`, the MathML of $..$ spans.
void CheckSafe(const std::string& html, const std::string& input, bool rendered = false,
               bool has_math = false) {
  INFO("input: " << input);
  INFO("output: " << html);
  std::string lower = Lower(html);
  for (const char* bad : {"<script", "<object", "<embed", "<svg", "<style", "<base", "<form",
                          "<meta", "<link", "<input type=\"text", "<frame"}) {
    CHECK(lower.find(bad) == std::string::npos);
  }
  if (!has_math) CHECK(lower.find("<math") == std::string::npos);
  for (size_t f = lower.find("<iframe"); f != std::string::npos; f = lower.find("<iframe", f + 1)) {
    CHECK(rendered);
    constexpr std::string_view kPdf = "<iframe class=\"embed-pdf\" src=\"/";
    constexpr std::string_view kYouTube = "<iframe class=\"embed-video\" src=\"https://www.youtube-nocookie.com/embed/";
    constexpr std::string_view kVimeo = "<iframe class=\"embed-video\" src=\"https://player.vimeo.com/video/";
    CHECK((html.compare(f, kPdf.size(), kPdf) == 0 || html.compare(f, kYouTube.size(), kYouTube) == 0 ||
           html.compare(f, kVimeo.size(), kVimeo) == 0));
  }
  size_t i = 0;
  while ((i = html.find('<', i)) != std::string::npos) {
    size_t j = i + 1;
    while (j < html.size() && html[j] != '>' && !std::isspace(static_cast<unsigned char>(html[j]))) ++j;
    while (j < html.size() && html[j] != '>') {
      while (j < html.size() && std::isspace(static_cast<unsigned char>(html[j]))) ++j;
      size_t n = j;
      while (j < html.size() && html[j] != '=' && html[j] != '>' && !std::isspace(static_cast<unsigned char>(html[j]))) ++j;
      std::string name = Lower(std::string_view(html).substr(n, j - n));
      std::string value;
      if (j < html.size() && html[j] == '=') {
        ++j;
        REQUIRE(j < html.size());
        CHECK(html[j] == '"');  // every attribute value we write is double-quoted
        size_t close = html.find('"', j + 1);
        REQUIRE(close != std::string::npos);
        value = html.substr(j + 1, close - j - 1);
        j = close + 1;
      }
      CHECK_MESSAGE(name.rfind("on", 0) != 0, "event handler attribute " << name);
      if (name == "style") {  // only the safe subset survives (sanitize.cc SafeStyle)
        std::string v = Lower(value);
        for (const char* bad : {"url(", "expression", "\\", "@", "/*", "position", "behavior", "binding", "import"}) {
          CHECK_MESSAGE(v.find(bad) == std::string::npos, "style holding " << bad);
        }
      }
      CHECK(name != "srcdoc");
      CHECK(name != "formaction");
      if (name == "href" || name == "src" || name == "action" || name == "xlink:href") {
        std::string v = Squash(value);
        CHECK(v.rfind("javascript:", 0) != 0);
        CHECK(v.rfind("vbscript:", 0) != 0);
        CHECK(v.rfind("data:", 0) != 0);
        CHECK(v.rfind("file:", 0) != 0);
        // Whatever scheme a browser would see must be on the list.
        size_t k = 0;
        while (k < v.size() && (std::isalnum(static_cast<unsigned char>(v[k])) || v[k] == '+' ||
                                v[k] == '-' || v[k] == '.')) {
          ++k;
        }
        if (k > 0 && k < v.size() && v[k] == ':' && std::isalpha(static_cast<unsigned char>(v[0]))) {
          std::string scheme = v.substr(0, k);
          CHECK_MESSAGE((scheme == "http" || scheme == "https" || scheme == "mailto"), scheme);
        }
      }
    }
    i = j;
  }
}

const char* const kXss[] = {
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    "<scr<script>ipt>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<img src=\"x\" onerror=\"alert(1)\">",
    "<IMG SRC=\"javascript:alert('XSS');\">",
    "<img src=JaVaScRiPt:alert(1)>",
    "<img src=\"jav&#x09;ascript:alert(1)\">",
    "<img src=\"jav\tascript:alert(1)\">",
    "<img src=\"&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1)\">",
    "<img src=\"&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A;alert(1)\">",
    "<img/src=x/onerror=alert(1)>",
    "<img src=x\nonerror\n=\nalert(1)>",
    "<img src=x onerror  =  alert(1) >",
    "<img \"\"\"><script>alert(1)</script>\">",
    "<svg onload=alert(1)>",
    "<svg><script>alert(1)</script></svg>",
    "<iframe src=\"javascript:alert(1)\"></iframe>",
    "<iframe srcdoc=\"<script>alert(1)</script>\">",
    "<object data=\"javascript:alert(1)\"></object>",
    "<embed src=\"data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==\">",
    "<style>body{background:url(javascript:alert(1))}</style>",
    "<div style=\"background:url(javascript:alert(1))\">x</div>",
    "<a href=\"javascript:alert(1)\">x</a>",
    "<a href=\" javascript:alert(1)\">x</a>",
    "<a href=\"\x01javascript:alert(1)\">x</a>",
    "<a href=\"java&#x0A;script:alert(1)\">x</a>",
    "<a href=\"javascript&colon;alert(1)\">x</a>",
    "<a href=\"vbscript:msgbox(1)\">x</a>",
    "<a href=\"data:text/html,<script>alert(1)</script>\">x</a>",
    "<a href=\"file:///etc/passwd\">x</a>",
    "<a href='javascript:alert(1)' onmouseover='alert(2)'>x</a>",
    "<a href=javascript:alert(1)>x</a>",
    "<a\nhref=\"javascript:alert(1)\">x</a>",
    "<body onload=alert(1)>",
    "<details open ontoggle=alert(1)>",
    "<p onclick=\"alert(1)\"/>",
    "<div/onmouseover='alert(1)'>x",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "<form action=\"javascript:alert(1)\"><input type=submit>",
    "<meta http-equiv=\"refresh\" content=\"0;url=javascript:alert(1)\">",
    "<base href=\"javascript:alert(1)//\">",
    "<link rel=stylesheet href=\"javascript:alert(1)\">",
    "<img src=x onerror=alert(1)",
    "<script",
    "<!--<script>alert(1)</script>-->",
    "<!-- --!><script>alert(1)</script> -->",
    "<![CDATA[<script>alert(1)</script>]]>",
    "<a href=\"#\" onclick=alert(1)>x</a>",
    "<textarea><script>alert(1)</script></textarea>",
    "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\">",
    "<xmp><script>alert(1)</script></xmp>",
    "<plaintext><script>alert(1)</script>",
};

const char* const kMarkdownXss[] = {
    "[x](javascript:alert(1))",
    "[x](JaVaScRiPt:alert(1))",
    "[x](jav&#x09;ascript:alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x](javascript&colon;alert(1))",
    "[x](<javascript:alert(1)>)",
    "[x](vbscript:msgbox(1))",
    "[x](data:text/html;base64,PHNjcmlwdD4=)",
    "[x](file:///etc/passwd)",
    "[x][r]\n\n[r]: javascript:alert(1)",
    "![x](javascript:alert(1))",
    "![x](data:image/svg+xml;base64,PHN2Zz4=)",
    "<javascript:alert(1)>",
    "[x](\"onmouseover=alert(1))",
    "[x](https://ok.example \"\\\" onmouseover=alert(1)\")",
    "![a\" onerror=\"alert(1)](x.png)",
    "[[x\" onmouseover=\"alert(1)]]",
    "[[javascript:alert(1)]]",
    "![[x\" onerror=\"alert(1).png]]",
    "```js\" onclick=\"alert(1)\nx\n```",
    "<div>\n<script>alert(1)</script>\n</div>",
    "<img src=x\nonerror=alert(1)>",
    "text <img src=x onerror=alert(1)> text",
    "$<script>alert(1)</script>$",
    "`<script>alert(1)</script>`",
};

// More filter-evasion vectors (OWASP XSS filter evasion cheat sheet and
// mutation-XSS write-ups), for the sanitiser hardening issue.
const char* const kMoreXss[] = {
    "<svg/onload=alert(1)>",
    "<svg><animate onbegin=alert(1) attributeName=x dur=1s>",
    "<svg><a xlink:href=\"javascript:alert(1)\"><text>x</text></a></svg>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "<math href=\"javascript:alert(1)\">x</math>",
    "<a href=\"jav&#x0A;ascript:alert(1)\">x</a>",
    "<a href=\"jav&#x0D;ascript:alert(1)\">x</a>",
    "<a href=\"&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058alert(1)\">x</a>",
    "<a href=\"  javascript:alert(1)\">x</a>",
    "<a href=\"\x00javascript:alert(1)\">x</a>",
    "<a href=\"java\x00script:alert(1)\">x</a>",
    "<A HREF=\"JAVASCRIPT:alert(1)\">x</A>",
    "<a href=\"JaVaScRiPt:alert(1)\">x</a>",
    "<img src=\"x` `<script>alert(1)</script>\"` `>",
    "<img src=\"x`\" onerror=alert(1)>",
    "<img src=`x` onerror=`alert(1)`>",
    "<img \"\"\"><script>alert(1)</script>\">",
    "<img src=x onerror=\"alert('a\"b')\">",
    "<img src='x' onerror='alert(\"1\")'>",
    "<iframe srcdoc=\"&lt;script&gt;alert(1)&lt;/script&gt;\"></iframe>",
    "<iframe src=\"https://evil.example\"></iframe>",
    "<object data=\"https://evil.example/x.swf\"></object>",
    "<object data=\"data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==\"></object>",
    "<base href=\"https://evil.example/\">",
    "<meta http-equiv=\"refresh\" content=\"0;url=data:text/html,<script>alert(1)</script>\">",
    "<form action=javascript:alert(1)><button>x</button></form>",
    "<button formaction=javascript:alert(1)>x</button>",
    "<details open ontoggle=alert(1)><summary>x</summary></details>",
    "<video><source onerror=alert(1)></video>",
    "<video src=x onerror=alert(1)></video>",
    "<audio src=x onerror=alert(1)>",
    "<div style=\"width: expression(alert(1))\">x</div>",
    "<span style=\"background-image:url('javascript:alert(1)')\">x</span>",
    "<style>@import 'https://evil.example/x.css';</style>",
    "<DIV STYLE=\"x:\\65 xpression(alert(1))\">x</DIV>",
    "<BODY ONLOAD=alert(1)>",
    "<ScRiPt>alert(1)</sCrIpT>",
    "<script\x00>alert(1)</script>",
    "<img src=x o\x00nerror=alert(1)>",
    "<input autofocus onfocus=alert(1)>",
    "<select autofocus onfocus=alert(1)>",
    "<marquee onstart=alert(1)>x</marquee>",
    "<isindex type=image src=1 onerror=alert(1)>",
    "<table background=\"javascript:alert(1)\"><tr><td>x</td></tr></table>",
    "<td background=\"javascript:alert(1)\">x</td>",
    "<a href=\"https://ok.example\" onclick=\"alert(1)\" style=\"color:red\">x</a>",
    "<p title=\"a\" title=\"b\" onmouseover=\"alert(1)\">x</p>",
    "<img src=\"https://ok.example/a.png\" srcset=\"javascript:alert(1) 1x\">",
    "<a href=\"mailto:x@example.com\" onmouseover=alert(1)>x</a>",
    "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\"></noscript>",
    "<template><script>alert(1)</script></template>",
    "<embed src=\"javascript:alert(1)\">",
    "<link rel=import href=\"https://evil.example/x.html\">",
    "<a href=\"data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==\">x</a>",
    "<img src=\"vbscript:msgbox(1)\">",
    "<a href=\"javas\tcript:alert(1)\">x</a>",
    "<a href=\"javascript&#58alert(1)\">x</a>",
    "<a href=\"javascript&#x3a;alert(1)\">x</a>",
    "<<script>alert(1)//<</script>",
    "<img src=x onerror=alert(1)//",
    "</title><script>alert(1)</script>",
    "<svg><style><img src=x onerror=alert(1)></style></svg>",
    "<a href=\"/ok\" target=_blank>x</a>",
};

}  // namespace

TEST_CASE("IsSafeUrl") {
  CHECK(IsSafeUrl("https://example.com/x"));
  CHECK(IsSafeUrl("HTTP://example.com"));
  CHECK(IsSafeUrl("mailto:a@b.c"));
  CHECK(IsSafeUrl("/relative/path"));
  CHECK(IsSafeUrl("relative/path?x=a:b"));
  CHECK(IsSafeUrl("#frag"));
  CHECK(IsSafeUrl(""));
  CHECK(IsSafeUrl("1:2"));  // no scheme: starts with a digit
  CHECK(!IsSafeUrl("javascript:alert(1)"));
  CHECK(!IsSafeUrl("  JaVaScRiPt:alert(1)"));
  CHECK(!IsSafeUrl("\x01\x02javascript:alert(1)"));
  CHECK(!IsSafeUrl("jav\tascript:alert(1)"));
  CHECK(!IsSafeUrl("jav&#x09;ascript:alert(1)"));
  CHECK(!IsSafeUrl("&#106;avascript:alert(1)"));
  CHECK(!IsSafeUrl("javascript&colon;alert(1)"));
  CHECK(!IsSafeUrl("vbscript:x"));
  CHECK(!IsSafeUrl("data:text/html,x"));
  CHECK(!IsSafeUrl("file:///etc/passwd"));
  CHECK(!IsSafeUrl("ftp://x"));  // not on the list
}

TEST_CASE("SanitizeHtml: allowed tags are normalised, script-like ones dropped, others shown as text") {
  CHECK(Sanitize("<B CLASS=x Title='a\"b'>hi</B>") == "<b class=\"x\" title=\"a&quot;b\">hi</b>");
  CHECK(Sanitize("<br/><hr><img src=\"a.png\" alt=\"A\" onload=x>") == "<br><hr><img src=\"a.png\" alt=\"A\">");
  CHECK(Sanitize("<script>alert(1)</script>") == "");
  CHECK(Sanitize("<foo>x</foo>") == "&lt;foo&gt;x&lt;/foo&gt;");
  CHECK(Sanitize("a <!-- hidden --> b") == "a  b");
  CHECK(Sanitize("<details open><summary>S</summary>x</details>") ==
        "<details open=\"\"><summary>S</summary>x</details>");
  CHECK(Sanitize("<a href=\"https://e.com\" target=_blank>x</a>") ==
        "<a href=\"https://e.com\" rel=\"noopener\">x</a>");
  CHECK(Sanitize("<a href=\"javascript:x\">y</a>") == "<a>y</a>");
  CHECK(Sanitize("<a href=\"//cdn.example/x\">y</a>") == "<a href=\"//cdn.example/x\" rel=\"noopener\">y</a>");
  CHECK(Sanitize("<a href=\"/local\">y</a>") == "<a href=\"/local\">y</a>");
  CHECK(Sanitize("1 < 2 & 3 > 2 &amp; &copy;") == "1 &lt; 2 &amp; 3 &gt; 2 &amp; &copy;");
  CHECK(Sanitize("<div><b>unclosed") == "<div><b>unclosed</b></div>");
  CHECK(Sanitize("</div>stray</p>") == "stray");
  CHECK(Sanitize("<td colspan=2 rowspan=\"3\" align=center>") == "<td colspan=\"2\" rowspan=\"3\" align=\"center\"></td>");
  CHECK(Sanitize("<img src=x onerror=alert(1)") == "&lt;img src=x onerror=alert(1)");
  CHECK(Sanitize("<span id=a id=b>") == "<span id=\"a\"></span>");
}

TEST_CASE("sanitiser issue: harmless formatting stays, script-capable parts go") {
  CHECK(Sanitize("<b class=\"x\" onclick=\"evil()\">ok</b> <i>i</i> <mark>m</mark> <kbd>k</kbd>") ==
        "<b class=\"x\">ok</b> <i>i</i> <mark>m</mark> <kbd>k</kbd>");
  CHECK(Sanitize("<details open ontoggle=alert(1)><summary>s</summary>t</details>") ==
        "<details open=\"\"><summary>s</summary>t</details>");
  CHECK(Sanitize("a<script>alert(1)</script>b") == "ab");
  CHECK(Sanitize("<a href=\"javascript:alert(1)\" title=t>x</a>") == "<a title=\"t\">x</a>");
  CHECK(Sanitize("<a href=\"  JavaScript:alert(1)\">x</a>") == "<a>x</a>");
  CHECK(Sanitize("<img src=\"data:image/png;base64,AAAA\" alt=a>") == "<img alt=\"a\">");
  CHECK(Sanitize("<IMG SRC=x OnErRoR=alert(1)>") == "<img src=\"x\">");
  CHECK(Sanitize("<img src=\"x`\" onerror=alert(1)>") == "<img src=\"x`\">");
  CHECK(Sanitize("<iframe src=\"https://e.com\"></iframe>after") == "after");
  CHECK(Sanitize("<style>p{}</style>") == "");
  CHECK(Sanitize("<svg onload=alert(1)><circle/></svg>x") == "x");
  CHECK(Sanitize("<math><mi>x</mi></math>") == "");
  CHECK(Sanitize("<div style=\"width: expression(alert(1))\">x</div>") == "<div>x</div>");
  // Raw iframes in notes are dropped; only the PDF embed writes one.
  RenderOptions opts;
  CHECK(RenderNote("<iframe src=\"/x.pdf\"></iframe>", "x.md", opts).html == "\n");
  CHECK(RenderNote("<math><mi>x</mi></math>", "x.md", opts).html.find("<math") == std::string::npos);
}

TEST_CASE("XSS corpus: more filter-evasion vectors through SanitizeHtml") {
  int n = 0;
  for (const char* v : kMoreXss) {
    CheckSafe(Sanitize(v), v);
    ++n;
  }
  CHECK(n >= 60);
  // With NUL bytes inside (string literals above stop at the first one).
  for (std::string v : {std::string("<a href=\"\0javascript:alert(1)\">x</a>", 33),
                        std::string("<scr\0ipt>alert(1)</script>", 27),
                        std::string("<img src=x on\0error=alert(1)>", 29)}) {
    CheckSafe(Sanitize(v), v);
  }
}

TEST_CASE("XSS corpus: raw HTML through SanitizeHtml") {
  int n = 0;
  for (const char* v : kXss) {
    CheckSafe(Sanitize(v), v);
    ++n;
  }
  CHECK(n >= 25);
}

TEST_CASE("XSS corpus: raw HTML and markdown through RenderNote") {
  RenderOptions opts;
  auto check = [&](const std::string& md) {
    RenderResult r = RenderNote(md, "x.md", opts);
    CheckSafe(r.html, md, true, r.has_math);
  };
  for (const char* v : kXss) check(v);
  for (const char* v : kMarkdownXss) check(v);
  for (const char* v : kMoreXss) check(v);
  // The same with every line inside a list item and a blockquote.
  for (const char* v : kXss) {
    check(std::string("- ") + v);
    check(std::string("> ") + v);
    check(std::string("> [!note] ") + v);
    check(std::string("==") + v + "== #tag [^1]\n\n[^1]: " + v);
  }
}

TEST_CASE("random markdown/HTML soup renders safely") {
  static const char* const kTokens[] = {
      "<", ">", "[[", "]]", "![[", "!", "|", "\\|", "\\", "#", "#^", "`", "```", "*", "_", "~~",
      "<a href=", "javascript:", "JaVa&#x09;Script:", "\"", "'", "\n", "\n\n", "- ", "> ", "| ",
      "|---|", "$", "$$", "&#x6a;", "&amp;", "&", "<div>", "</div>", "<script>", "</script>",
      "<img src=x onerror=alert(1)>", "---\n", "x", "Other note", ".md", ".png", "(", ")", "](",
      "<!--", "-->", "<b>", "</p>", " onclick=", "=", "%20", "1. ", "- [ ] ", "    ", "\t", "é", "日",
      "[!note]", "[!x\"]", "==", "%%", "[^1]", "[^1]: ", "^id", " ^b-1", ".pdf", ".mp3", "#tag", "+", "-"};
  // Everything resolves, so embeds of every kind are written.
  struct SoupResolver : LinkResolver {
    std::optional<std::string> Resolve(std::string_view t) override { return "/n/" + std::string(t); }
    std::optional<std::string> ResolveAttachment(std::string_view t) override { return "/a/" + std::string(t); }
    std::optional<std::string> EmbedNote(std::string_view, std::string_view, const RenderOptions&) override { return "<p>e</p>"; }
  } resolver;
  RenderOptions opts;
  opts.resolver = &resolver;
  uint32_t seed = 12345;
  auto next = [&] {
    seed = seed * 1664525u + 1013904223u;
    return seed >> 8;
  };
  for (int doc = 0; doc < 1500; ++doc) {
    std::string md;
    int n = 1 + static_cast<int>(next() % 40);
    for (int k = 0; k < n; ++k) md += kTokens[next() % (sizeof(kTokens) / sizeof(kTokens[0]))];
    RenderResult r = RenderNote(md, "Folder/x.md", opts);
    CheckSafe(r.html, md, true, r.has_math);
    std::string s;
    SanitizeHtml(md, &s);
    CheckSafe(s, md);
  }
}

TEST_CASE("deep nesting does not crash") {
  RenderOptions opts;
  std::string quotes(5000, '>');
  CHECK(!RenderNote(quotes + " x", "x.md", opts).html.empty());
  std::string tags;
  for (int i = 0; i < 20000; ++i) tags += "<b>";
  std::string out;
  SanitizeHtml(tags, &out);
  // Past kMaxOpenElements open elements further start tags are dropped (issue 22).
  CHECK(out.size() == kMaxOpenElements * 7);
  auto fm = RenderNote("---\nx: " + std::string(20000, '[') + "\n---\nbody", "x.md", opts);
  CHECK(!fm.frontmatter.error.empty());
  CHECK(fm.html == "<p>body</p>\n");
}

TEST_CASE("inline style: a safe subset of colours, emphasis and alignment stays (issue 28)") {
  CHECK(Sanitize("<span style=\"color:red\">red</span>") == "<span style=\"color:red\">red</span>");
  CHECK(Sanitize("<span style=\"COLOR: #F00 ; background-color: rgb(1, 2, 3);font-weight:bold\">x</span>") ==
        "<span style=\"color:#F00;background-color:rgb(1, 2, 3);font-weight:bold\">x</span>");
  CHECK(Sanitize("<p style=\"text-align:center;text-decoration:underline wavy;font-style:italic\">x</p>") ==
        "<p style=\"text-align:center;text-decoration:underline wavy;font-style:italic\">x</p>");
  CHECK(Sanitize("<span style=\"background:yellow\">x</span>") == "<span style=\"background:yellow\">x</span>");
  // Hostile or layout-changing declarations go; the rest of the attribute stays.
  CHECK(Sanitize("<span style=\"color:red;position:fixed;top:0\">x</span>") == "<span style=\"color:red\">x</span>");
  const char* const hostile[] = {
      "background:url(javascript:alert(1))",
      "background:red url(x.png)",
      "background-image:url(x.png)",
      "color:expression(alert(1))",
      "color:EXPRESSION(alert(1))",
      "color:red;width:expression(alert(1))",
      "position:fixed",
      "position:absolute;z-index:9999",
      "display:none",
      "width:100vw;height:100vh",
      "color:re\\64",
      "c\\olor:red",
      "color:red/**/",
      "color:/**/red",
      "color:red/*;position:fixed*/",
      "@import 'x.css'",
      "color:red!important",
      "color:\"red\"",
      "behavior:url(x.htc)",
      "-moz-binding:url(x.xml#y)",
      "color:r&#x5c;65d",
      "color:&#x75;rl(x)",
      "background:u&#114;l(x)",
      "font-family:'x'",
      "color:rgb(url(x))",
      "color:var(--x)",
      "color:attr(x)",
      ""};
  for (const char* h : hostile) {
    INFO(h);
    std::string in = "<span style=\"" + std::string(h) + "\">x</span>";
    std::string out = Sanitize(in);
    if (std::string_view(h).rfind("color:red;", 0) == 0) {
      CHECK(out == "<span style=\"color:red\">x</span>");
    } else {
      CHECK(out == "<span>x</span>");  // nothing survives: no attribute at all
    }
    CheckSafe(out, in);
  }
}

TEST_CASE("script, style, iframe and the like are dropped silently with their content (issue 28)") {
  RenderOptions opts;
  auto html = [&](std::string_view md) { return RenderNote(md, "x.md", opts).html; };
  // Inline, in a paragraph: md4c hands the text between the tags over as text.
  CHECK(html("before <script>alert(1)</script> after\n") == "<p>before  after</p>\n");
  CHECK(html("a <script>*em* [[link]] `c` $x$</script> b\n") == "<p>a  b</p>\n");
  CHECK(html("a <style>p { color: red }</style> b <noscript>n</noscript> c\n") == "<p>a  b  c</p>\n");
  CHECK(html("a <script>unclosed\n\nnext\n") == "<p>a </p>\n<p>next</p>\n");  // it ends with its block
  CHECK(html("a <SCRIPT type=x>1</SCRIPT >b\n") == "<p>a b</p>\n");
  // Blocks.
  CHECK(html("<script>\nalert(1)\n</script>\n\ntext\n") == "\n<p>text</p>\n");
  CHECK(html("<style>\nbody { display: none }\n</style>\ntext\n") == "\n<p>text</p>\n");
  CHECK(html("<iframe src=\"https://evil.example\">\n</iframe>\n") == "\n");
  CHECK(html("<div>\n<script>alert(1)</script>\n<b>kept</b>\n</div>\n") == "<div>\n\n<b>kept</b>\n</div>\n");
  CHECK(html("<textarea>\n<b>x</b>\n</textarea>\n") == "\n");
  // Unclosed in an HTML block: it ends with the block, the rest of the note shows.
  CHECK(html("<div>\n<style>\n\nstill *shown*\n") == "<div>\n<p>still <em>shown</em></p>\n</div>");
  // Form controls go, their text stays.
  CHECK(html("a <button>press</button> <input type=text> b\n") == "<p>a press  b</p>\n");
  // A video player iframe is still folio's own player.
  CHECK(html("<iframe src=\"https://www.youtube.com/embed/dQw4w9WgXcQ\"></iframe>\n").find("embed-video") !=
        std::string::npos);
}
