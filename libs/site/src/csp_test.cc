// The Content-Security-Policy of every page kind against the scripts the
// page really has (issue 9): each inline <script> is allowed by its own
// SHA-256 (computed here, independently), each external one by its exact URL
// and carries its integrity, nothing else may run, and a script injected
// into a page body would be refused.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "folio/core/hash.h"
#include "folio/site/csp.h"
#include "folio/site/layout.h"
#include "folio/site/search_page.h"

using namespace folio;
using namespace folio::site;

namespace {

struct Script {
  std::string src, integrity, crossorigin;  // attributes ("" if absent)
  std::string text;                         // inline content
};

std::string Attr(std::string_view tag, std::string_view name) {
  std::string key = " " + std::string(name) + "=\"";
  size_t at = tag.find(key);
  if (at == std::string_view::npos) return "";
  size_t from = at + key.size();
  return std::string(tag.substr(from, tag.find('"', from) - from));
}

std::vector<Script> Scripts(std::string_view html) {
  std::vector<Script> out;
  for (size_t at = html.find("<script"); at != std::string_view::npos; at = html.find("<script", at + 1)) {
    size_t gt = html.find('>', at);
    size_t close = html.find("</script>", gt);
    REQUIRE(gt != std::string_view::npos);
    REQUIRE(close != std::string_view::npos);
    std::string_view tag = html.substr(at, gt - at);
    out.push_back({Attr(tag, "src"), Attr(tag, "integrity"), Attr(tag, "crossorigin"),
                   std::string(html.substr(gt + 1, close - gt - 1))});
  }
  return out;
}

// directive -> its sources.
std::map<std::string, std::set<std::string>> Parse(std::string_view csp) {
  std::map<std::string, std::set<std::string>> out;
  while (!csp.empty()) {
    size_t semi = csp.find(';');
    std::string_view d = csp.substr(0, semi);
    csp = semi == std::string_view::npos ? std::string_view() : csp.substr(semi + 1);
    std::vector<std::string> words;
    size_t i = 0;
    while (i < d.size()) {
      while (i < d.size() && d[i] == ' ') ++i;
      size_t j = i;
      while (j < d.size() && d[j] != ' ') ++j;
      if (j > i) words.emplace_back(d.substr(i, j - i));
      i = j;
    }
    if (words.empty()) continue;
    REQUIRE_MESSAGE(out.count(words[0]) == 0, "directive twice: ", words[0]);
    out[words[0]] = std::set<std::string>(words.begin() + 1, words.end());
  }
  return out;
}

// 'sha256-<standard base64 with padding>' of the text, from the digest bytes.
std::string HashSource(std::string_view text) {
  Sha256Digest d = Sha256(text);
  std::string b64 = Base64UrlEncode(std::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
  for (char& c : b64) c = c == '-' ? '+' : c == '_' ? '/' : c;
  while (b64.size() % 4) b64 += '=';
  return "'sha256-" + b64 + "'";
}

// Checks the policy allows exactly the page's scripts, and the rest of it.
void CheckPage(const std::string& what, const std::string& html, const std::string& csp, bool is_search = false) {
  INFO(what, "\n", csp);
  auto policy = Parse(csp);
  CHECK(policy["default-src"] == std::set<std::string>{"'none'"});
  CHECK(policy["object-src"] == std::set<std::string>{"'none'"});
  CHECK(policy["base-uri"] == std::set<std::string>{"'none'"});
  CHECK(policy["form-action"] == std::set<std::string>{"'self'"});
  CHECK(policy["frame-ancestors"] == std::set<std::string>{is_search ? "'none'" : "'self'"});
  CHECK(policy["style-src"].count("'self'") == 1);
  CHECK(policy["img-src"].count("'self'") == 1);
  if (!is_search) {
    CHECK(policy["img-src"].count("https:") == 1);  // remote images authors embed
    CHECK(policy["media-src"] == std::set<std::string>{"'self'"});
    // PDF embeds, and the two video players folio itself writes (nothing else).
    CHECK(policy["frame-src"] ==
          std::set<std::string>{"'self'", "https://www.youtube-nocookie.com", "https://player.vimeo.com"});
  }
  const std::set<std::string>& script_src = policy["script-src"];
  for (const char* never : {"'unsafe-inline'", "'unsafe-eval'", "'unsafe-hashes'", "'strict-dynamic'", "*", "https:",
                            "http:", "data:", "blob:"}) {
    CHECK_MESSAGE(script_src.count(never) == 0, never);
  }
  std::set<std::string> needed;
  for (const Script& s : Scripts(html)) {
    if (s.src.empty()) {
      needed.insert(HashSource(s.text));
    } else if (s.src[0] == '/') {
      needed.insert("'self'");
    } else {
      needed.insert(s.src);
      CHECK_MESSAGE(s.integrity.rfind("sha384-", 0) == 0, "a remote script without integrity: ", s.src);
      CHECK(s.crossorigin == "anonymous");
    }
  }
  if (needed.empty()) needed.insert("'none'");
  CHECK(script_src == needed);  // every script allowed, and nothing more
}

NotePage Note(std::string mermaid_url = "", std::string integrity = "") {
  NotePage p;
  p.site.name = "Docs";
  p.site.mermaid_url = std::move(mermaid_url);
  p.site.mermaid_integrity = std::move(integrity);
  p.url = "/a";
  p.title = "A";
  p.body_html = "<p>text <img src=\"https://example.org/x.png\" alt=\"\"></p>";
  return p;
}

}  // namespace

TEST_CASE("csp: every page kind's policy allows exactly the scripts the page has") {
  NotePage plain = Note(std::string(kMermaidUrl), std::string(kMermaidIntegrity));
  CheckPage("note without a diagram", AssembleNotePage(plain), NotePageCsp(plain));
  CHECK(NotePageCsp(plain) == PageCsp());

  NotePage diagram = plain;
  diagram.has_mermaid = true;
  diagram.body_html += "<pre class=\"mermaid\">graph TD; A--&gt;B</pre>";
  std::string html = AssembleNotePage(diagram);
  CHECK(Scripts(html).size() == 4);  // the theme snippet, the site script, mermaid and its start
  CheckPage("note with a diagram (pinned mermaid, remote)", html, NotePageCsp(diagram));
  CHECK(html.find("src=\"" + std::string(kMermaidUrl) + "\" integrity=\"" + std::string(kMermaidIntegrity) +
                  "\" crossorigin=\"anonymous\" defer") != std::string::npos);
  CHECK(Parse(NotePageCsp(diagram))["style-src"].count("'unsafe-inline'") == 1);  // mermaid draws with inline styles

  NotePage self_hosted = Note("/assets/mermaid.min.js");
  self_hosted.has_mermaid = true;
  CheckPage("note with a diagram (same-origin mermaid)", AssembleNotePage(self_hosted), NotePageCsp(self_hosted));

  NotePage no_mermaid = Note("");
  no_mermaid.has_mermaid = true;
  CHECK(Scripts(AssembleNotePage(no_mermaid)).size() == 2);  // the site's own two only
  CHECK(NotePageCsp(no_mermaid) == PageCsp());

  ListingPage listing;
  listing.site.name = "Docs";
  listing.url = "/folder";
  listing.title = "Folder";
  listing.items = {{"A", "/a", "2026-11-30"}};
  listing.pages = 3;
  listing.page = 2;
  CheckPage("listing", AssembleListingPage(listing), PageCsp());
  CheckPage("home", AssembleHomePage("Docs", listing.items, 1), PageCsp());
  CheckPage("404", Assemble404Page("Docs"), PageCsp());
  // A redirect page runs nothing; its record carries the default policy.
  CHECK(Scripts(AssembleRedirectPage("/b")).empty());
  CheckPage("graph page", AssembleGraphPage(listing.site), PageCsp());

  SearchPage search;
  search.site.name = "Docs";
  search.query = "x";
  CheckPage("search", AssembleSearchPage(search), SearchPageCsp(), /*is_search=*/true);
}

TEST_CASE("csp: a script injected into a page body is refused by the page's policy") {
  // Sanitising keeps script out of bodies; the policy is the second wall.
  const std::string injected = "alert(document.cookie)";
  for (bool has_mermaid : {false, true}) {
    NotePage p = Note(std::string(kMermaidUrl), std::string(kMermaidIntegrity));
    p.has_mermaid = has_mermaid;
    p.body_html += "<script>" + injected + "</script><script src=\"https://evil.example/x.js\"></script>";
    auto script_src = Parse(NotePageCsp(p))["script-src"];
    CHECK(script_src.count(HashSource(injected)) == 0);
    CHECK(script_src.count("https://evil.example/x.js") == 0);
    CHECK(script_src.count("'unsafe-inline'") == 0);
    for (const std::string& source : script_src) {
      CHECK((source.rfind("'sha256-", 0) == 0 || source == "'self'" || source == kMermaidUrl));
    }
  }
}

TEST_CASE("csp: ScriptHashSource is the standard CSP hash") {
  CHECK(ScriptHashSource("") == "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='");
  CHECK(ScriptHashSource("alert(1)") == HashSource("alert(1)"));
}

TEST_CASE("csp: mermaid sources: remote needs an integrity, same-origin paths need none") {
  CHECK(CheckMermaidSource(kMermaidUrl, kMermaidIntegrity).ok());
  CHECK(CheckMermaidSource("", "").ok());
  CHECK(CheckMermaidSource("/assets/mermaid.min.js", "").ok());
  CHECK(CheckMermaidSource("/assets/mermaid.min.js", kMermaidIntegrity).ok());
  CHECK(CheckMermaidSource("http://127.0.0.1:9/m.js", "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=").ok());
  Status no_sri = CheckMermaidSource(kMermaidUrl, "");
  CHECK(no_sri.code() == Code::kInvalidArgument);
  CHECK(no_sri.message().find("--mermaid-integrity") != std::string::npos);
  CHECK(!CheckMermaidSource("//cdn.example/m.js", kMermaidIntegrity).ok());  // scheme-relative: say https://
  for (const char* bad_url : {"ftp://x/m.js", "m.js", "https://x/m.js; script-src *", "https://x/a b.js",
                              "https://x/\"m.js", "https://x/m.js,https://y", "https://x/m.js?v=11",
                              "https://x/m.js#x", "/assets/mermaid.min.js?v=11", "/assets/mermaid.min.js#"}) {
    CHECK_MESSAGE(!CheckMermaidSource(bad_url, kMermaidIntegrity).ok(), bad_url);
  }
  for (const char* bad_sri : {"sha384-short", "md5-abc", "sha384-" "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
                              "sha384-EOXBFmc3gx5mb+vn0vPvvGqACToJD24hhacX5Yx+8NUUQrHIle/Qi5Bg9o3zKwW2 sha384-x"}) {
    CHECK_MESSAGE(!CheckMermaidSource(kMermaidUrl, bad_sri).ok(), bad_sri);
  }
  CHECK(!CheckMermaidSource("", kMermaidIntegrity).ok());
}
