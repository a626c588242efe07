// XSS corpus in headless Chromium (issue 9): a vault full of script
// injection vectors (note bodies, frontmatter titles, aliases, tags,
// descriptions and other fields, file and folder names, hostile SVG, PDF and
// HTML attachments) is pushed through the real stack (nats-server,
// folio-storage, folio-ingest --storage, folio-edge --storage, folio-search;
// notes and SVG/PDF/PNG attachments with the real `folio` CLI, the HTML
// attachments, which the CLI does not send, as a JSON push). Chromium then
// loads every page: each note (URLs from the manifest), every page they link
// to (home, folders, tags, recent), each alias URL, /search with vectors in
// the query and queries whose results show the vectors, the 404 page with
// vectors in the path, the feeds, and every attachment, opened directly.
//
// Every vector, if it runs, leaves a trace: console.log('XSS-FIRED-<id>'),
// top.__xss='<id>', or a navigation (meta refresh to /xss-nav-<id>). After
// each load the probe also scans the DOM for what would run on a click or a
// hover: event-handler attributes, javascript:/vbscript:/data: URLs, and
// script-capable elements carrying a vector. Any trace fails the test with
// the page and the vector's id (the ids are listed next to the vectors below).
//
// The first test case is the positive control: pages that do run script
// (served by a local libs/http server, among them the same SVG as the vault's)
// must be caught by the same checks, and clean or downloaded ones must not.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "../integration/cluster.h"
#include "browser.h"
#include "folio/core/hash.h"
#include "folio/core/json.h"
#include "folio/core/text.h"
#include "folio/markdown/slug.h"
#include "page_server.h"

using namespace folio;
using namespace folio::it;
using folio::e2e::Browser;
using folio::e2e::PageResult;
using folio::e2e::Visit;

namespace {

// ---- payloads ----

// Runs as a statement: logs the marker first (an iframe of another origin
// cannot write to top, but its console is still ours), then marks top.
std::string Js(const std::string& id) { return "console.log('XSS-FIRED-" + id + "');top.__xss='" + id + "'"; }
// Without parentheses, for URLs (markdown link destinations end at ')').
std::string JsUrl(const std::string& id) { return "javascript:top.__xss='" + id + "'"; }

// A double-quoted YAML scalar.
std::string Yaml(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Standard base64 (the push API's "data").
std::string Base64(std::string_view s) {
  std::string b = Base64UrlEncode(s);
  for (char& c : b) c = c == '-' ? '+' : c == '_' ? '/' : c;
  return b;
}

// The hostile SVG: script, onload, a javascript: link and HTML in a foreignObject.
std::string EvilSvg(const std::string& id) {
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"200\" "
         "height=\"60\" onload=\"" + Js(id + "-onload") + "\"><script>" + Js(id + "-script") +
         "</script><a xlink:href=\"" + JsUrl(id + "-link") + "\"><text y=\"20\">svg</text></a>"
         "<foreignObject width=\"100\" height=\"40\"><body xmlns=\"http://www.w3.org/1999/xhtml\">"
         "<img src=\"x\" onerror=\"" + Js(id + "-foreign") + "\"/></body></foreignObject></svg>";
}

std::string EvilHtml(const std::string& id) {
  return "<!doctype html><html><body><script>" + Js(id) + "</script><img src=x onerror=\"" + Js(id + "-img") +
         "\"></body></html>";
}

struct VaultFile {
  std::string path;
  std::string content;
  std::vector<std::string> labels = {};  // "[r1]"...: shown as text on the note's page
};

// Raw HTML in a note body (ids r*).
VaultFile RawHtmlNote() {
  const std::vector<std::pair<std::string, std::string>> v = {
      {"r1", "<script>" + Js("r1") + "</script>"},
      {"r2", "<img src=x onerror=\"" + Js("r2") + "\">"},
      {"r3", "<svg onload=\"" + Js("r3") + "\"></svg>"},
      {"r4", "<svg><script>" + Js("r4") + "</script></svg>"},
      {"r5", "<iframe srcdoc=\"&lt;script&gt;" + Js("r5") + "&lt;/script&gt;\"></iframe>"},
      {"r6", "<iframe src=\"" + JsUrl("r6") + "\"></iframe>"},
      {"r7", "<a href=\"" + JsUrl("r7") + "\">plain javascript: link</a>"},
      {"r8", "<a href=\"&#106;avascript:top.__xss='r8'\">decimal entity</a>"},
      {"r9", "<a href=\"&#x6A;&#x61;vascript&colon;top.__xss='r9'\">hex entity and &amp;colon;</a>"},
      {"r10", "<a href=\" java&#x09;script:top.__xss='r10'\">tab in the scheme</a>"},
      {"r11", "<a href=\"JaVaScRiPt:top.__xss='r11'\">mixed case</a>"},
      {"r12", "<a href=\"data:text/html,&lt;script&gt;" + Js("r12") + "&lt;/script&gt;\">data: link</a>"},
      {"r13", "<a href=\"vbscript:top.__xss='r13'\">vbscript</a>"},
      {"r14", "<math href=\"" + JsUrl("r14") + "\"><mtext>math href</mtext></math>"},
      {"r15", "<math><maction actiontype=\"statusline\" xlink:href=\"" + JsUrl("r15") + "\">m</maction></math>"},
      {"r16", "<form action=\"" + JsUrl("r16") + "\"><input type=submit formaction=\"" + JsUrl("r16") +
                  "\"><button formaction=\"" + JsUrl("r16") + "\">go</button></form>"},
      {"r17", "<meta http-equiv=\"refresh\" content=\"0;url=" + JsUrl("r17") + "\">"},
      {"r18", "<meta http-equiv=\"refresh\" content=\"0;url=/xss-nav-r18\">"},
      {"r19", "<base href=\"https://xss-r19.invalid/\">"},
      {"r20", "<object data=\"" + JsUrl("r20") + "\"></object>"},
      {"r21", "<embed src=\"" + JsUrl("r21") + "\">"},
      {"r22", "<object data=\"data:text/html,&lt;script&gt;" + Js("r22") + "&lt;/script&gt;\"></object>"},
      {"r23", "<div style=\"background-image:url(" + JsUrl("r23") + ")\">css url</div>"},
      {"r24", "<div style=\"width:expression(top.__xss='r24')\">css expression</div>"},
      {"r25", "<style>@import '" + JsUrl("r25") + "'; body{--xss:r25}</style>"},
      {"r26", "<link rel=\"stylesheet\" href=\"" + JsUrl("r26") + "\">"},
      {"r27", "<details open ontoggle=\"" + Js("r27") + "\"><summary>d</summary>x</details>"},
      {"r28", "<video><source onerror=\"" + Js("r28") + "\"></video>"},
      {"r29", "<audio src=x onerror=\"" + Js("r29") + "\"></audio>"},
      {"r30", "<body onload=\"" + Js("r30") + "\">"},
      {"r31", "<input autofocus onfocus=\"" + Js("r31") + "\">"},
      {"r32", "<noscript><p title=\"</noscript><img src=x onerror=" + Js("r32") + ">\"></noscript>"},
      {"r33", "<math><mtext><table><mglyph><style><img src=x onerror=\"" + Js("r33") + "\">"},
      {"r34", "<svg><a xlink:href=\"" + JsUrl("r34") + "\"><text y=\"20\">svg link</text></a></svg>"},
      {"r35", "<svg><animate onbegin=\"" + Js("r35") + "\" attributeName=\"x\" dur=\"1s\"></svg>"},
      {"r36", "<svg><foreignObject><img src=x onerror=\"" + Js("r36") + "\"></foreignObject></svg>"},
      {"r37", "<template><img src=x onerror=\"" + Js("r37") + "\"></template>"},
      {"r38", "<img \"\"\"><script>" + Js("r38") + "</script>\">"},
      {"r39", "<<script>" + Js("r39") + "//<</script>"},
      {"r40", "<scr<script>ipt>" + Js("r40") + "</scr</script>ipt>"},
      {"r41", "<iframe src=\"data:text/html;base64," + Base64("<script>" + Js("r41") + "</script>") + "\"></iframe>"},
      {"r42", "<marquee onstart=\"" + Js("r42") + "\">m</marquee>"},
      {"r43", "<img src=x onerror=&#x63;onsole.log('XSS-FIRED-r43')>"},
      {"r44", "<a href=\"#\" onclick=\"" + Js("r44") + "\">onclick</a>"},
      {"r45", "<img src=\"" + JsUrl("r45") + "\">"},
      {"r46", "<x-custom onclick=\"" + Js("r46") + "\">custom element</x-custom>"},
      {"r47", "<script src=\"data:,console.log('XSS-FIRED-r47')\"></script>"},
      {"r48", "<div title=\"x\" onmouseover=\"" + Js("r48") + "\">hover</div>"},
      {"r49", "<img src=x onerror=\"" + Js("r49") + "\"/><p/onclick=\"" + Js("r49") + "\">slash</p>"},
      {"r50", "<a href=\"javas&#99;ript:top.__xss='r50'\">entity mid-scheme</a>"},
  };
  VaultFile f{"Raw HTML.md", "# Vectors: raw HTML\n\n"};
  for (const auto& [id, html] : v) {
    f.content += "[" + id + "] " + html + "\n\n";
    f.labels.push_back("[" + id + "]");
  }
  return f;
}

// Markdown and Obsidian syntax (ids m*).
VaultFile MarkdownNote() {
  VaultFile f{"Markdown vectors.md", ""};
  std::string& s = f.content;
  s = "# Vectors: markdown\n\n";
  auto line = [&](const std::string& id, const std::string& text) { s += "[" + id + "] " + text + "\n\n"; };
  line("m1", "[markdown link](" + JsUrl("m1") + ")");
  line("m2", "[upper case](JAVASCRIPT:top.__xss='m2')");
  line("m3", "[vbscript](vbscript:top.__xss='m3')");
  line("m4", "[data](data:text/html;base64," + Base64("<script>" + Js("m4") + "</script>") + ")");
  line("m5", "![image](" + JsUrl("m5") + ")");
  line("m6", "![image](x\"onerror=\"top.__xss='m6')");
  line("m7", "[reference link][r7]\n\n[r7]: " + JsUrl("m7"));
  line("m8", "<" + JsUrl("m8") + ">");
  line("m9", "[titled](https://example.com \"x\\\" onmouseover=\\\"" + Js("m9") + "\")");
  line("m10", "[[<script>" + Js("m10") + "</script>]]");
  line("m11", "[[Raw HTML|<img src=x onerror=" + Js("m11") + ">]]");
  line("m12", "[[Raw HTML#<img src=x onerror=" + Js("m12") + ">]]");
  line("m13", "[[missing <img src=x onerror=" + Js("m13") + ">]]");
  line("m14", "![[<img src=x onerror=" + Js("m14") + ">]]");
  line("m15", "![[evil.svg|<img src=x onerror=" + Js("m15") + ">]]");
  line("m16", "![[Raw HTML#<svg onload=" + Js("m16") + ">]]");
  s += "> [!note] [m17] <img src=x onerror=\"" + Js("m17") + "\">\n> callout body\n\n";
  s += "> [!<img src=x onerror=" + Js("m18") + ">] [m18] hostile callout type\n> body\n\n";
  s += "## [m19] heading <img src=x onerror=\"" + Js("m19") + "\">\n\n";
  line("m20", "`<script>" + Js("m20") + "</script>` in a code span");
  s += "[m21] fence info string:\n\n```\"><img src=x onerror=" + Js("m21") + ">\ncode\n```\n\n";
  line("m22", "footnote[^f22]\n\n[^f22]: <img src=x onerror=\"" + Js("m22") + "\">");
  line("m23", "inline footnote^[<img src=x onerror=" + Js("m23") + ">]");
  s += "[m24] mermaid:\n\n```mermaid\ngraph TD\n  A[\"<img src=x onerror=" + Js("m24") +
       ">\"] --> B\n  click A call alert(\"XSS-m24\")\n```\n\n";
  line("m25", "$\\href{" + JsUrl("m25") + "}{click}$ and $$\\href{" + JsUrl("m25") + "}{x}$$");
  line("m26", "==<img src=x onerror=" + Js("m26") + ">==");
  line("m27", "%%<script>" + Js("m27") + "</script>%% hidden comment");
  line("m28", "#tag\"><img/src=x/onerror=" + Js("m28") + ">");
  s += "| [m29] cell |\n|---|\n| <img src=x onerror=\"" + Js("m29") + "\"> |\n\n";
  line("m30", "\n- [ ] <img src=x onerror=\"" + Js("m30") + "\"> task");
  line("m31", "www.example.com/\"><img src=x onerror=" + Js("m31") + ">");
  line("m32", "https://example.com/<script>" + Js("m32") + "</script>");
  line("m33", "[angle](<" + JsUrl("m33") + ">)");
  line("m34", "[entity](&#106;avascript:top.__xss='m34')");
  line("m35", "[colon](javascript&colon;top.__xss='m35')");
  line("m36", "![[evil.svg]] embedded SVG, [[evil.svg]] linked, [markdown link](evil.svg)");
  line("m37", "![[evil.pdf]] a PDF that is HTML inside");
  line("m38", "[[javascript:top.__xss='m38']] wikilink to a scheme");
  line("m39", "![[<img src=x onerror=" + Js("m39") + ">.png]] missing hostile attachment");
  for (int i = 1; i <= 39; ++i) f.labels.push_back("[m" + std::to_string(i) + "]");
  return f;
}

VaultFile FrontmatterNote() {
  std::string s = "---\n";
  s += "title: " + Yaml("<script>" + Js("t1") + "</script><img src=x onerror=\"" + Js("t1") + "\"> [t1]") + "\n";
  s += "aliases: [" + Yaml("<img src=x onerror=" + Js("a1") + ">") + ", " + Yaml("\"><svg onload=" + Js("a2") + ">") +
       ", " + Yaml(JsUrl("a3")) + "]\n";
  s += "tags: [" + Yaml("<script>" + Js("g1") + "</script>") + ", " + Yaml("x\"onmouseover=\"" + Js("g2")) + ", " +
       Yaml(JsUrl("g3")) + "]\n";
  s += "description: " + Yaml("\"><script>" + Js("d1") + "</script><meta http-equiv=refresh content=0;url=/xss-nav-d1>") +
       "\n";
  s += "image: " + Yaml(JsUrl("i1") + "\"><img src=x onerror=\"" + Js("i1") + "\">") + "\n";
  s += "cssclasses: [" + Yaml("x\" onmouseover=\"" + Js("c1")) + ", " + Yaml("<script>" + Js("c2") + "</script>") + "]\n";
  s += "lang: " + Yaml("en\" onmouseover=\"" + Js("l1")) + "\n";
  s += "date: " + Yaml("<img src=x onerror=" + Js("dt1") + ">") + "\n";
  s += "updated: " + Yaml("\"><script>" + Js("u1") + "</script>") + "\n";
  s += "permalink: " + Yaml(JsUrl("p1")) + "\n";
  s += "---\n[fm] A note whose frontmatter is hostile, with an inline tag #inline\"><img src=x onerror=" + Js("g4") +
       ">\n\nIt links to [[Raw HTML]] and [[Markdown vectors]].\n";
  return {"Frontmatter vectors.md", s, {"[t1]", "[fm]"}};
}

// No frontmatter: title from the H1, description from the first paragraph.
VaultFile HeadingTitleNote() {
  return {"Heading title.md",
          "# [h1] <img src=x onerror=\"" + Js("h1") + "\"> heading title\n\n\"><script>" + Js("h2") +
              "</script> [h2] first paragraph, the description\n\nLinks: [[Frontmatter vectors]].\n",
          {"[h1]", "[h2]"}};
}

std::vector<VaultFile> Vault() {
  std::vector<VaultFile> v = {
      RawHtmlNote(),
      MarkdownNote(),
      FrontmatterNote(),
      HeadingTitleNote(),
      // File and folder names (ids f*); '/' cannot be in a name.
      {"<img src=x onerror=" + Js("f1") + ">.md", "[f1] hostile file name. [[Raw HTML]]\n", {"[f1]"}},
      {"<svg onload=" + Js("f2") + ">/Child.md", "[f2] in a hostile folder. [[Heading title]]\n", {"[f2]"}},
      {JsUrl("f3") + ".md", "[f3] a file named like a javascript: URL\n", {"[f3]"}},
      {"x\" onmouseover=\"" + Js("f4") + ".md", "[f4] quotes in the name\n", {"[f4]"}},
      {"\"><svg onload=" + Js("f5") + ">.md", "[f5] breaking out of an attribute\n", {"[f5]"}},
      {JsUrl("f6") + "/Note.md", "[f6] in a folder named like a javascript: URL\n", {"[f6]"}},
      {"<script>" + Js("f7") + ".md", "[f7] an unclosed script tag as the name\n", {"[f7]"}},
      {"Links to names.md",
       "[names] [[<img src=x onerror=" + Js("f1") + ">]] [[Child]] [[" + JsUrl("f3") + "]] [[x\" onmouseover=\"" +
           Js("f4") + "]] [[\"><svg onload=" + Js("f5") + ">]] [[Note]] [[<script>" + Js("f7") +
           "]] ![[<img src=x onerror=" + Js("an1") + ">.png]]\n",
       {"[names]"}},
      // Attachments (ids s*, pdf1, an1): pushed by the CLI.
      {"evil.svg", EvilSvg("s1")},
      {"evil.pdf", EvilHtml("pdf1")},
      {"<img src=x onerror=" + Js("an1") + ">.png", std::string("\x89PNG\r\n\x1a\n", 8) + "not really a png"},
  };
  return v;
}

// Pushed as JSON: attachments the CLI does not send (ids html*), and the note
// that links and embeds them.
std::string HtmlAttachmentsPush() {
  JsonWriter w;
  w.BeginObject().Key("notes").BeginArray();
  w.BeginObject()
      .Key("path").String("Html attachments.md")
      .Key("content").String("[html] [[evil.html]] ![[evil.html]] [xhtml](evil.xhtml) ![[evil.xml]] ![[evil.htm]]\n")
      .EndObject();
  w.EndArray().Key("attachments").BeginArray();
  const std::vector<std::pair<std::string, std::string>> files = {
      {"evil.html", EvilHtml("html1")},
      {"evil.htm", EvilHtml("html2")},
      {"evil.xhtml", "<html xmlns=\"http://www.w3.org/1999/xhtml\"><body><script>" + Js("html3") +
                         "</script></body></html>"},
      {"evil.xml", "<?xml version=\"1.0\"?><x:script xmlns:x=\"http://www.w3.org/1999/xhtml\">" + Js("html4") +
                       "</x:script>"},
  };
  for (const auto& [path, data] : files) {
    w.BeginObject().Key("path").String(path).Key("data").String(Base64(data)).EndObject();
  }
  w.EndArray().EndObject();
  return w.str();
}

// ---- detection ----

// Evaluated in every page after it settled. Returns JSON: findings (traces
// of script that ran, or would run on a click or hover), the page's links and
// attachment URLs (for the crawl), and its visible text.
constexpr const char* kProbe = R"JS((() => {
  const f = [];
  try { if (window.__xss) f.push('ran: window.__xss=' + window.__xss); } catch (e) {}
  const squash = v => v.replace(/[\u0000-\u0020]/g, '').toLowerCase();
  const urlAttrs = new Set(['href', 'src', 'action', 'formaction', 'xlink:href', 'data', 'poster', 'background',
                            'ping', 'srcset', 'codebase', 'dynsrc', 'lowsrc']);
  const all = document.querySelectorAll('*');
  for (const el of all) {
    for (const a of el.attributes) {
      const n = a.name.toLowerCase(), v = squash(a.value), what = el.tagName + ' ' + a.name + '=' + a.value.slice(0, 120);
      if (n.startsWith('on')) f.push('handler ' + what);
      else if (n === 'srcdoc') f.push('srcdoc ' + what);
      else if (urlAttrs.has(n) && /^(javascript|vbscript|data):/.test(v) && v !== 'data:,') f.push('script URL ' + what);
      else if (n === 'style' && /__xss|expression\(|javascript:/.test(v)) f.push('style ' + what);
      else if (n === 'content' && el.matches('meta[http-equiv]') && /url=|__xss|xss-nav/.test(v)) f.push('refresh ' + what);
    }
  }
  const risky = 'script,iframe,frame,frameset,object,embed,applet,base,form,style,svg,template,isindex,portal,' +
                'meta[http-equiv],link:not([rel=icon]):not([rel=stylesheet]):not([rel=canonical]):not([rel=alternate])';
  for (const el of document.querySelectorAll(risky)) {
    // The layout's own search box holds the reader's query in its input
    // (escaped); the attribute scan above still covers the form.
    if (el.matches('form.search-box[action="/_/search"][method=get]')) continue;
    const html = el.outerHTML;
    if (/__xss|xss-nav|xss-r19/i.test(html)) f.push('element ' + html.slice(0, 160));
  }
  for (const el of document.querySelectorAll('base,link[rel=stylesheet]')) {
    const u = el.getAttribute('href') || '';
    if (!u.startsWith('/') || u.startsWith('//')) f.push('foreign ' + el.outerHTML.slice(0, 160));
  }
  const abs = v => { try { return new URL(v, location.href).href; } catch (e) { return ''; } };
  const links = [...document.querySelectorAll('a[href]')].map(a => abs(a.getAttribute('href')));
  const assets = [];
  for (const el of all) {
    for (const n of ['src', 'href', 'data']) {
      const v = el.getAttribute(n);
      if (v && v.includes('/assets/')) assets.push(abs(v));
    }
  }
  return JSON.stringify({findings: f, links, assets,
                         text: document.body ? document.body.innerText : ''});
})())JS";

struct Seen {
  std::vector<std::string> fired;  // empty: nothing ran and nothing would
  std::vector<std::string> links, assets;
  std::string text;
  int status = 0;
  bool downloaded = false;  // Chromium did not render it (a download)
  std::string describe;     // the load's messages, for failure output
};

void Strings(simdjson::dom::element doc, const char* key, std::vector<std::string>* out) {
  simdjson::dom::array arr;
  if (doc[key].get_array().get(arr) != simdjson::SUCCESS) return;
  for (auto e : arr) {
    std::string_view s;
    if (e.get_string().get(s) == simdjson::SUCCESS) out->emplace_back(s);
  }
}

// Loads `url` and collects every trace of script: the probe's findings,
// console messages with the marker, dialogs, navigations after the load.
Seen Check(Browser& browser, const std::string& url) {
  Seen seen;
  Visit v;
  v.url = url;
  v.probe = kProbe;
  v.settle_ms = 250;
  PageResult r;
  Status s = browser.Load(v, &r);
  seen.describe = r.Describe();
  if (!s.ok()) {
    // A response Chromium does not render (Content-Disposition: attachment,
    // application/octet-stream) is a download: nothing of it can run.
    seen.downloaded = s.message().find("net::ERR_ABORTED") != std::string::npos;
    if (!seen.downloaded) seen.fired.push_back("load failed: " + s.message().substr(0, 300));
    return seen;
  }
  seen.status = r.status;
  simdjson::dom::parser parser;
  simdjson::padded_string padded(r.probe);
  simdjson::dom::element doc;
  if (parser.parse(padded).get(doc) != simdjson::SUCCESS) {
    seen.fired.push_back("probe returned no JSON: " + r.probe.substr(0, 200));
  } else {
    Strings(doc, "findings", &seen.fired);
    Strings(doc, "links", &seen.links);
    Strings(doc, "assets", &seen.assets);
    std::string_view text;
    if (doc["text"].get_string().get(text) == simdjson::SUCCESS) seen.text = text;
  }
  for (const auto& m : r.messages) {
    if (m.source.rfind("console.", 0) == 0 && m.text.find("XSS-FIRED") != std::string::npos) {
      seen.fired.push_back("ran: " + m.source + " " + m.text);
    }
  }
  for (const auto& d : r.dialogs) seen.fired.push_back("ran: dialog " + d);
  for (const auto& n : r.navigations) seen.fired.push_back("ran: navigation " + n);
  return seen;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += "    " + e + "\n";
  return s;
}

bool Any(const std::vector<std::string>& v, const std::string& needle) {
  for (const auto& e : v) {
    if (e.find(needle) != std::string::npos) return true;
  }
  return false;
}

void WriteFile(const std::filesystem::path& path, const std::string& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  REQUIRE_MESSAGE(static_cast<bool>(out), "cannot write ", path.string());
}

// Same-origin page URL (path + query) of an absolute link, or "" for links
// the crawl does not follow (other origins, assets, feeds, search).
std::string CrawlPath(const std::string& origin, const std::string& link) {
  if (link.rfind(origin + "/", 0) != 0) return "";
  std::string path = link.substr(origin.size());
  path = path.substr(0, path.find('#'));
  for (const char* skip : {"/assets/", "/_/search", "/rss.xml", "/sitemap.xml"}) {
    if (path.rfind(skip, 0) == 0) return "";
  }
  return path;
}

// From the manifest: each note's URL with its labels, each attachment's URL.
void ReadManifest(Cluster& c, const std::map<std::string, std::string>& labels_by_path,
                  std::map<std::string, std::string>* notes, std::set<std::string>* assets) {
  auto manifest = c.Manifest();
  INFO("manifest: ", manifest.status, " ", manifest.body);
  REQUIRE(manifest.status == 200);
  simdjson::dom::parser parser;
  simdjson::padded_string padded(manifest.body);
  simdjson::dom::element doc;
  REQUIRE(parser.parse(padded).get(doc) == simdjson::SUCCESS);
  for (const char* list : {"notes", "attachments"}) {
    simdjson::dom::array arr;
    REQUIRE(doc[list].get_array().get(arr) == simdjson::SUCCESS);
    for (auto e : arr) {
      std::string_view path, url;
      REQUIRE(e["path"].get_string().get(path) == simdjson::SUCCESS);
      REQUIRE(e["url"].get_string().get(url) == simdjson::SUCCESS);
      if (std::string_view(list) == "notes") {
        auto it = labels_by_path.find(std::string(path));
        (*notes)[std::string(url)] = it == labels_by_path.end() ? "" : it->second;
      } else {
        assets->insert(c.edge_url() + PercentEncodePath(url));
      }
    }
  }
}

// Loads pages one after another and collects what must fail the test.
class Sweep {
 public:
  // kPage: folio's HTML; anything injected in its DOM counts, ran or not.
  // kFeed: XML folio writes; may be a download. kAttachment: the author's
  // bytes served as they are, so only script that runs counts (the defence
  // there is how they are served: type, CSP, disposition); may be a download.
  enum class Kind { kPage, kFeed, kAttachment };

  Sweep(Browser* browser, std::string origin) : browser_(browser), origin_(std::move(origin)) {}

  // `path_or_url`: a path on the origin, or an absolute URL.
  Seen Load(const std::string& path_or_url, Kind kind) {
    std::string url = path_or_url.rfind("http", 0) == 0 ? path_or_url : origin_ + path_or_url;
    Seen s = Check(*browser_, url);
    ++loads_;
    std::vector<std::string> bad;
    for (const auto& f : s.fired) {
      if (kind != Kind::kAttachment || f.rfind("ran: ", 0) == 0 || f.rfind("load failed", 0) == 0) bad.push_back(f);
    }
    if (!bad.empty()) failures_.push_back(url + "\n" + Join(bad));
    if (s.downloaded && kind == Kind::kPage) failures_.push_back(url + "\n    was not rendered (download)\n");
    if (s.downloaded || s.status != 200) {
      outcomes_.push_back(url.substr(origin_.size()) + (s.downloaded ? " downloaded" : " " + std::to_string(s.status)));
    }
    return s;
  }

  size_t loads() const { return loads_; }
  const std::vector<std::string>& failures() const { return failures_; }
  // Pages that did not answer 200, and attachments Chromium downloaded.
  const std::vector<std::string>& outcomes() const { return outcomes_; }

 private:
  Browser* browser_;
  std::string origin_;
  size_t loads_ = 0;
  std::vector<std::string> failures_, outcomes_;
};

Browser& SharedBrowser() {
  static Browser browser;
  return browser;
}

}  // namespace

TEST_CASE("xss: the checks catch script that runs, or would run on a click (positive control)") {
  Browser& browser = SharedBrowser();
  INFO(browser.status().message());
  REQUIRE(browser.status().ok());
  using folio::e2e::FixedResponse;
  using folio::e2e::HtmlDocument;
  const std::string html = "text/html; charset=utf-8";
  std::map<std::string, FixedResponse> pages = {
      {"/clean", {200, html, HtmlDocument("<p>clean</p>")}},
      {"/escaped", {200, html, HtmlDocument("&lt;script&gt;" + Js("x") + "&lt;/script&gt; <code>top.__xss</code>")}},
      {"/script", {200, html, HtmlDocument("<script>" + Js("pc1") + "</script>")}},
      {"/img", {200, html, HtmlDocument("<img src=x onerror=\"" + Js("pc2") + "\">")}},
      {"/svg", {200, "image/svg+xml", EvilSvg("pc3")}},
      {"/refresh", {200, html, HtmlDocument("<meta http-equiv=\"refresh\" content=\"0;url=/xss-nav-pc4\">")}},
      {"/js-link", {200, html, HtmlDocument("<a href=\" java&#x09;script:top.__xss='pc5'\">latent</a>")}},
      {"/alert", {200, html, HtmlDocument("<script>alert('XSS-pc6')</script>")}},
      {"/iframe", {200, html, HtmlDocument("<iframe srcdoc=\"&lt;script&gt;" + Js("pc7") + "&lt;/script&gt;\"></iframe>")}},
      {"/download", {200, "application/octet-stream", EvilHtml("pc8")}},
      // As issue 9 item 2 serves attachments: the same SVG must not run.
      {"/svg-sandboxed",
       {200, "image/svg+xml", EvilSvg("pc9"),
        {{"Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox"},
         {"X-Content-Type-Options", "nosniff"}}}},
  };
  folio::e2e::PageServer server(pages, {404, html, HtmlDocument("not found")});

  struct Expect {
    std::string path;
    std::vector<std::string> traces;  // each must be among the findings
  };
  const std::vector<Expect> firing = {
      {"/script", {"ran: console.log XSS-FIRED-pc1", "ran: window.__xss=pc1", "element <script>"}},
      {"/img", {"ran: console.log XSS-FIRED-pc2", "handler IMG onerror"}},
      {"/svg", {"ran: console.log XSS-FIRED-pc3-onload", "ran: console.log XSS-FIRED-pc3-script"}},
      {"/refresh", {"ran: navigation frameNavigated", "/xss-nav-pc4"}},
      {"/js-link", {"script URL A href"}},
      {"/alert", {"ran: dialog alert: XSS-pc6"}},
      {"/iframe", {"ran: console.log XSS-FIRED-pc7", "srcdoc IFRAME"}},
  };
  for (const auto& e : firing) {
    Seen s = Check(browser, server.Url(e.path));
    INFO(e.path, " findings:\n", Join(s.fired), s.describe);
    for (const auto& t : e.traces) CHECK_MESSAGE(Any(s.fired, t), "missing trace: ", t);
  }
  for (const char* path : {"/clean", "/escaped"}) {
    Seen s = Check(browser, server.Url(path));
    INFO(path, " findings:\n", Join(s.fired), s.describe);
    CHECK(s.fired.empty());
    CHECK(s.status == 200);
  }
  Seen sandboxed = Check(browser, server.Url("/svg-sandboxed"));
  INFO("/svg-sandboxed findings:\n", Join(sandboxed.fired), sandboxed.describe);
  CHECK(sandboxed.status == 200);
  CHECK(!Any(sandboxed.fired, "ran: "));
  CHECK(Any(sandboxed.fired, "handler svg onload"));  // in its DOM, inert
  Seen d = Check(browser, server.Url("/download"));
  INFO("/download findings:\n", Join(d.fired), d.describe);
  CHECK(d.downloaded);
  CHECK(d.fired.empty());
}

TEST_CASE("xss: no vector in notes, names, frontmatter or attachments runs in any page of the site") {
  const auto started = std::chrono::steady_clock::now();
  // Mermaid is loaded from a CDN by default; no network here, and the
  // vectors must be inert without it.
  Cluster c({"--mermaid-url="}, /*start_services=*/false);
  c.StartStorage();
  c.AddIngestArgs(c.IngestStorageArgs());
  c.AddEdgeArgs(c.EdgeStorageArgs());
  c.StartIngest();
  c.StartEdge();
  c.StartSearch();  // search results show titles and snippets of the notes

  const std::filesystem::path vault = c.dir() + "/vault";
  const std::vector<VaultFile> files = Vault();
  for (const auto& f : files) WriteFile(vault / f.path, f.content);
  std::string out;
  int rc = c.RunCli({"push", vault.string(), "--server", c.ingest_url(), "--token", kToken}, &out);
  INFO("folio push:\n", out);
  INFO(c.Logs());
  REQUIRE(rc == 0);
  auto pushed = c.Push(HtmlAttachmentsPush());
  INFO("JSON push: ", pushed.status, " ", pushed.body);
  REQUIRE(pushed.status == 200);

  // Every note's page and attachment URL, from the manifest (frontmatter
  // can move a note: permalink), with the labels each note must show.
  std::map<std::string, std::string> labels_by_path;
  for (const auto& f : files) {
    for (const auto& l : f.labels) labels_by_path[f.path] += l + "\n";
  }
  labels_by_path["Html attachments.md"] = "[html]\n";
  std::map<std::string, std::string> notes;  // URL -> its labels, one a line
  std::set<std::string> assets;            // absolute URLs
  ReadManifest(c, labels_by_path, &notes, &assets);
  CHECK(assets.size() == 7);  // 3 from the CLI, 4 from the JSON push
  CHECK(notes.size() == labels_by_path.size());
  for (const auto& [url, labels] : notes) {
    auto page = c.WaitForPage(PercentEncodePath(url), 200, "", 20000);
    REQUIRE_MESSAGE(page.status == 200, "note page ", url, " never appeared");
  }

  // Listings come in the same batch as the notes of the last push; search
  // indexes the notes on its own time.
  REQUIRE(c.WaitForPage("/_/recent", 200, "/html-attachments", 20000).status == 200);
  REQUIRE(c.WaitForPage("/_/search?q=onerror", 200, "/raw-html", 30000).status == 200);

  Browser& browser = SharedBrowser();
  INFO(browser.status().message());
  REQUIRE(browser.status().ok());
  const std::string origin = c.edge_url();
  Sweep sweep(&browser, origin);
  using Kind = Sweep::Kind;

  // Pages: the notes, then everything they link to (listings, tags,
  // folders), breadth first.
  std::vector<std::string> queue = {"/", "/_/tags", "/_/recent"};
  for (const auto& [url, labels] : notes) queue.push_back(PercentEncodePath(url));
  std::set<std::string> visited;
  for (size_t i = 0; i < queue.size() && visited.size() < 300; ++i) {
    if (!visited.insert(queue[i]).second) continue;
    Seen s = sweep.Load(queue[i], Kind::kPage);
    for (const auto& a : s.assets) assets.insert(a);
    for (const auto& l : s.links) {
      std::string p = CrawlPath(origin, l);
      if (!p.empty() && !visited.count(p)) queue.push_back(p);
    }
    // The note rendered what the vault holds (the vectors reached the page).
    std::string decoded;
    if (!PercentDecode(queue[i], &decoded)) decoded = queue[i];
    auto it = notes.find(decoded);
    if (it != notes.end()) {
      for (size_t at = 0, nl; (nl = it->second.find('\n', at)) != std::string::npos; at = nl + 1) {
        std::string label = it->second.substr(at, nl - at);
        CHECK_MESSAGE(s.text.find(label) != std::string::npos, decoded, " does not show ", label);
      }
    }
  }
  // Aliases answer with a redirect page to their note.
  for (const std::string& alias : {"<img src=x onerror=" + Js("a1") + ">", "\"><svg onload=" + Js("a2") + ">",
                                   JsUrl("a3")}) {
    sweep.Load(PercentEncodePath("/" + markdown::SlugifySegment(alias)), Kind::kPage);
  }
  // Reflected input: the search page's query, the 404 page's path.
  for (const std::string& q : {"<script>" + Js("q1") + "</script>", "\"><img src=x onerror=" + Js("q2") + ">",
                               JsUrl("q3"), "';" + Js("q4") + ";//", "</script><script>" + Js("q5") + "</script>",
                               std::string("onerror"), std::string("script"), std::string("xss fired"),
                               std::string("javascript")}) {
    sweep.Load("/_/search?q=" + PercentEncodePath(q), Kind::kPage);
    // The fragment the page's live search inserts into the DOM (as nodes, so
    // an injected handler would run there too).
    sweep.Load("/_/search?fragment=1&q=" + PercentEncodePath(q), Kind::kPage);
  }
  for (const std::string& p : {"/<script>" + Js("n1") + "</script>", "/\"><img src=x onerror=" + Js("n2") + ">",
                               "/" + JsUrl("n3")}) {
    Seen s = sweep.Load(PercentEncodePath(p), Kind::kPage);
    CHECK_MESSAGE(s.status == 404, p, " answered ", s.status);
  }
  sweep.Load("/rss.xml", Kind::kFeed);
  sweep.Load("/sitemap.xml", Kind::kFeed);
  // Every attachment (the manifest's and any other the pages reference),
  // opened directly.
  for (const auto& a : assets) sweep.Load(a, Kind::kAttachment);

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf("xss: %zu loads (%zu pages crawled, %zu attachments) in %.1f s; pages:\n", sweep.loads(),
              visited.size(), assets.size(), seconds);
  for (const auto& p : visited) std::printf("  %s\n", p.c_str());
  std::printf("not 200 or not rendered:\n");
  for (const auto& o : sweep.outcomes()) std::printf("  %s\n", o.c_str());
  std::fflush(stdout);
  std::string report;
  for (const auto& f : sweep.failures()) report += "  " + f;
  CHECK_MESSAGE(sweep.failures().empty(), sweep.failures().size(), " page(s) ran or carry injected script:\n", report);
}
