// CommonMark conformance (libs/markdown/README.md "CommonMark conformance"):
// every example of the CommonMark spec 0.31.2
// (tests/fixtures/commonmark/spec-0.31.2.json) rendered by RenderNote in its
// most CommonMark-like configuration (strict line breaks, no highlighting,
// no vault), normalised as the spec's runner does, and compared. The
// examples folio deliberately renders otherwise are listed, with a category
// and a reason, in tests/fixtures/commonmark/deviations.txt. The test fails
// on an example that fails without being listed (a regression) and on a
// listed example that passes (the list is stale).
//   FOLIO_CM_WRITE=1  rewrite the list from this run (reasons kept, new
//                     entries "unclassified"), then pass
//   FOLIO_CM_SHOW=all or FOLIO_CM_SHOW=12,34  print those failing examples
#include <doctest/doctest.h>
#include <simdjson.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "commonmark_normalize.h"
#include "folio/markdown/render.h"

using folio::markdown::testing::NormalizeHtml;

namespace {

struct Example {
  int number = 0;
  std::string section;
  std::string markdown;
  std::string html;
};

struct Deviation {
  std::string category;
  std::string reason;
};

struct DeviationFile {
  std::vector<std::string> header;  // the comment lines before the first entry
  std::map<int, Deviation> entries;
};

std::string FixtureDir() {
  const char* src = std::getenv("FOLIO_SOURCE_DIR");
  REQUIRE_MESSAGE(src != nullptr, "run through ctest (FOLIO_SOURCE_DIR)");
  return std::string(src) + "/tests/fixtures/commonmark/";
}

std::vector<Example> LoadExamples(const std::string& path) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  REQUIRE_MESSAGE(parser.load(path).get(root) == simdjson::SUCCESS, "cannot parse " << path);
  std::vector<Example> out;
  for (simdjson::dom::element item : root.get_array()) {
    Example e;
    e.number = static_cast<int>(int64_t(item["example"]));
    e.section = std::string(std::string_view(item["section"]));
    e.markdown = std::string(std::string_view(item["markdown"]));
    e.html = std::string(std::string_view(item["html"]));
    out.push_back(std::move(e));
  }
  return out;
}

// "<number> <category> <reason>" per line; '#' lines are comments.
DeviationFile LoadDeviations(const std::string& path) {
  DeviationFile file;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') {
      if (file.entries.empty()) file.header.push_back(line);
      continue;
    }
    std::istringstream fields(line);
    int number = 0;
    Deviation d;
    fields >> number >> d.category;
    std::getline(fields >> std::ws, d.reason);
    REQUIRE_MESSAGE(number > 0, "bad line in deviations.txt: " << line);
    file.entries[number] = d;
  }
  return file;
}

void WriteDeviations(const std::string& path, const DeviationFile& old, const std::set<int>& failing) {
  std::ofstream out(path, std::ios::trunc);
  for (const std::string& line : old.header) out << line << "\n";
  for (int n : failing) {
    auto it = old.entries.find(n);
    Deviation d = it != old.entries.end() ? it->second : Deviation{"unclassified", ""};
    out << n << " " << d.category;
    if (!d.reason.empty()) out << " " << d.reason;
    out << "\n";
  }
}

std::string RenderCommonMark(const std::string& markdown) {
  folio::markdown::RenderOptions options;  // no resolver: no vault to resolve links in
  options.strict_line_breaks = true;       // CommonMark's soft line breaks
  options.highlight_code = false;          // fences as <pre><code class="language-x">
  return folio::markdown::RenderNote(markdown, "spec.md", options).html;
}

// Attributes folio adds to what CommonMark writes, taken off its normalised
// output so the examples still test what is under them: heading ids
// (README.md "Rendering"), rel="noopener" on external links,
// loading="lazy" on images and Obsidian's link classes (docs/themes.md).
std::string WithoutAdditions(const std::string& normalised) {
  static const std::regex heading_id(R"((<h[1-6]) id="[^"]*")");
  static const std::regex noopener(R"((<a [^>]*?) rel="noopener")");
  static const std::regex lazy(R"((<img [^>]*?) loading="lazy")");
  static const std::regex link_class(R"((<a[^>]*?) class="(?:external|internal)-link")");
  std::string out = std::regex_replace(normalised, heading_id, "$1");
  out = std::regex_replace(out, noopener, "$1");
  out = std::regex_replace(out, link_class, "$1");
  return std::regex_replace(out, lazy, "$1");
}

bool Passes(const Example& e, const std::string& got) {
  return WithoutAdditions(NormalizeHtml(got)) == NormalizeHtml(e.html);
}

bool Shown(int number) {
  const char* show = std::getenv("FOLIO_CM_SHOW");
  if (show == nullptr) return false;
  std::string list = std::string(",") + show + ",";
  return list == ",all," || list.find("," + std::to_string(number) + ",") != std::string::npos;
}

void Print(const char* what, const Example& e, const std::string& got) {
  std::printf("--- example %d (%s): %s\n--- markdown:\n%s--- expected:\n%s--- got:\n%s--- normalised, expected:\n%s\n"
              "--- normalised, got:\n%s\n",
              e.number, e.section.c_str(), what, e.markdown.c_str(), e.html.c_str(), got.c_str(),
              NormalizeHtml(e.html).c_str(), WithoutAdditions(NormalizeHtml(got)).c_str());
}

}  // namespace

TEST_CASE("commonmark normaliser: normalize.py's own examples") {
  CHECK(NormalizeHtml("<p>a  \t b</p>") == "<p>a b</p>");
  CHECK(NormalizeHtml("<p>a  \t\nb</p>") == "<p>a b</p>");
  CHECK(NormalizeHtml(" <p>a  b</p>") == "<p>a b</p>");
  CHECK(NormalizeHtml("<p>a  b</p> ") == "<p>a b</p>");
  CHECK(NormalizeHtml("\n\t<p>\n\t\ta  b\t\t</p>\n\t") == "<p>a b</p>");
  CHECK(NormalizeHtml("<i>a  b</i> ") == "<i>a b</i> ");
  CHECK(NormalizeHtml("<br />") == "<br>");
  CHECK(NormalizeHtml("<a title=\"bar\" HREF=\"foo\">x</a>") == "<a href=\"foo\" title=\"bar\">x</a>");
  CHECK(NormalizeHtml("&#x2200;&amp;&gt;&lt;&quot;") == "\u2200&amp;&gt;&lt;&quot;");
  // Whitespace inside <pre> is kept; attribute references decoded and re-escaped.
  CHECK(NormalizeHtml("<pre><code>a  \n b\n</code></pre>\n") == "<pre><code>a  \n b\n</code></pre>");
  CHECK(NormalizeHtml("<a href=\"/f&ouml;\" title='x&#39;s'>y</a>") == "<a href=\"/f\u00f6\" title=\"x&#x27;s\">y</a>");
  CHECK(NormalizeHtml("<p>a<br>\nb</p>") == "<p>a<br>b</p>");
  CHECK(NormalizeHtml("<!-- c -->\n<p>&copy;</p>") == "<!-- c --><p>&copy;</p>");
  CHECK(WithoutAdditions(NormalizeHtml("<h2 id=\"x\">x</h2><a href=\"https://a\" rel=\"noopener\">a</a>")) ==
        "<h2>x</h2><a href=\"https://a\">a</a>");
}

TEST_CASE("commonmark spec 0.31.2: every example passes or is a listed deviation") {
  const std::string dir = FixtureDir();
  const std::vector<Example> examples = LoadExamples(dir + "spec-0.31.2.json");
  const DeviationFile deviations = LoadDeviations(dir + "deviations.txt");
  REQUIRE(examples.size() == 652);

  std::set<int> failing;
  std::vector<int> regressions;
  std::vector<int> stale;
  for (const Example& e : examples) {
    std::string got = RenderCommonMark(e.markdown);
    bool pass = Passes(e, got);
    bool listed = deviations.entries.count(e.number) != 0;
    if (!pass) failing.insert(e.number);
    if (!pass && !listed) {
      regressions.push_back(e.number);
      Print("fails and is not in deviations.txt", e, got);
    } else if (!pass && Shown(e.number)) {
      Print(deviations.entries.at(e.number).category.c_str(), e, got);
    } else if (pass && listed) {
      stale.push_back(e.number);
    }
  }

  std::map<std::string, int> categories;
  for (int n : failing) {
    auto it = deviations.entries.find(n);
    ++categories[it != deviations.entries.end() ? it->second.category : "unlisted"];
  }
  std::string by_category;
  for (const auto& [category, count] : categories) {
    by_category += (by_category.empty() ? "" : ", ") + category + " " + std::to_string(count);
  }
  std::printf("CommonMark 0.31.2: %zu passed / %zu deliberate / %zu total (%s)\n",
              examples.size() - failing.size(), failing.size(), examples.size(), by_category.c_str());
  for (int n : stale) std::printf("example %d passes now: remove it from deviations.txt\n", n);

  const char* write = std::getenv("FOLIO_CM_WRITE");
  if (write != nullptr && std::string(write) == "1") {
    WriteDeviations(dir + "deviations.txt", deviations, failing);
    std::printf("rewrote %sdeviations.txt: %zu entries\n", dir.c_str(), failing.size());
    return;
  }
  std::string unclassified;
  for (const auto& [n, d] : deviations.entries) {
    CHECK_MESSAGE((n >= 1 && n <= static_cast<int>(examples.size())), "deviations.txt lists example " << n
                                                                     << ", which the spec does not have");
    if (d.category == "unclassified") unclassified += " " + std::to_string(n);
  }
  CHECK_MESSAGE(unclassified.empty(), "deviations.txt: give these a category and a reason:" << unclassified);
  CHECK_MESSAGE(regressions.empty(), regressions.size() << " example(s) fail that deviations.txt does not list");
  CHECK_MESSAGE(stale.empty(), stale.size() << " example(s) listed in deviations.txt pass now (FOLIO_CM_WRITE=1 "
                                               "rewrites the list)");
}
