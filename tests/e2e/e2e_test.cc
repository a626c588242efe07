// End-to-end test in headless Chromium (Debian's chromium package, driven
// over the DevTools pipe by browser.h): the e2e vault is pushed with the CLI
// to a real nats-server + folio-ingest + folio-edge, then Chromium opens the
// edge's pages in light and dark and checks that
//   - no console error occurs (console.error, uncaught exceptions, failed
//     loads, CSP violations...),
//   - no script injected through a note runs (PWNED markers, dialogs,
//     navigation away, dangerous elements or attributes in the DOM),
//   - the colour scheme really switches (the stylesheet loaded and honours
//     prefers-color-scheme),
// and saves screenshots as CI artifacts in <build>/e2e-artifacts/.
//
// The first test case proves each check can fail: the same checks are run
// against pages served by a local libs/http server that do break the rules.
//
// Chromium missing is a failure, not a skip: CI installs it
// (scripts/install-deps.sh).
#include <doctest/doctest.h>
#include <simdjson.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "../integration/cluster.h"
#include "browser.h"
#include "page_server.h"

using namespace folio;
using namespace folio::it;
using folio::e2e::Browser;
using folio::e2e::ConsoleEntry;
using folio::e2e::PageResult;
using folio::e2e::Visit;

namespace {

// Evaluated in every page after it settled. Returns JSON:
// {"findings":[...], "dark":bool, "bg":"rgb(...)", "title":"...", "h1":"..."}.
// findings: traces of injected script (markers set by the XSS fixture's
// vectors) and anything in the DOM that could run script or hijack the page.
constexpr const char* kProbe = R"JS((() => {
  const f = [];
  if (/^PWNED/.test(document.title)) f.push('document.title=' + document.title);
  for (const el of [document.documentElement, document.body]) {
    if (el && el.hasAttribute('data-pwned')) f.push('data-pwned on ' + el.tagName);
  }
  if (window.__pwned) f.push('window.__pwned=' + window.__pwned);
  const cssVar = getComputedStyle(document.documentElement).getPropertyValue('--pwned').trim();
  if (cssVar) f.push('css --pwned=' + cssVar);
  const dangerous = 'script,iframe,frame,frameset,object,embed,applet,base,form,style,' +
                    'meta[http-equiv],link[rel~="import"],svg script,svg foreignObject';
  // The layout's own search box (a plain GET form to /search in the header) is expected.
  const ownSearch = 'header.site-header > form.search-box[role=search][action="/_/search"][method=get]';
  // So are the site's own two scripts: the site script in <head> (same
  // origin, content-hashed) and the theme snippet, body's first child.
  const ownScript = (el) => el.tagName === 'SCRIPT' &&
      ((el.parentElement === document.head && /^\/_\/folio\.[0-9a-f]{12}\.js$/.test(el.getAttribute('src') || '')) ||
       (el === document.body.firstElementChild && !el.hasAttribute('src') &&
        el.textContent.startsWith('(function(){var t,d=document.documentElement;try{t=localStorage.getItem("folio-theme")')));
  for (const el of document.querySelectorAll(dangerous)) {
    if (el.matches(ownSearch) || ownScript(el)) continue;
    f.push('element ' + el.outerHTML.slice(0, 160));
  }
  const urlAttrs = ['href', 'src', 'action', 'formaction', 'xlink:href', 'data', 'poster',
                    'background', 'srcdoc', 'srcset', 'ping', 'cite', 'content'];
  for (const el of document.querySelectorAll('*')) {
    for (const a of el.attributes) {
      const name = a.name.toLowerCase();
      const v = a.value.replace(/[\u0000-\u0020]/g, '').toLowerCase();
      if (name.startsWith('on')) f.push('handler ' + el.tagName + ' ' + a.name + '=' + a.value.slice(0, 80));
      else if (urlAttrs.includes(name) && /^(javascript|vbscript|data:text\/html)/.test(v)) {
        f.push('script URL ' + el.tagName + ' ' + a.name + '=' + a.value.slice(0, 80));
      } else if (name === 'style' && /javascript:|expression\(|--pwned/.test(v)) {
        f.push('style ' + el.tagName + ' ' + a.value.slice(0, 80));
      }
    }
  }
  const h1 = document.querySelector('h1');
  return JSON.stringify({findings: f, dark: matchMedia('(prefers-color-scheme: dark)').matches,
                         bg: getComputedStyle(document.body).backgroundColor,
                         title: document.title, h1: h1 ? h1.textContent : ''});
})())JS";

struct Probe {
  std::vector<std::string> findings;
  bool dark = false;
  std::string bg, title, h1;
  bool parsed = false;
};

Probe ParseProbe(const std::string& json) {
  Probe p;
  simdjson::dom::parser parser;
  simdjson::padded_string padded(json);
  simdjson::dom::element doc;
  if (parser.parse(padded).get(doc) != simdjson::SUCCESS) return p;
  simdjson::dom::array arr;
  if (doc["findings"].get_array().get(arr) == simdjson::SUCCESS) {
    for (auto e : arr) {
      std::string_view s;
      if (e.get_string().get(s) == simdjson::SUCCESS) p.findings.emplace_back(s);
    }
  }
  std::string_view s;
  if (doc["bg"].get_string().get(s) == simdjson::SUCCESS) p.bg = s;
  if (doc["title"].get_string().get(s) == simdjson::SUCCESS) p.title = s;
  if (doc["h1"].get_string().get(s) == simdjson::SUCCESS) p.h1 = s;
  bool b = false;
  p.parsed = doc["dark"].get_bool().get(b) == simdjson::SUCCESS;
  p.dark = b;
  return p;
}

// Errors that are not explained by the page being a deliberate 404.
// The one whitelisted message: when the main document itself answers 404
// (the edge's 404 page, or the tag page before tag pages exist), Chromium
// logs "Failed to load resource: the server responded with a status of 404"
// for that very URL. Anything else, including a 404 of any other URL
// (stylesheet, image, /favicon.ico), is an error. The layout declares
// <link rel="icon" href="data:,">, so Chromium never asks for /favicon.ico;
// if it did and got a 404, that would be reported here, on purpose.
std::vector<ConsoleEntry> UnexpectedErrors(const PageResult& r, const std::string& url) {
  std::vector<ConsoleEntry> out;
  for (const auto& e : r.Errors()) {
    bool own_404 = r.status == 404 && e.source == "log.network" && e.url == url &&
                   e.text.find("status of 404") != std::string::npos;
    if (!own_404) out.push_back(e);
  }
  return out;
}

// Every sign that script from page content ran: probe findings plus console
// messages mentioning PWNED (any level), dialogs and navigations after load.
std::vector<std::string> ScriptFindings(const PageResult& r, const std::string& url) {
  std::vector<std::string> out = ParseProbe(r.probe).findings;
  for (const auto& m : r.messages) {
    if (m.text.find("PWNED") != std::string::npos) out.push_back("console " + m.source + ": " + m.text);
  }
  for (const auto& d : r.dialogs) out.push_back("dialog " + d);
  for (const auto& n : r.navigations) out.push_back("navigation " + n);
  if (!r.final_url.empty() && r.final_url != url) out.push_back("ended on " + r.final_url);
  return out;
}

bool HasFinding(const std::vector<std::string>& findings, const std::string& prefix) {
  for (const auto& f : findings) {
    if (f.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::string Join(const std::vector<ConsoleEntry>& v) {
  std::string s;
  for (const auto& e : v) s += "  [" + e.level + "] " + e.source + ": " + e.text + " (" + e.url + ")\n";
  return s;
}
std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += "  " + e + "\n";
  return s;
}

// Relative luminance-ish of "rgb(r, g, b)" / "rgba(r, g, b, a)" in 0..1; -1 if
// unparsable or transparent (no stylesheet).
double Lightness(const std::string& css) {
  int r, g, b;
  float a = 1;
  if (sscanf(css.c_str(), "rgba(%d, %d, %d, %f)", &r, &g, &b, &a) == 4) {
    if (a < 0.5f) return -1;
  } else if (sscanf(css.c_str(), "rgb(%d, %d, %d)", &r, &g, &b) != 3) {
    return -1;
  }
  return (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255.0;
}

bool IsPng(const std::string& path, uintmax_t min_size, std::string* why) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  if (ec) {
    *why = path + ": " + ec.message();
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  char sig[8] = {};
  in.read(sig, 8);
  if (std::string(sig, 8) != std::string("\x89PNG\r\n\x1a\n", 8)) {
    *why = path + " is not a PNG";
    return false;
  }
  if (size < min_size) {
    *why = path + " is only " + std::to_string(size) + " bytes";
    return false;
  }
  return true;
}

std::string ArtifactsDir() {
  // FOLIO_BIN_DIR is <build>/bin (set by folio_test); artifacts go next to it.
  const char* bin = getenv("FOLIO_BIN_DIR");
  std::filesystem::path dir = std::filesystem::path(bin && *bin ? bin : "bin").parent_path() / "e2e-artifacts";
  std::filesystem::create_directories(dir);
  return std::filesystem::weakly_canonical(dir).string();
}

// Pages that break the rules, served by libs/http, to prove the checks bite.
class BadPages {
 public:
  explicit BadPages(const std::map<std::string, std::string>& raw = {})
      : server_(Pages(raw), {404, "text/html; charset=utf-8", Html("<h1>not found</h1>")}) {}
  std::string Url(const std::string& path) const { return server_.Url(path); }

 private:
  static std::string Html(const std::string& body) { return folio::e2e::HtmlDocument(body); }
  static std::map<std::string, folio::e2e::FixedResponse> Pages(const std::map<std::string, std::string>& raw) {
    std::map<std::string, std::string> pages;
    for (auto& [path, body] : raw) pages[path] = Html(body);
    pages["/clean"] = Html("<p>clean</p>");
    pages["/console-error"] = Html("<script>console.error('deliberate')</script>");
    pages["/throws"] = Html("<script>throw new Error('deliberate throw')</script>");
    pages["/handler-throws"] = Html("<img src=\"\" onerror=\"undefinedFunction()\">");
    pages["/missing-image"] = Html("<img src=\"/no-such-image.png\" alt=\"\">");
    pages["/pwned-title"] = Html("<script>document.title='PWNED-x'</script>");
    pages["/pwned-attr"] = Html("<img src=\"\" onerror=\"document.body.setAttribute('data-pwned','1')\">");
    pages["/pwned-log"] = Html("<script>console.log('PWNED quietly')</script>");
    pages["/alert"] = Html("<script>alert('PWNED')</script>");
    pages["/refresh"] = Html("<meta http-equiv=\"refresh\" content=\"0;url=/clean\">");
    pages["/js-link"] = Html("<a href=\" java&#x09;script:void(0)\">inert until clicked</a>");
    pages["/scheme"] = Html(
        "<style>body{background:#fff}@media (prefers-color-scheme:dark){body{background:#111}}</style>"
        "<script>document.title=matchMedia('(prefers-color-scheme: dark)').matches?'DARK':'LIGHT'</script>");
    std::map<std::string, folio::e2e::FixedResponse> out;
    for (auto& [path, html] : pages) out[path] = {200, "text/html; charset=utf-8", html};
    return out;
  }
  folio::e2e::PageServer server_;
};

// Vectors of XSS.md that run script on load in Chromium when not sanitised
// (the others are caught by the DOM scan: javascript: URLs, <object>, <base>...).
const std::set<int> kExecuting = {1, 2, 3, 9, 10, 17, 19};

// The numbered lines of the XSS fixture that carry raw HTML ("1 <script>..."),
// by number: served unsanitised, each of them must be caught.
std::map<int, std::string> RawHtmlVectors() {
  std::ifstream in(testing::SourcePath("tests/fixtures/e2e-vault/XSS.md"));
  std::map<int, std::string> vectors;
  std::string line;
  while (std::getline(in, line)) {
    int n = 0, used = 0;
    if (sscanf(line.c_str(), "%d %n", &n, &used) == 1 && used > 0 && line[static_cast<size_t>(used)] == '<' &&
        line.compare(static_cast<size_t>(used), 11, "<javascript") != 0) {  // 24 is a markdown autolink
      vectors[n] = line.substr(static_cast<size_t>(used));
    }
  }
  return vectors;
}

}  // namespace

TEST_CASE("e2e: the browser checks can fail (deliberately broken pages)") {
  // One Chromium for every check below (a SUBCASE would re-run the test
  // case, and so start Chromium, once per subcase).
  Browser browser;
  INFO(browser.status().message());
  REQUIRE(browser.status().ok());
  auto vectors = RawHtmlVectors();
  REQUIRE(vectors.size() >= 15);
  std::map<std::string, std::string> raw;
  for (const auto& [n, html] : vectors) raw["/raw/" + std::to_string(n)] = html;
  BadPages pages(raw);

  auto load = [&](const std::string& path, bool dark = false) {
    PageResult r;
    Visit v;
    v.url = pages.Url(path);
    v.dark = dark;
    v.probe = kProbe;
    Status s = browser.Load(v, &r);
    INFO(s.message());
    REQUIRE(s.ok());
    return r;
  };

  {
    INFO("a clean page passes every check");
    auto r = load("/clean");
    CHECK(r.status == 200);
    CHECK_MESSAGE(UnexpectedErrors(r, pages.Url("/clean")).empty(), r.Describe());
    CHECK_MESSAGE(ScriptFindings(r, pages.Url("/clean")).empty(), r.Describe());
  }
  {
    INFO("console errors are caught: console.error, throw, throw in a handler, failed load");
    for (const char* path : {"/console-error", "/throws", "/handler-throws", "/missing-image"}) {
      auto r = load(path);
      INFO(path, "\n", r.Describe());
      CHECK(r.status == 200);
      CHECK(UnexpectedErrors(r, pages.Url(path)).size() >= 1);
    }
  }
  {
    INFO("a 404 document is whitelisted only for itself");
    auto r = load("/nothing-here");
    INFO(r.Describe());
    CHECK(r.status == 404);
    CHECK(r.Errors().size() == 1);
    CHECK(UnexpectedErrors(r, pages.Url("/nothing-here")).empty());
    CHECK(UnexpectedErrors(r, pages.Url("/some-other-url")).size() == 1);
  }
  {
    INFO("script execution is caught: title marker, attribute marker, console text, dialog, refresh");
    // Each page's own <script> is also flagged by the DOM scan, so look for
    // the specific trace of each runtime check.
    const std::vector<std::pair<const char*, const char*>> expected = {
        {"/pwned-title", "document.title=PWNED-x"},
        {"/pwned-attr", "data-pwned on BODY"},
        {"/pwned-log", "console console.log: PWNED quietly"},
        {"/alert", "dialog alert: PWNED"},
        {"/refresh", "navigation frameScheduledNavigation metaTagRefresh"},
    };
    for (const auto& [path, trace] : expected) {
      auto r = load(path);
      auto findings = ScriptFindings(r, pages.Url(path));
      INFO(path, "\n", Join(findings), r.Describe());
      CHECK(HasFinding(findings, trace));
    }
    // A javascript: URL that would only run on click: the DOM scan alone.
    auto r = load("/js-link");
    auto findings = ScriptFindings(r, pages.Url("/js-link"));
    INFO(Join(findings));
    REQUIRE(findings.size() == 1);
    CHECK(findings[0].find("script URL A href") == 0);
  }
  {
    INFO("every raw-HTML vector of the XSS fixture is caught when it is not sanitised");
    for (const auto& [n, html] : vectors) {
      std::string path = "/raw/" + std::to_string(n);
      auto r = load(path);
      auto findings = ScriptFindings(r, pages.Url(path));
      INFO("vector ", n, ": ", html, "\n", Join(findings), r.Describe());
      CHECK(!findings.empty());
      // These really execute when unsanitised; the runtime checks see it.
      if (kExecuting.count(n)) {
        CHECK(HasFinding(findings, "document.title=PWNED-" + std::to_string(n)));
        CHECK(HasFinding(findings, "console console.error: PWNED-" + std::to_string(n)));
      }
    }
  }
  {
    INFO("dark mode emulation switches prefers-color-scheme and the CSS that depends on it");
    auto light = load("/scheme", false);
    auto dark = load("/scheme", true);
    Probe pl = ParseProbe(light.probe), pd = ParseProbe(dark.probe);
    CHECK(pl.title == "LIGHT");
    CHECK(pd.title == "DARK");
    CHECK(!pl.dark);
    CHECK(pd.dark);
    CHECK(pl.bg == "rgb(255, 255, 255)");
    CHECK(pd.bg == "rgb(17, 17, 17)");
  }
}

TEST_CASE("e2e: edge pages in headless Chromium: no console errors, no injected script, screenshots") {
  Cluster c;
  std::string out;
  int rc = c.RunCli({"push", testing::SourcePath("tests/fixtures/e2e-vault"), "--server", c.ingest_url(), "--token",
                     kToken},
                    &out);
  INFO(out);
  REQUIRE(rc == 0);
  INFO(c.Logs());
  REQUIRE(c.WaitForPage("/note", 200, "A normal note").status == 200);
  REQUIRE(c.WaitForPage("/callouts", 200, "Callouts").status == 200);
  REQUIRE(c.WaitForPage("/xss", 200, "XSS vectors").status == 200);
  // Every other page of the push is published in the same batch as these.

  Browser browser;
  INFO(browser.status().message());
  REQUIRE(browser.status().ok());
  const std::string artifacts = ArtifactsDir();

  struct Page {
    std::string name;  // screenshot name; empty: checks only
    std::string path;
    std::vector<int> statuses;  // acceptable HTTP statuses
  };
  const std::vector<Page> pages = {
      {"note", "/note", {200}},
      {"callouts", "/callouts", {200}},
      {"tag", "/_/tags/e2e", {200}},
      {"404", "/no/such/page", {404}},
      {"xss", "/xss", {200}},
      {"", "/tagged-note", {200}},
      {"", "/frontmatter-tags", {200}},
      {"", "/nested-tag-only", {200}},
      {"", "/", {200}},
  };
  std::vector<std::string> saved;

  for (const auto& page : pages) {
    double light_level = -1, dark_level = -1;
    for (bool dark : {false, true}) {
      if (page.name.empty() && dark) continue;
      const std::string url = c.edge_url() + page.path;
      const std::string scheme = dark ? "dark" : "light";
      Visit v;
      v.url = url;
      v.dark = dark;
      v.probe = kProbe;
      if (!page.name.empty()) v.screenshot = artifacts + "/" + page.name + "-" + scheme + ".png";
      PageResult r;
      Status s = browser.Load(v, &r);
      INFO(page.path, " (", scheme, ")\n", r.Describe());
      REQUIRE_MESSAGE(s.ok(), s.message());

      CHECK_MESSAGE(std::find(page.statuses.begin(), page.statuses.end(), r.status) != page.statuses.end(),
                    "unexpected status ", r.status);
      auto errors = UnexpectedErrors(r, url);
      CHECK_MESSAGE(errors.empty(), "console errors:\n", Join(errors));
      auto findings = ScriptFindings(r, url);
      CHECK_MESSAGE(findings.empty(), "injected script traces:\n", Join(findings));

      Probe p = ParseProbe(r.probe);
      REQUIRE(p.parsed);
      CHECK(p.dark == dark);
      (dark ? dark_level : light_level) = Lightness(p.bg);
      if (!v.screenshot.empty()) {
        std::string why;
        CHECK_MESSAGE(IsPng(v.screenshot, 8000, &why), why);
        saved.push_back(v.screenshot);
      }
    }
    if (!page.name.empty()) {
      // The stylesheet loaded and follows the colour scheme.
      INFO(page.path, ": body background lightness light=", light_level, " dark=", dark_level);
      CHECK(light_level > 0.6);
      CHECK(dark_level >= 0);
      CHECK(dark_level < 0.4);
    }
  }

  // A phone-sized screenshot of the note (390x844 CSS px at 2x, mobile viewport).
  {
    Visit v;
    v.url = c.edge_url() + "/note";
    v.width = 390;
    v.height = 844;
    v.scale = 2;
    v.mobile = true;
    v.probe = kProbe;
    v.screenshot = artifacts + "/note-phone-light.png";
    PageResult r;
    Status s = browser.Load(v, &r);
    INFO(r.Describe());
    REQUIRE_MESSAGE(s.ok(), s.message());
    CHECK(UnexpectedErrors(r, v.url).empty());
    CHECK(ScriptFindings(r, v.url).empty());
    std::string why;
    CHECK_MESSAGE(IsPng(v.screenshot, 8000, &why), why);
    saved.push_back(v.screenshot);
  }

  std::printf("e2e screenshots (CI artifacts):\n");
  for (const auto& f : saved) std::printf("  %s\n", f.c_str());
  std::fflush(stdout);
}
