// Obsidian syntax on top of CommonMark: callouts, highlights, comments,
// block ids, tags, footnotes, math, mermaid, embeds, sections.
#include <doctest/doctest.h>

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
  std::optional<std::string> EmbedNote(std::string_view t, std::string_view a) override {
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
        "<div class=\"callout\" data-callout=\"note\">\n<div class=\"callout-title\">" +
            std::string(kTitleOpen) + "My <em>title</em></span></div>\n"
            "<div class=\"callout-content\">\n<p>body\nmore</p>\n</div>\n</div>\n");
  CHECK(Html("> [!WARNING]\n> x\n") ==
        "<div class=\"callout\" data-callout=\"warning\">\n<div class=\"callout-title\">" +
            std::string(kTitleOpen) + "Warning</span></div>\n"
            "<div class=\"callout-content\">\n<p>x</p>\n</div>\n</div>\n");
  CHECK(Html("> [!bug]\n") ==
        "<div class=\"callout\" data-callout=\"bug\">\n<div class=\"callout-title\">" +
            std::string(kTitleOpen) + "Bug</span></div>\n<div class=\"callout-content\">\n</div>\n</div>\n");
  const std::pair<const char*, const char*> aliases[] = {
      {"summary", "abstract"}, {"TLDR", "abstract"},  {"hint", "tip"},        {"important", "tip"},
      {"check", "success"},    {"done", "success"},   {"help", "question"},   {"faq", "question"},
      {"caution", "warning"},  {"attention", "warning"}, {"fail", "failure"}, {"missing", "failure"},
      {"error", "danger"},     {"cite", "quote"},     {"info", "info"},       {"example", "example"}};
  for (const auto& [alias, type] : aliases) {
    INFO(alias);
    CHECK(Html("> [!" + std::string(alias) + "] T\n").find("data-callout=\"" + std::string(type) + "\"") !=
          std::string::npos);
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
        "<details class=\"callout\" data-callout=\"question\">\n<summary class=\"callout-title\">" +
            std::string(kTitleOpen) + "Closed</span></summary>\n"
            "<div class=\"callout-content\">\n<p>hidden</p>\n</div>\n</details>\n");
  CHECK(Html("> [!tip]+\n> > [!example] Inner\n> > deep\n") ==
        "<details class=\"callout\" data-callout=\"tip\" open>\n<summary class=\"callout-title\">" +
            std::string(kTitleOpen) + "Tip</span></summary>\n<div class=\"callout-content\">\n"
            "<div class=\"callout\" data-callout=\"example\">\n<div class=\"callout-title\">" +
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
  CHECK(Html("line1\n%%c%%\nline2\n") == "<p>line1\nline2</p>\n");
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
        "<li id=\"block-t1\" class=\"task-list-item\"><input type=\"checkbox\" disabled> task</li>\n"
        "<li>word^no</li>\n</ul>\n"
        "<table id=\"block-tbl\">\n<thead>\n<tr>\n<th>a</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td>1</td>\n"
        "</tr>\n</tbody>\n</table>\n"
        "<p><img id=\"block-img\" src=\"/assets/h/pic.png\" alt=\"pic.png\" loading=\"lazy\"></p>\n"
        "<blockquote id=\"block-q\">\n<p>quote</p>\n</blockquote>\n<p id=\"block-soft\">text</p>\n");
  CHECK(r.block_ids == std::vector<std::string>{"abc", "i1", "i2", "t1", "tbl", "img", "q", "soft"});
  CHECK(r.text.find('^') == r.text.find("word^no") + 4);
  // The id matches what [[n#^abc]] links to.
  CHECK(Html("[[Here#^Blk-1]]\n\nx ^Blk-1\n") ==
        "<p><a href=\"/here#block-blk-1\">Here &gt; ^Blk-1</a></p>\n<p id=\"block-blk-1\">x</p>\n");
  CHECK(Html("`code ^x`\n") == "<p><code>code ^x</code></p>\n");
  CHECK(Html("![[Note]]^emb\n") ==
        "<div id=\"block-emb\" class=\"embed\" data-embed=\"Note\"><div class=\"embed-content\">"
        "<p>[Note|]</p></div><a class=\"embed-source\" href=\"/note\">Note</a></div>\n");
}

TEST_CASE("tags") {
  auto r = R("---\ntags: [fm, Shared]\n---\n#tag #a/b #Über_x-1 #123 x#no `#code` [#l](http://x) "
             "[[N|#al]] #end/ #/bad #shared\n\n# Heading\n\n#TAG again\n");
  CHECK(r.html ==
        "<p><a class=\"tag\" href=\"/tags/tag\">#tag</a> <a class=\"tag\" href=\"/tags/a/b\">#a/b</a> "
        "<a class=\"tag\" href=\"/tags/%C3%9Cber_x-1\">#Über_x-1</a> #123 x#no <code>#code</code> "
        "<a href=\"http://x\" rel=\"noopener\">#l</a> <a href=\"/n\">#al</a> "
        "<a class=\"tag\" href=\"/tags/end\">#end</a>/ #/bad <a class=\"tag\" href=\"/tags/shared\">#shared</a></p>\n"
        "<h1 id=\"heading\">Heading</h1>\n<p><a class=\"tag\" href=\"/tags/tag\">#TAG</a> again</p>\n");
  CHECK(r.tags == std::vector<std::string>{"fm", "Shared", "tag", "a/b", "Über_x-1", "end"});
  CHECK(Html("```\n#x\n```\n") == "<pre><code>#x\n</code></pre>\n");
  CHECK(Html("#日本語 tag\n") == "<p><a class=\"tag\" href=\"/tags/%E6%97%A5%E6%9C%AC%E8%AA%9E\">#日本語</a> tag</p>\n");
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
        "<li id=\"fn-2\">Second <em>note</em> with <a href=\"/other\">Other</a>. "
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
        "<span class=\"link-dead\" title=\"Missing attachment: missing.png\">missing.png</span> "
        "<img src=\"/assets/h/a%20b.png\" alt=\"a b.png\" loading=\"lazy\"></p>\n");
  CHECK(r.warnings == std::vector<std::string>{"missing attachment ![[missing.png]]"});
  REQUIRE(r.links.size() == 9);
  CHECK(r.links[0].embed);
  CHECK(r.links[0].resolved);
  CHECK(!r.links[7].resolved);
}

TEST_CASE("embeds: notes are block-level") {
  const std::string note =
      "<div class=\"embed\" data-embed=\"Note\"><div class=\"embed-content\"><p>[Note|]</p></div>"
      "<a class=\"embed-source\" href=\"/note\">Note</a></div>\n";
  CHECK(Html("![[Note]]\n") == note);
  CHECK(Html("Before ![[Note#Heading|shown]] after\n") ==
        "<p>Before </p>\n<div class=\"embed\" data-embed=\"Note#Heading\"><div class=\"embed-content\">"
        "<p>[Note|Heading]</p></div><a class=\"embed-source\" href=\"/note#heading\">shown</a></div>\n"
        "<p> after</p>\n");
  CHECK(Html("- ![[Note#^blk]]\n") ==
        "<ul>\n<li><div class=\"embed\" data-embed=\"Note#^blk\"><div class=\"embed-content\">"
        "<p>[Note|^blk]</p></div><a class=\"embed-source\" href=\"/note#block-blk\">Note</a></div>\n</li>\n</ul>\n");
  // Where a <div> cannot go, and when the resolver has no content: a link.
  CHECK(Html("# ![[Note]]\n") == "<h1 id=\"note\"><a href=\"/note\" class=\"embed-link\">Note</a></h1>\n");
  CHECK(Html("*![[Note]]*\n") == "<p><em><a href=\"/note\" class=\"embed-link\">Note</a></em></p>\n");
  CHECK(Html("![[Linked]]\n") == "<p><a href=\"/linked\" class=\"embed-link\">Linked</a></p>\n");
  auto gone = R("![[Gone]]\n");
  CHECK(gone.html == "<p><span class=\"link-dead\" title=\"Missing note: Gone\">Gone</span></p>\n");
  CHECK(gone.warnings == std::vector<std::string>{"dangling embed ![[Gone]]"});
  CHECK(Html("![[Gone.zip]]\n") == "<p><a href=\"/assets/h/Gone.zip\" class=\"embed-link\">Gone.zip</a></p>\n");
  // Raw HTML the paragraph opened is closed before the embed.
  CHECK(Html("<b>x ![[Note]] y\n") == "<p><b>x </b></p>\n" + note + "<p> y</p>\n");
}

TEST_CASE("heading anchors use the rendered ids; wikilink aliases with code") {
  auto r = R("## Heading with *emphasis*\n## Heading, with punctuation!\n\n"
             "[[Here#Heading with *emphasis*]] [[Here#Heading, with punctuation!]] [[Note|the `x` var]]\n");
  CHECK(r.headings[0].id == "heading-with-emphasis");
  CHECK(r.headings[1].id == "heading-with-punctuation");
  CHECK(r.html.find("<a href=\"/here#heading-with-emphasis\">") != std::string::npos);
  CHECK(r.html.find("<a href=\"/here#heading-with-punctuation\">") != std::string::npos);
  CHECK(r.html.find("<a href=\"/note\">the <code>x</code> var</a>") != std::string::npos);
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
