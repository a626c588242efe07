// Obsidian syntax on top of CommonMark: callouts, highlights, comments,
// block ids, tags, footnotes, math, mermaid, embeds, sections.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "folio/core/text.h"
#include "folio/markdown/render.h"
#include "folio/markdown/slug.h"
#include "math.h"

using namespace folio::markdown;

namespace {

// Notes resolve to "/" + HeadingId(name) except "Gone*"; attachments to
// "/assets/h/<name>" unless the name contains "missing" or has no
// extension; EmbedNote returns
// a marker paragraph for every note except "Gone*" and "Linked".
class VaultResolver : public LinkResolver {
 public:
  std::optional<std::string> Resolve(std::string_view t) override {
    if (t.substr(0, 4) == "Gone") return std::nullopt;
    return "/" + HeadingId(t);
  }
  std::optional<std::string> ResolveAttachment(std::string_view t) override {
    if (t.find("missing") != std::string_view::npos || t.find('.') == std::string_view::npos) {
      return std::nullopt;
    }
    return "/assets/h/" + std::string(t);
  }
  std::optional<std::string> EmbedNote(std::string_view t, std::string_view a, const RenderOptions&) override {
    if (t.substr(0, 4) == "Gone" || t == "Linked") return std::nullopt;
    return "<p>[" + std::string(t) + "|" + std::string(a) + "]</p>";
  }
};

RenderResult R(std::string_view md) {
  static VaultResolver resolver;
  RenderOptions opts;
  opts.resolver = &resolver;
  return RenderNote(md, "Here.md", opts);
}

std::string Html(std::string_view md) { return R(md).html; }

constexpr std::string_view kTitleOpen =
    "<span class=\"callout-icon\"></span><span class=\"callout-title-inner\">";

}  // namespace

TEST_CASE("callouts: plain, titled, default title, aliases, custom types") {
  CHECK(Html("> [!note] My *title*\n> body\n> more\n") ==
        "<div class=\"callout callout-note\" data-callout=\"note\">\n<div class=\"callout-title\">" +
            std::string(kTitleOpen) + "My <em>title</em></span></div>\n"
            "<div class=\"callout-content\">\n<p>body<br>\nmore</p>\n</div>\n</div>\n");
  CHECK(Html("> [!WARNING]\n> x\n") ==
        "<div class=\"callout callout-warning\" data-callout=\"warning\">\n<div class=\"callout-title\">" +
            std::string(kTitleOpen) + "Warning</span></div>\n"
            "<div class=\"callout-content\">\n<p>x</p>\n</div>\n</div>\n");
  CHECK(Html("> [!bug]\n") ==
        "<div class=\"callout callout-bug\" data-callout=\"bug\">\n<div class=\"callout-title\">" +
            std::string(kTitleOpen) + "Bug</span></div>\n<div class=\"callout-content\">\n</div>\n</div>\n");
  const std::pair<const char*, const char*> aliases[] = {
      {"summary", "abstract"}, {"TLDR", "abstract"},  {"hint", "tip"},        {"important", "tip"},
      {"check", "success"},    {"done", "success"},   {"help", "question"},   {"faq", "question"},
      {"caution", "warning"},  {"attention", "warning"}, {"fail", "failure"}, {"missing", "failure"},
      {"error", "danger"},     {"cite", "quote"},     {"info", "info"},       {"example", "example"}};
  for (const auto& [alias, type] : aliases) {
    INFO(alias);
    // Styled as its canonical type; data-callout keeps the name as written
    // (lower-cased), as Obsidian's does for CSS snippets.
    std::string lower = folio::AsciiLower(alias);
    CHECK(Html("> [!" + std::string(alias) + "] T\n").find("<div class=\"callout callout-" + std::string(type) +
                                                          "\" data-callout=\"" + lower + "\"") != std::string::npos);
  }
  // The default title is the type as written, lower-cased and capitalised.
  CHECK(Html("> [!FAQ]\n").find(std::string(kTitleOpen) + "Faq</span>") != std::string::npos);
  CHECK(Html("> [!Мой-Тип] Заголовок\n").find("data-callout=\"мой-тип\"") != std::string::npos);
  std::string evil = Html("> [!x\"&lt;onclick=1]\n");
  CHECK(evil.find("data-callout=\"x&quot;&lt;onclick=1\"") != std::string::npos);
  CHECK(Html("> plain\n") == "<blockquote>\n<p>plain</p>\n</blockquote>\n");
  CHECK(Html("> text [!note]\n") == "<blockquote>\n<p>text [!note]</p>\n</blockquote>\n");
  auto r = R("> [!tip] Title\n> body\n");
  CHECK(r.text == "Title body");
}

TEST_CASE("callouts: foldable and nested") {
  CHECK(Html("> [!faq]- Closed\n> hidden\n") ==
        "<details class=\"callout callout-question\" data-callout=\"faq\">\n<summary class=\"callout-title\">" +
            std::string(kTitleOpen) + "Closed</span><span class=\"callout-fold\"></span></summary>\n"
            "<div class=\"callout-content\">\n<p>hidden</p>\n</div>\n</details>\n");
  CHECK(Html("> [!tip]+\n> > [!example] Inner\n> > deep\n") ==
        "<details class=\"callout callout-tip\" data-callout=\"tip\" open>\n<summary class=\"callout-title\">" +
            std::string(kTitleOpen) + "Tip</span><span class=\"callout-fold\"></span></summary>\n<div class=\"callout-content\">\n"
            "<div class=\"callout callout-example\" data-callout=\"example\">\n<div class=\"callout-title\">" +
            std::string(kTitleOpen) + "Inner</span></div>\n"
            "<div class=\"callout-content\">\n<p>deep</p>\n</div>\n</div>\n</div>\n</details>\n");
}

TEST_CASE("highlights") {
  CHECK(Html("a ==hi **b** c== d ==x `==no==` y==\n") ==
        "<p>a <mark>hi <strong>b</strong> c</mark> d <mark>x <code>==no==</code> y</mark></p>\n");
  CHECK(Html("a == b ==open\n") == "<p>a == b ==open</p>\n");
  CHECK(Html("**==cross** x== ===no===\n") == "<p><strong>==cross</strong> x== ===no===</p>\n");
  CHECK(Html("```\n==x==\n```\n") == "<pre><code>==x==\n</code></pre>\n");
  CHECK(R("==a== b").text == "a b");
}

TEST_CASE("comments are removed before rendering, except in code") {
  CHECK(Html("x %%secret%% y `%%kept%%` z\n") == "<p>x  y <code>%%kept%%</code> z</p>\n");
  CHECK(Html("%%\nwhole\n\nblock\n%%\nnext\n") == "<p>next</p>\n");
  CHECK(Html("line1\n%%c%%\nline2\n") == "<p>line1<br>\nline2</p>\n");
  CHECK(Html("a %%multi\nline%% b\n") == "<p>a  b</p>\n");
  CHECK(Html("```\n%%in fence%%\n```\n") == "<pre><code>%%in fence%%\n</code></pre>\n");
  CHECK(Html("> ```\n> %%q%%\n> ```\n").find("%%q%%") != std::string::npos);
  CHECK(Html("shown %%unclosed\nhidden\n") == "<p>shown</p>\n");  // Obsidian hides the rest too
  CHECK(Html("`` a %%b` `` %%c%% d\n") == "<p><code>a %%b`</code>  d</p>\n");
}

TEST_CASE("block ids") {
  auto r = R("para one ^abc\n\n- item ^i1\n  - sub ^i2\n- [ ] task ^t1\n- word^no\n\n"
             "| a |\n|---|\n| 1 |\n\n^tbl\n\n![[pic.png]]^img\n\n> quote\n\n^q\n\ntext\n^soft\n");
  CHECK(r.html ==
        "<p id=\"block-abc\">para one</p>\n<ul>\n<li id=\"block-i1\">item<ul>\n"
        "<li id=\"block-i2\">sub</li>\n</ul>\n</li>\n"
        "<li id=\"block-t1\" class=\"task-list-item\" data-task=\" \"><input type=\"checkbox\" disabled> task</li>\n"
        "<li>word^no</li>\n</ul>\n"
        "<table id=\"block-tbl\">\n<thead>\n<tr>\n<th>a</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n"
        "</tr>\n</tbody>\n</table>\n"
        "<p><img id=\"block-img\" src=\"/assets/h/pic.png\" alt=\"pic.png\" loading=\"lazy\"></p>\n"
        "<blockquote id=\"block-q\">\n<p>quote</p>\n</blockquote>\n<p id=\"block-soft\">text</p>\n");
  CHECK(r.block_ids == std::vector<std::string>{"abc", "i1", "i2", "t1", "tbl", "img", "q", "soft"});
  CHECK(r.text.find('^') == r.text.find("word^no") + 4);
  // The id matches what [[n#^abc]] links to.
  CHECK(Html("[[Here#^Blk-1]]\n\nx ^Blk-1\n") ==
        "<p><a href=\"/here#block-blk-1\" class=\"internal-link\">Here &gt; ^Blk-1</a></p>\n<p id=\"block-blk-1\">x</p>\n");
  CHECK(Html("`code ^x`\n") == "<p><code>code ^x</code></p>\n");
  CHECK(Html("![[Note]]^emb\n") ==
        "<div id=\"block-emb\" class=\"embed markdown-embed\" data-embed=\"Note\"><div class=\"embed-content\">"
        "<p>[Note|]</p></div><a class=\"embed-source\" href=\"/note\">Note</a></div>\n");
}

TEST_CASE("tags") {
  auto r = R("---\ntags: [fm, Shared]\n---\n#tag #a/b #Über_x-1 #123 x#no `#code` [#l](http://x) "
             "[[N|#al]] #end/ #/bad #shared\n\n# Heading\n\n#TAG again\n");
  CHECK(r.html ==
        "<p><a class=\"tag\" href=\"/_/tags/tag\">#tag</a> <a class=\"tag\" href=\"/_/tags/a/b\">#a/b</a> "
        "<a class=\"tag\" href=\"/_/tags/%C3%9Cber_x-1\">#Über_x-1</a> #123 x#no <code>#code</code> "
        "<a href=\"http://x\" class=\"external-link\" rel=\"noopener\">#l</a> <a href=\"/n\" class=\"internal-link\">#al</a> "
        "<a class=\"tag\" href=\"/_/tags/end\">#end</a>/ #/bad <a class=\"tag\" href=\"/_/tags/shared\">#shared</a></p>\n"
        "<h1 id=\"heading\">Heading</h1>\n<p><a class=\"tag\" href=\"/_/tags/tag\">#TAG</a> again</p>\n");
  CHECK(r.tags == std::vector<std::string>{"fm", "Shared", "tag", "a/b", "Über_x-1", "end"});
  CHECK(Html("```\n#x\n```\n") == "<pre><code>#x\n</code></pre>\n");
  CHECK(Html("#日本語 tag\n") == "<p><a class=\"tag\" href=\"/_/tags/%E6%97%A5%E6%9C%AC%E8%AA%9E\">#日本語</a> tag</p>\n");
}

TEST_CASE("footnotes") {
  auto r = R("Text[^1] and[^note] again[^1] and [^undef].\n\n[^note]: Second *note* with [[Other]].\n"
             "[^1]: First.\n[^unused]: never\n\n```\n[^1]: in code\n```\n");
  CHECK(r.html ==
        "<p>Text<sup class=\"footnote-ref\"><a href=\"#fn-1\" id=\"fnref-1\">1</a></sup> "
        "and<sup class=\"footnote-ref\"><a href=\"#fn-2\" id=\"fnref-2\">2</a></sup> "
        "again<sup class=\"footnote-ref\"><a href=\"#fn-1\" id=\"fnref-1-2\">1</a></sup> and [^undef].</p>\n"
        "<pre><code>[^1]: in code\n</code></pre>\n"
        "<section class=\"footnotes\">\n<ol>\n"
        "<li id=\"fn-1\">First. <a href=\"#fnref-1\" class=\"footnote-backref\">\xE2\x86\xA9</a></li>\n"
        "<li id=\"fn-2\">Second <em>note</em> with <a href=\"/other\" class=\"internal-link\">Other</a>. "
        "<a href=\"#fnref-2\" class=\"footnote-backref\">\xE2\x86\xA9</a></li>\n</ol>\n</section>\n");
  REQUIRE(r.links.size() == 1);
  CHECK(r.links[0].target == "Other");
  CHECK(Html("no refs\n\n[^a]: def\n") == "<p>no refs</p>\n");
  CHECK(Html("`[^1]`\n\n[^1]: x\n") == "<p><code>[^1]</code></p>\n");
}

TEST_CASE("math and mermaid") {
  auto r = R("x $a<b$ and $$\\sum x$$\n\n```mermaid\ngraph TD; A-->B<script>\n```\n\n```python\nx\n```\n");
  CHECK(r.html == "<p>x " + TexToMathml("a<b", false) + " and " + TexToMathml("\\sum x", true) +
                      "</p>\n<pre class=\"mermaid\">graph TD; A--&gt;B&lt;script&gt;\n</pre>\n"
                      "<pre><code class=\"language-python\">x\n</code></pre>\n");
  CHECK(r.has_math);
  CHECK(r.has_mermaid);
  auto plain = R("`$x$` and\n\n```\n$$y$$\n```\n");
  CHECK(!plain.has_math);
  CHECK(!plain.has_mermaid);
  CHECK(plain.html.find("<math") == std::string::npos);
}

TEST_CASE("embeds: media") {
  auto r = R("![[pic.png|300]] ![[pic.png|300x200]] ![[image.svg#icon]] ![[pic.png|A cat]] ![[song.mp3]] "
             "![[clip.mp4]] ![[doc.pdf#page=2]] ![[missing.png]] ![[a b.png]]\n");
  CHECK(r.html ==
        "<p><img src=\"/assets/h/pic.png\" alt=\"pic.png\" width=\"300\" loading=\"lazy\"> "
        "<img src=\"/assets/h/pic.png\" alt=\"pic.png\" width=\"300\" height=\"200\" loading=\"lazy\"> "
        "<img src=\"/assets/h/image.svg#icon\" alt=\"image.svg\" class=\"embed-icon\" loading=\"lazy\"> "
        "<img src=\"/assets/h/pic.png\" alt=\"A cat\" loading=\"lazy\"> "
        "<audio controls src=\"/assets/h/song.mp3\"></audio> <video controls src=\"/assets/h/clip.mp4\"></video> "
        "<iframe class=\"embed-pdf\" src=\"/assets/h/doc.pdf#page=2\" loading=\"lazy\"></iframe> "
        "<span class=\"link-dead is-unresolved\" title=\"Missing attachment: missing.png\">missing.png</span> "
        "<img src=\"/assets/h/a%20b.png\" alt=\"a b.png\" loading=\"lazy\"></p>\n");
  CHECK(r.warnings == std::vector<std::string>{"missing attachment ![[missing.png]]"});
  REQUIRE(r.links.size() == 9);
  CHECK(r.links[0].embed);
  CHECK(r.links[0].resolved);
  CHECK(!r.links[7].resolved);
}

TEST_CASE("embeds: notes are block-level") {
  const std::string note =
      "<div class=\"embed markdown-embed\" data-embed=\"Note\"><div class=\"embed-content\"><p>[Note|]</p></div>"
      "<a class=\"embed-source\" href=\"/note\">Note</a></div>\n";
  CHECK(Html("![[Note]]\n") == note);
  CHECK(Html("Before ![[Note#Heading|shown]] after\n") ==
        "<p>Before </p>\n<div class=\"embed markdown-embed\" data-embed=\"Note#Heading\"><div class=\"embed-content\">"
        "<p>[Note|Heading]</p></div><a class=\"embed-source\" href=\"/note#heading\">shown</a></div>\n"
        "<p> after</p>\n");
  CHECK(Html("- ![[Note#^blk]]\n") ==
        "<ul>\n<li><div class=\"embed markdown-embed\" data-embed=\"Note#^blk\"><div class=\"embed-content\">"
        "<p>[Note|^blk]</p></div><a class=\"embed-source\" href=\"/note#block-blk\">Note</a></div>\n</li>\n</ul>\n");
  // Where a <div> cannot go, and when the resolver has no content: a link.
  CHECK(Html("# ![[Note]]\n") == "<h1 id=\"note\"><a href=\"/note\" class=\"embed-link internal-link\">Note</a></h1>\n");
  CHECK(Html("*![[Note]]*\n") == "<p><em><a href=\"/note\" class=\"embed-link internal-link\">Note</a></em></p>\n");
  CHECK(Html("![[Linked]]\n") == "<p><a href=\"/linked\" class=\"embed-link internal-link\">Linked</a></p>\n");
  auto gone = R("![[Gone]]\n");
  CHECK(gone.html == "<p><span class=\"link-dead is-unresolved\" title=\"Missing note: Gone\">Gone</span></p>\n");
  CHECK(gone.warnings == std::vector<std::string>{"dangling embed ![[Gone]]"});
  CHECK(Html("![[Gone.zip]]\n") == "<p><a href=\"/assets/h/Gone.zip\" class=\"embed-link internal-link\">Gone.zip</a></p>\n");
  // Raw HTML the paragraph opened is closed before the embed.
  CHECK(Html("<b>x ![[Note]] y\n") == "<p><b>x </b></p>\n" + note + "<p> y</p>\n");
}

TEST_CASE("heading anchors use the rendered ids; wikilink aliases with code") {
  auto r = R("## Heading with *emphasis*\n## Heading, with punctuation!\n\n"
             "[[Here#Heading with *emphasis*]] [[Here#Heading, with punctuation!]] [[Note|the `x` var]]\n");
  CHECK(r.headings[0].id == "heading-with-emphasis");
  CHECK(r.headings[1].id == "heading-with-punctuation");
  CHECK(r.html.find("<a href=\"/here#heading-with-emphasis\" class=\"internal-link\">") != std::string::npos);
  CHECK(r.html.find("<a href=\"/here#heading-with-punctuation\" class=\"internal-link\">") != std::string::npos);
  CHECK(r.html.find("<a href=\"/note\" class=\"internal-link\">the <code>x</code> var</a>") != std::string::npos);
}

TEST_CASE("ExtractSection") {
  const char* doc =
      "---\ntitle: T\n---\n# Top\nintro\n## Heading with *Emphasis*!\nbody\n```\n# not a heading\n```\n"
      "### Child\nchild text\n## Next\nnext\n# Other\n## Child\nother child\n";
  CHECK(ExtractSection(doc, "heading with emphasis") ==
        "## Heading with *Emphasis*!\nbody\n```\n# not a heading\n```\n### Child\nchild text\n");
  CHECK(ExtractSection(doc, "Child") == "### Child\nchild text\n");
  CHECK(ExtractSection(doc, "Other#Child") == "## Child\nother child\n");
  CHECK(ExtractSection(doc, "Top#Next") == "## Next\nnext\n");
  CHECK(ExtractSection(doc, "Other") == "# Other\n## Child\nother child\n");
  CHECK(!ExtractSection(doc, "not a heading").has_value());
  CHECK(!ExtractSection(doc, "title").has_value());
  CHECK(!ExtractSection(doc, "Next#Child").has_value());
  CHECK(!ExtractSection(doc, "").has_value());
}

TEST_CASE("ExtractBlock") {
  const char* doc =
      "---\ntags: x\n---\nFirst line\nsecond line ^para\n\n- item one ^li\n  - nested\n- item two\n\n"
      "| a |\n|---|\n| 1 |\n\n^tbl\n\n```\ncode ^fake\n```\n![[img.png]]^img\n";
  CHECK(ExtractBlock(doc, "para") == "First line\nsecond line\n");
  CHECK(ExtractBlock(doc, "^li") == "- item one\n  - nested\n");
  CHECK(ExtractBlock(doc, "tbl") == "| a |\n|---|\n| 1 |\n");
  CHECK(ExtractBlock(doc, "img") == "![[img.png]]\n");
  CHECK(!ExtractBlock(doc, "fake").has_value());
  CHECK(!ExtractBlock(doc, "missing").has_value());
  CHECK(!ExtractBlock(doc, "ara").has_value());
}

// The rendering bugs a new user found, each as Obsidian renders it.
namespace {

// A small vault: notes "Note" and "Tags"; attachments "spec sheet.pdf" (in
// Files/) and "red dot.png" (in Images/), found by name or by path.
class SmallVault : public LinkResolver {
 public:
  std::optional<std::string> Resolve(std::string_view t) override {
    if (t == "Note" || t == "Tags") return "/" + std::string(t);
    return std::nullopt;
  }
  std::optional<std::string> ResolveAttachment(std::string_view t) override {
    if (t == "spec sheet.pdf" || t == "Files/spec sheet.pdf") return "/assets/1/spec%20sheet.pdf";
    if (t == "red dot.png" || t == "Images/red dot.png") return "/assets/2/red%20dot.png";
    return std::nullopt;
  }
  std::optional<std::string> EmbedNote(std::string_view t, std::string_view a, const RenderOptions& nested) override {
    if (t != "Note") return std::nullopt;
    // The embedded note renders with its own footnote prefix, as ingest does.
    RenderOptions opts = nested;
    opts.resolver = nullptr;
    opts.id_prefix = "e1-";
    return RenderNote(a.empty() ? "embedded[^1]\n\n[^1]: inner\n" : "## " + std::string(a) + "\nsection\n",
                      "Note.md", opts)
        .html;
  }
};

RenderResult Small(std::string_view md, bool strict = false) {
  static SmallVault vault;
  RenderOptions opts;
  opts.resolver = &vault;
  opts.strict_line_breaks = strict;
  return RenderNote(md, "Here.md", opts);
}

bool Contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("bug 1: a callout whose first line is followed by an embed is a callout holding the embed") {
  std::string h = Small("> [!example] T\n> ![[Note#Section]]\n").html;
  CHECK(Contains(h, "<div class=\"callout callout-example\" data-callout=\"example\">"));
  CHECK(Contains(h, "<span class=\"callout-title-inner\">T</span>"));
  CHECK(!Contains(h, "[!example]"));
  size_t content = h.find("<div class=\"callout-content\">");
  size_t embed = h.find("<div class=\"embed markdown-embed\" data-embed=\"Note#Section\">");
  REQUIRE(content != std::string::npos);
  CHECK(embed > content);
  CHECK(!Contains(h, "<blockquote>"));
}

TEST_CASE("bug 2: links and images to attachments resolve, by wikilink and by relative markdown path") {
  RenderResult r = Small("[[spec sheet.pdf]] [x](Files/spec%20sheet.pdf) ![dot](Images/red%20dot.png)\n");
  CHECK(Contains(r.html, "<a href=\"/assets/1/spec%20sheet.pdf\" class=\"internal-link\">spec sheet.pdf</a>"));
  CHECK(Contains(r.html, "<a href=\"/assets/1/spec%20sheet.pdf\" class=\"internal-link\">x</a>"));
  CHECK(Contains(r.html, "<img src=\"/assets/2/red%20dot.png\" alt=\"dot\">"));
  CHECK(r.warnings.empty());
  // What the vault does not hold is reported, not linked as a raw path.
  RenderResult missing = Small("[y](Files/nothing.pdf) ![z](Images/none.png)\n");
  CHECK(Contains(missing.html, "<span class=\"link-dead is-unresolved\" title=\"Missing note: Files/nothing.pdf\">y</span>"));
  CHECK(missing.warnings.size() == 2);
  // External and site-absolute URLs are left alone.
  CHECK(Contains(Small("[a](https://x.example/a.pdf) [b](/feed.xml)\n").html,
                 "<a href=\"https://x.example/a.pdf\" class=\"external-link\" rel=\"noopener\">a</a> <a href=\"/feed.xml\">b</a>"));
}

TEST_CASE("bug 3: dollar amounts are text; math opens and closes by Obsidian's rule") {
  CHECK(Small("it costs $5 and $10 today\n").html == "<p>it costs $5 and $10 today</p>\n");
  CHECK(Small("from $5 to $ 6\n").html == "<p>from $5 to $ 6</p>\n");
  RenderResult m = Small("so $x^2$ and $a+b$, not $ c$\n");
  CHECK(m.has_math);
  CHECK(Contains(m.html, "<annotation encoding=\"application/x-tex\">x^2</annotation>"));
  CHECK(Contains(m.html, "<annotation encoding=\"application/x-tex\">a+b</annotation>"));
  CHECK(Contains(m.html, "not $ c$</p>"));
  // A closing '$' followed by a digit does not close.
  CHECK(Small("$5 x$5\n").html == "<p>$5 x$5</p>\n");
  CHECK(Contains(Small("$$\\frac{1}{2}$$\n").html, "<math display=\"block\">"));
  // Code, wikilinks and indented code keep their dollars as written.
  CHECK(Small("`$5` [[Cost $5]]\n").html ==
        "<p><code>$5</code> <span class=\"link-dead is-unresolved\" title=\"Missing note: Cost $5\">Cost $5</span></p>\n");
  CHECK(Small("    cost $5\n").html == "<pre><code>cost $5\n</code></pre>\n");
  CHECK(Small("escaped \\$5 stays\n").html == "<p>escaped $5 stays</p>\n");
}

TEST_CASE("bug 4: an inline footnote is a footnote") {
  RenderResult r = Small("Claim^[Source: *the book*] and more[^n].\n\n[^n]: named\n");
  CHECK(Contains(r.html, "Claim<sup class=\"footnote-ref\"><a href=\"#fn-1\" id=\"fnref-1\">1</a></sup>"));
  CHECK(Contains(r.html, "more<sup class=\"footnote-ref\"><a href=\"#fn-2\" id=\"fnref-2\">2</a></sup>"));
  CHECK(Contains(r.html, "<li id=\"fn-1\">Source: <em>the book</em> <a href=\"#fnref-1\""));
  CHECK(Contains(r.html, "<li id=\"fn-2\">named "));
  CHECK(!Contains(r.html, "^["));
  CHECK(Small("x^[] y\n").html == "<p>x^[] y</p>\n");
}

TEST_CASE("bug 5: an embedded note's footnotes keep ids of their own") {
  std::string h = Small("Host[^1]\n\n![[Note]]\n\n[^1]: host note\n").html;
  CHECK(Contains(h, "<li id=\"fn-1\">host note"));
  CHECK(Contains(h, "<li id=\"fn-e1-1\">inner"));
  CHECK(Contains(h, "<a href=\"#fn-e1-1\" id=\"fnref-e1-1\">1</a>"));
  size_t first = h.find("id=\"fn-1\"");
  CHECK(h.find("id=\"fn-1\"", first + 1) == std::string::npos);
}

TEST_CASE("bug 6: a heading's #tags are not part of its id, so links to it land") {
  RenderResult r = Small("## The *fancy* heading #tag\n\n[[#The fancy heading]]\n");
  CHECK(Contains(r.html, "<h2 id=\"the-fancy-heading\">The <em>fancy</em> heading <a class=\"tag\""));
  CHECK(Contains(r.html, "<a href=\"#the-fancy-heading\" class=\"internal-link\">"));
  REQUIRE(r.headings.size() == 1);
  CHECK(r.headings[0].text == "The fancy heading");
  CHECK(r.tags == std::vector<std::string>{"tag"});
  // An embed of that section finds it by the same name.
  CHECK(ExtractSection("## The *fancy* heading #tag\nbody\n", "The fancy heading") ==
        std::optional<std::string>("## The *fancy* heading #tag\nbody\n"));
}

TEST_CASE("bug 7: any task character makes a task item, its state in data-task") {
  std::string h = Small("- [-] cancelled\n- [/] half\n- [x] done\n- [ ] open\n- [>] later `code`\n- [[Note]]\n").html;
  CHECK(Contains(h, "<li class=\"task-list-item is-checked\" data-task=\"-\"><input type=\"checkbox\" disabled checked> cancelled</li>"));
  CHECK(Contains(h, "<li class=\"task-list-item is-checked\" data-task=\"/\"><input type=\"checkbox\" disabled checked> half</li>"));
  CHECK(Contains(h, "<li class=\"task-list-item is-checked\" data-task=\"&gt;\"><input type=\"checkbox\" disabled checked> later <code>code</code></li>"));
  CHECK(Contains(h, "<li class=\"task-list-item\" data-task=\" \"><input type=\"checkbox\" disabled> open</li>"));
  CHECK(Contains(h, "<li><a href=\"/Note\" class=\"internal-link\">Note</a></li>"));
  // Only at the start of the item.
  CHECK(Contains(Small("- a [-] b\n").html, "<li>a [-] b</li>"));
}

TEST_CASE("bug 8: a single newline is a line break unless the site asks for strict line breaks") {
  CHECK(Small("one\ntwo\n").html == "<p>one<br>\ntwo</p>\n");
  CHECK(Small("one\ntwo\n", /*strict=*/true).html == "<p>one\ntwo</p>\n");
  CHECK(Small("text\n^id\n").html == "<p id=\"block-id\">text</p>\n");
}

TEST_CASE("bug 10: callouts carry their written type, their kind and a fold chevron") {
  std::string faq = Small("> [!faq]- Why\n> because\n").html;
  CHECK(Contains(faq, "<details class=\"callout callout-question\" data-callout=\"faq\">"));
  CHECK(Contains(faq, "<span class=\"callout-icon\"></span>"));
  CHECK(Contains(faq, "<span class=\"callout-fold\"></span></summary>"));
  CHECK(!Contains(Small("> [!tip] x\n").html, "callout-fold"));
}

TEST_CASE("bug 11: YouTube and Vimeo embed as folio's own sandboxed players; other iframes stay out") {
  std::string img = Small("![Talk](https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=10)\n").html;
  CHECK(Contains(img, "<iframe class=\"embed-video\" src=\"https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ\" "
                      "title=\"Talk\" loading=\"lazy\""));
  CHECK(Contains(img, "sandbox=\"allow-scripts allow-same-origin allow-presentation allow-popups\""));
  CHECK(Contains(Small("![](https://youtu.be/dQw4w9WgXcQ)\n").html, "src=\"https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ\""));
  CHECK(Contains(Small("![](https://vimeo.com/76979871)\n").html, "src=\"https://player.vimeo.com/video/76979871\""));
  std::string raw = Small("<iframe width=\"560\" src=\"https://www.youtube.com/embed/dQw4w9WgXcQ?si=x\" onload=\"alert(1)\"></iframe>\n").html;
  CHECK(Contains(raw, "<iframe class=\"embed-video\" src=\"https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ\""));
  CHECK(!Contains(raw, "onload"));
  CHECK(!Contains(raw, "&lt;"));
  // Any other iframe is shown as text, never loaded.
  std::string evil = Small("<iframe src=\"https://evil.example/x\"></iframe>\n").html;
  CHECK(!Contains(evil, "<iframe"));
  CHECK(Contains(Small("![](https://www.youtube.com.evil.example/watch?v=dQw4w9WgXcQ)\n").html, "<img "));
  CHECK(Contains(Small("![](https://www.youtube.com/watch?v=<script>)\n").html, "<img "));
}

TEST_CASE("fenced code is highlighted at render time for common languages; unknown ones stay plain and escaped") {
  std::string py = Small("```python\ndef f(x):  # <note>\n    return \"s\" & 3\n```\n").html;
  CHECK(Contains(py, "<pre><code class=\"language-python\"><span class=\"hl-keyword\">def</span> "
                     "<span class=\"hl-function\">f</span>(x):  <span class=\"hl-comment\"># &lt;note&gt;</span>\n"));
  CHECK(Contains(py, "<span class=\"hl-string\">&quot;s&quot;</span> &amp; <span class=\"hl-number\">3</span>"));
  // The 20 most used languages (and their usual fence names) all colour something.
  const std::pair<const char*, const char*> samples[] = {
      {"js", "const x = 1;"},          {"javascript", "return 1;"},   {"typescript", "const a = 1;"},
      {"ts", "const a = 1;"},          {"java", "public class A {}"}, {"kotlin", "class A {}"},
      {"c", "int main(void) { return 0; }"}, {"cpp", "int main() { return 0; }"}, {"c++", "int x = 0;"},
      {"csharp", "public class A {}"}, {"cs", "public class A {}"},  {"go", "func main() {}"},
      {"rust", "fn main() {}"},        {"rs", "fn main() {}"},       {"php", "<?php echo 1; ?>"},
      {"ruby", "def f; end"},          {"bash", "if true; then echo; fi"}, {"sh", "echo 1 # c"},
      {"sql", "SELECT 1 FROM t;"},     {"html", "<p class=\"a\">x</p>"}, {"css", "a { color: red; }"},
      {"json", "{\"a\": 1}"},          {"xml", "<a b=\"1\"/>"},     {"lua", "local x = 1"},
      {"r", "x <- 1 # c"},             {"scala", "object A {}"},     {"haskell", "module Main where"},
      {"perl", "my $x = 1;"},          {"diff", "--- a\n+++ b\n+added"},           {"makefile", "CC = gcc"}};
  for (const auto& [lang, code] : samples) {
    std::string name = lang;
    CAPTURE(name);
    CHECK(Contains(Small(std::string("```") + lang + "\n" + code + "\n```\n").html, "<span class=\"hl-"));
  }
  RenderOptions plain;
  plain.highlight_code = false;  // metadata-only renders skip it; the text is the same
  RenderResult r = RenderNote("```python\ndef f(x): <y>\n```\n", "Here.md", plain);
  CHECK(r.html == "<pre><code class=\"language-python\">def f(x): &lt;y&gt;\n</code></pre>\n");
  CHECK(r.text == Small("```python\ndef f(x): <y>\n```\n").text);
  CHECK(Small("```nosuchlang\nplain <x>\n```\n").html ==
        "<pre><code class=\"language-nosuchlang\">plain &lt;x&gt;\n</code></pre>\n");
  CHECK(Small("```\nno <lang>\n```\n").html == "<pre><code>no &lt;lang&gt;\n</code></pre>\n");
  // Multi-line comments carry over lines; a huge fence stays plain.
  CHECK(Contains(Small("```c\n/* a\nb */ int x;\n```\n").html, "<span class=\"hl-comment\">b */</span>"));
  std::string huge = "```python\n" + std::string(300 * 1024, 'x') + "\n```\n";
  CHECK(!Contains(Small(huge).html, "hl-"));
}

TEST_CASE("highlighting from several threads at once (ingest renders in parallel) gives the same output") {
  const std::string md = "```python\ndef f(x):\n    return 1  # c\n```\n\n```go\nfunc main() {}\n```\n\n```rust\nfn main() {}\n```\n";
  const std::string want = Small(md).html;
  std::vector<std::thread> threads;
  std::atomic<int> same{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 20; ++i) same += RenderNote(md, "T.md", {}).html == want;
    });
  }
  for (auto& th : threads) th.join();
  CHECK(same == 80);
}

TEST_CASE("issue 28: in a table, a wikilink alias is markdown and a code span's \\| is a pipe") {
  std::string h = Html("| a | b |\n|---|---|\n| [[Kitchen sink\\|sink **bold**]] | `a \\| b` |\n");
  CHECK(Contains(h, "<td><a href=\"/kitchen-sink\" class=\"internal-link\">sink <strong>bold</strong></a></td>"));
  CHECK(Contains(h, "<td><code>a | b</code></td>"));
  // Outside tables the same alias renders the same way.
  CHECK(Html("[[Kitchen sink|sink **bold**]]\n") ==
        "<p><a href=\"/kitchen-sink\" class=\"internal-link\">sink <strong>bold</strong></a></p>\n");
  // Outside a table a code span keeps its backslash, as CommonMark says.
  CHECK(Html("`a \\| b`\n") == "<p><code>a \\| b</code></p>\n");
  // An alias that is not inline markdown shows as written.
  CHECK(Contains(Html("| a |\n|---|\n| [[T\\|# x]] |\n"), "<a href=\"/t\" class=\"internal-link\"># x</a>"));
}

TEST_CASE("issue 28: ordered task lists keep their numbers; Obsidian's classes on tasks and links") {
  std::string h = Html("1. [ ] first\n2. [x] second\n3. [-] third\n");
  CHECK(h == "<ol>\n"
             "<li class=\"task-list-item\" data-task=\" \"><input type=\"checkbox\" disabled> first</li>\n"
             "<li class=\"task-list-item is-checked\" data-task=\"x\"><input type=\"checkbox\" disabled checked> second</li>\n"
             "<li class=\"task-list-item is-checked\" data-task=\"-\"><input type=\"checkbox\" disabled checked> third</li>\n"
             "</ol>\n");
  CHECK(Html("3. [ ] x\n").find("<ol start=\"3\">\n<li class=\"task-list-item\"") == 0);
  CHECK(Html("[[Gone note]]\n") ==
        "<p><span class=\"link-dead is-unresolved\" title=\"Missing note: Gone note\">Gone note</span></p>\n");
  CHECK(Html("[x](https://e.com)\n") == "<p><a href=\"https://e.com\" class=\"external-link\" rel=\"noopener\">x</a></p>\n");
  CHECK(Html("<https://e.com>\n") ==
        "<p><a href=\"https://e.com\" class=\"external-link\" rel=\"noopener\">https://e.com</a></p>\n");
  CHECK(Html("[x](Other.md)\n") == "<p><a href=\"/other.md\" class=\"internal-link\">x</a></p>\n");
  CHECK(Html("[[#Top]]\n") == "<p><a href=\"#top\" class=\"internal-link\">Top</a></p>\n");
  CHECK(Contains(Html("![[Note]]\n"), "<div class=\"embed markdown-embed\" data-embed=\"Note\">"));
}
