#include <doctest/doctest.h>

#include <algorithm>

#include "folio/markdown/links.h"
#include "folio/markdown/render.h"
#include "folio/markdown/slug.h"
#include "math.h"

using namespace folio::markdown;

namespace {

// Resolves through a LinkIndex as ingest does: target -> note -> URL.
class IndexResolver : public LinkResolver {
 public:
  IndexResolver() {
    index_.Add("Other note.md");
    index_.Add("Folder/Target.md", {"Alias Name"});
    index_.Add("Folder/Sub/Deep.md");
    index_.Add("Заметки/Моя заметка.md");
    index_.Add("img/pic.png");
  }
  std::optional<std::string> Resolve(std::string_view target) override {
    calls.emplace_back(target);
    auto r = index_.Resolve(target, from_);
    if (!r) return std::nullopt;
    return UrlForNotePath(r->path);
  }
  std::optional<std::string> ResolveAttachment(std::string_view target) override {
    auto r = index_.Resolve(target, from_);
    if (!r) return std::nullopt;
    return "/assets/" + r->path;
  }
  std::vector<std::string> calls;

 private:
  LinkIndex index_;
  std::string from_ = "Folder/Here.md";
};

RenderResult Render(std::string_view md, IndexResolver* resolver = nullptr,
                    std::string_view path = "Folder/Here.md") {
  static IndexResolver shared;
  RenderOptions opts;
  opts.resolver = resolver != nullptr ? resolver : &shared;
  return RenderNote(md, path, opts);
}

bool Has(const std::string& hay, std::string_view needle) {
  return hay.find(needle) != std::string::npos;
}

}  // namespace

TEST_CASE("render: paragraphs, emphasis, strikethrough, breaks, entities") {
  auto r = Render("Hello *em* **strong** ~~gone~~ `co<de>`  \nnext &amp; &copy; &#x41; &bogus;\n");
  CHECK(r.html ==
        "<p>Hello <em>em</em> <strong>strong</strong> <del>gone</del> <code>co&lt;de&gt;</code><br>\n"
        "next &amp; © A &amp;bogus;</p>\n");
  CHECK(r.text == "Hello em strong gone co<de>\nnext & © A &bogus;");
}

TEST_CASE("render: headings get de-duplicated ids") {
  auto r = Render("# Intro\n## Getting *Started*!\n## Getting Started\n### Über uns\n");
  CHECK(Has(r.html, "<h1 id=\"intro\">Intro</h1>"));
  CHECK(Has(r.html, "<h2 id=\"getting-started\">Getting <em>Started</em>!</h2>"));
  CHECK(Has(r.html, "<h2 id=\"getting-started-1\">Getting Started</h2>"));
  CHECK(Has(r.html, "<h3 id=\"über-uns\">Über uns</h3>"));
  REQUIRE(r.headings.size() == 4);
  CHECK(r.headings[1].level == 2);
  CHECK(r.headings[1].text == "Getting Started!");
  CHECK(r.headings[2].id == "getting-started-1");
}

TEST_CASE("render: an empty heading at the end points inside the text (found by fuzzing)") {
  auto r = Render("(\n#");
  REQUIRE(r.headings.size() == 1);
  CHECK(r.text == "(");
  CHECK(r.headings[0].text_offset <= r.text.size());
}

TEST_CASE("render: lists, task lists, ordered start") {
  auto r = Render("- a\n- b\n\n3. x\n4. y\n\n- [ ] todo\n- [x] done\n");
  CHECK(Has(r.html, "<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n"));
  CHECK(Has(r.html, "<ol start=\"3\">\n<li>x</li>\n"));
  CHECK(Has(r.html, "<li class=\"task-list-item\" data-task=\" \"><input type=\"checkbox\" disabled> todo</li>"));
  CHECK(Has(r.html, "<li class=\"task-list-item is-checked\" data-task=\"x\"><input type=\"checkbox\" disabled checked> done</li>"));
  CHECK(Has(Render("1. one\n").html, "<ol>\n<li>one</li>"));
}

TEST_CASE("render: code blocks, blockquote, hr, math") {
  auto r = Render("```cpp\nint a<b;\n```\n\n    indented\n\n> quoted\n\n---\n\n$x<y$ and $$z$$\n");
  CHECK(Has(r.html, "<pre><code class=\"language-cpp\"><span class=\"hl-type\">int</span> a&lt;b;\n</code></pre>\n"));
  CHECK(Has(r.html, "<pre><code>indented\n</code></pre>"));
  CHECK(Has(r.html, "<blockquote>\n<p>quoted</p>\n</blockquote>\n"));
  CHECK(Has(r.html, "<hr>\n"));
  CHECK(Has(r.html, TexToMathml("x<y", false)));
  CHECK(Has(r.html, TexToMathml("z", true)));
  auto bad = Render("```\" onclick=\"x\nc\n```\n");
  CHECK(!Has(bad.html, "\" onclick"));
}

TEST_CASE("render: tables with alignment") {
  auto r = Render("| a | b | c |\n|:--|:-:|--:|\n| 1 | 2 | 3 |\n");
  CHECK(Has(r.html, "<table>\n<thead>\n<tr>\n<th align=\"left\">a</th>\n<th align=\"center\">b</th>\n"
                    "<th align=\"right\">c</th>\n</tr>\n</thead>\n<tbody>\n<tr>\n<td align=\"left\">1</td>"));
  CHECK(Has(r.html, "</tbody>\n</table>\n"));
  CHECK(r.text == "a b c\n1 2 3");
}

TEST_CASE("render: wikilink forms") {
  IndexResolver res;
  auto r = Render(
      "[[Other note]] [[Other note|shown *here*]] [[Other note#Some Heading]] [[#Local Part]] "
      "[[Folder/Sub/Deep]] [[Other note.md]] [[alias name]] [[Моя заметка]] [[Other note#^blk1]]\n",
      &res);
  CHECK(Has(r.html, "<a href=\"/other-note\" class=\"internal-link\">Other note</a>"));
  CHECK(Has(r.html, "<a href=\"/other-note\" class=\"internal-link\">shown <em>here</em></a>"));
  CHECK(Has(r.html, "<a href=\"/other-note#some-heading\" class=\"internal-link\">Other note &gt; Some Heading</a>"));
  CHECK(Has(r.html, "<a href=\"#local-part\" class=\"internal-link\">Local Part</a>"));
  CHECK(Has(r.html, "<a href=\"/folder/sub/deep\" class=\"internal-link\">Folder/Sub/Deep</a>"));
  CHECK(Has(r.html, "<a href=\"/other-note\" class=\"internal-link\">Other note.md</a>"));
  CHECK(Has(r.html, "<a href=\"/folder/target\" class=\"internal-link\">alias name</a>"));
  CHECK(Has(r.html, "<a href=\"/%D0%B7%D0%B0%D0%BC%D0%B5%D1%82%D0%BA%D0%B8/%D0%BC"));
  CHECK(Has(r.html, "<a href=\"/other-note#block-blk1\" class=\"internal-link\">"));
  CHECK(r.warnings.empty());
  // [[#Local Part]] asks no resolver.
  CHECK(std::find(res.calls.begin(), res.calls.end(), "") == res.calls.end());
  REQUIRE(r.links.size() == 8);
  CHECK(r.links[2].target == "Other note");
  CHECK(r.links[2].anchor == "Some Heading");
  CHECK(r.links[7].anchor == "^blk1");
  CHECK(r.links[0].resolved);
  CHECK(!r.links[0].embed);
  CHECK(r.text == "Other note shown here Other note > Some Heading Local Part Folder/Sub/Deep "
                  "Other note.md alias name Моя заметка Other note > ^blk1");
}

TEST_CASE("render: wikilink in a table cell with \\| alias") {
  auto r = Render("| col | b |\n|---|---|\n| [[Other note\\|the alias]] | x |\n");
  CHECK(Has(r.html, "<td><a href=\"/other-note\" class=\"internal-link\">the alias</a></td>"));
  CHECK(Has(r.html, "<td>x</td>"));
  REQUIRE(r.links.size() == 1);
  CHECK(r.links[0].target == "Other note");
}

TEST_CASE("render: dangling links are dead text with a warning") {
  auto r = Render("See [[Missing Note|there]] and [[Gone]].\n");
  CHECK(Has(r.html, "<span class=\"link-dead is-unresolved\" title=\"Missing note: Missing Note\">there</span>"));
  CHECK(Has(r.html, "<span class=\"link-dead is-unresolved\" title=\"Missing note: Gone\">Gone</span>"));
  REQUIRE(r.warnings.size() == 2);
  CHECK(r.warnings[0] == "dangling link [[Missing Note]]");
  REQUIRE(r.links.size() == 2);
  CHECK(!r.links[0].resolved);
  RenderOptions none;  // no resolver: everything internal is dangling
  auto n = RenderNote("[[Other note]]", "x.md", none);
  CHECK(Has(n.html, "link-dead"));
}

TEST_CASE("render: markdown links to notes, external, unsafe") {
  auto r = Render(
      "[a](Other%20note.md) [b](<Other note.md>) [c](Other%20note.md#Some%20Heading) "
      "[d](https://example.com/x?a=1&b=2 \"T\") [e](#My Heading) [f](Nope.md) [g](javascript:alert(1)) "
      "[h](/about) www.example.org\n");
  CHECK(Has(r.html, "<a href=\"/other-note\" class=\"internal-link\">a</a>"));
  CHECK(Has(r.html, "<a href=\"/other-note\" class=\"internal-link\">b</a>"));
  CHECK(Has(r.html, "<a href=\"/other-note#some-heading\" class=\"internal-link\">c</a>"));
  CHECK(Has(r.html, "<a href=\"https://example.com/x?a=1&amp;b=2\" class=\"external-link\" title=\"T\" rel=\"noopener\">d</a>"));
  CHECK(Has(r.html, "[e](#My Heading)"));  // not a link in CommonMark (space in URL)
  CHECK(Has(r.html, "<span class=\"link-dead is-unresolved\" title=\"Missing note: Nope.md\">f</span>"));
  CHECK(Has(r.html, "<span class=\"link-dead is-unresolved\" title=\"Unsafe link removed\">g</span>"));
  CHECK(!Has(r.html, "javascript"));
  CHECK(Has(r.html, "<a href=\"/about\">h</a>"));
  CHECK(Has(r.html, "<a href=\"http://www.example.org\" class=\"external-link\" rel=\"noopener\">www.example.org</a>"));
  CHECK(Has(Render("[e](#My%20Heading)").html, "<a href=\"#my-heading\">e</a>"));
  CHECK(std::find(r.warnings.begin(), r.warnings.end(), "dangling link [[Nope.md]]") != r.warnings.end());
  REQUIRE(r.links.size() == 4);
  CHECK(r.links[0].target == "Other note.md");
  CHECK(r.links[2].anchor == "Some Heading");
  CHECK(!r.links[3].resolved);
}

TEST_CASE("render: embeds") {
  IndexResolver res;
  auto r = Render("![[pic.png]] ![[pic.png|300]] ![[pic.png|640x480]] ![[pic.png|A cat]] "
                  "![[unknown.jpg]] ![[Other note]] ![[Gone]] \\![[Other note]] `![[x]]` !x\n",
                  &res);
  CHECK(Has(r.html, "<img src=\"/assets/img/pic.png\" alt=\"pic.png\" loading=\"lazy\">"));
  CHECK(Has(r.html, "<img src=\"/assets/img/pic.png\" alt=\"pic.png\" width=\"300\" loading=\"lazy\">"));
  CHECK(Has(r.html, "<img src=\"/assets/img/pic.png\" alt=\"pic.png\" width=\"640\" height=\"480\" loading=\"lazy\">"));
  CHECK(Has(r.html, "<img src=\"/assets/img/pic.png\" alt=\"A cat\" loading=\"lazy\">"));
  CHECK(Has(r.html, "<span class=\"link-dead is-unresolved\" title=\"Missing attachment: unknown.jpg\">unknown.jpg</span>"));
  CHECK(std::find(r.warnings.begin(), r.warnings.end(), "missing attachment ![[unknown.jpg]]") != r.warnings.end());
  CHECK(Has(r.html, "<a href=\"/other-note\" class=\"embed-link internal-link\">Other note</a>"));
  CHECK(Has(r.html, "<span class=\"link-dead is-unresolved\" title=\"Missing note: Gone\">Gone</span>"));
  CHECK(Has(r.html, " !<a href=\"/other-note\" class=\"internal-link\">Other note</a>"));  // escaped: a plain link
  CHECK(Has(r.html, "<code>![[x]]</code>"));
  CHECK(Has(r.html, " !x</p>"));
  CHECK(std::find(r.warnings.begin(), r.warnings.end(), "dangling embed ![[Gone]]") != r.warnings.end());
  REQUIRE(r.links.size() == 8);
  CHECK(r.links[0].embed);
  CHECK(r.links[0].resolved);
  CHECK(!r.links[4].resolved);
  CHECK(r.links[5].embed);
  CHECK(!r.links[7].embed);
  auto code = Render("```\n![[x]]\n```\n");
  CHECK(Has(code.html, "<code>![[x]]\n</code>"));
}

TEST_CASE("render: images") {
  auto r = Render("![alt *text*](pic.png \"Title\") ![x](https://cdn.example/p.jpg) ![y](javascript:alert(1))\n");
  CHECK(Has(r.html, "<img src=\"/assets/img/pic.png\" alt=\"alt text\" title=\"Title\">"));  // the vault's file
  CHECK(Has(r.html, "<img src=\"https://cdn.example/p.jpg\" alt=\"x\">"));
  CHECK(Has(r.html, "<span class=\"link-dead is-unresolved\">y</span>"));
  CHECK(!Has(r.html, "javascript"));
  CHECK(r.text.find("alt") == std::string::npos);
}

TEST_CASE("render: raw HTML is sanitised, also when split across callbacks") {
  auto r = Render("x <a href=\"https://e.com\"\nonclick=\"evil()\" title=\"t\">link</a> y\n\n"
                  "<div class=\"box\">\n<script>alert(1)</script>\n</div>\n\nafter <b>bold\n");
  CHECK(Has(r.html, "<a href=\"https://e.com\" title=\"t\" rel=\"noopener\">link</a>"));
  CHECK(!Has(r.html, "onclick"));
  CHECK(Has(r.html, "<div class=\"box\">"));
  CHECK(!Has(r.html, "script"));  // dropped with its content (issue 28)
  CHECK(!Has(r.html, "alert"));
  CHECK(Has(r.html, "<p>after <b>bold</b></p>"));  // closed at the end of its paragraph
  auto stray = Render("> </div></blockquote>\n\nok\n");
  CHECK(!Has(stray.html, "</div>"));
  CHECK(stray.html.find("</blockquote>") == stray.html.rfind("</blockquote>"));
  auto scoped = Render("<div>\n\n*md inside*\n\n</div>\n");
  CHECK(scoped.html == "<div>\n<p><em>md inside</em></p>\n</div>\n");
}

TEST_CASE("render: title fallbacks and frontmatter") {
  auto fm = Render("---\ntitle: From FM\n---\n# Heading\n", nullptr, "Folder/Here.md");
  CHECK(fm.title == "From FM");
  CHECK(fm.frontmatter.present);
  CHECK(!Has(fm.html, "title:"));
  // Obsidian Publish: the file name, never the first heading (issue 28).
  CHECK(Render("Intro\n\n# First H1\n\n# Second\n", nullptr, "Folder/New name.md").title == "New name");
  CHECK(Render("# Old heading\n", nullptr, "New name.md").title == "New name");
  CHECK(Render("## Only h2\n", nullptr, "Folder/My Note.md").title == "My Note");
  CHECK(Render("text", nullptr, "Root.md").title == "Root");
  // The rule on its own, without a render (ingest retitles stored notes with it).
  CHECK(NoteTitle(ParseFrontmatter("---\ntitle:  Set \n---\n# H\n"), "a/b.md") == "Set");
  CHECK(NoteTitle(ParseFrontmatter("# Heading\n"), "Folder/Some Note.MD") == "Some Note");
  auto bad = Render("---\ntitle: [unclosed\n---\nBody\n");
  CHECK(Has(bad.html, "<p>Body</p>"));
  REQUIRE(!bad.warnings.empty());
  CHECK(bad.warnings[0].rfind("frontmatter line", 0) == 0);
  auto open = Render("---\ntitle: x\n\nBody\n");
  CHECK(Has(open.html, "Body"));
  CHECK(!open.warnings.empty());
}

TEST_CASE("render: plain text") {
  auto r = Render("# Title\n\nOne *two*\nthree.\n\n- item 1\n- item 2\n\n```\ncode\n```\n\n<p>raw &amp; html</p>\n");
  CHECK(r.text == "Title\nOne two three.\nitem 1\nitem 2\ncode\nraw & html");
}

TEST_CASE("render: degenerate Obsidian syntax does not break") {
  auto weird = Render("![[]] [[]] ![[ ]] [[|x]] [[#]] ![[ ![[a\n\0\n> [!\n> [!]\n\n[^\n\n[^]: x\n==\n%%\n", nullptr);
  CHECK(!weird.html.empty());
  auto nested = Render("> [!a]\n> > [!b]\n> > > [!c] ==x== #t [^1] ^id\n\n[^1]: y\n");
  CHECK(nested.html.find("data-callout=\"c\"") != std::string::npos);
}
