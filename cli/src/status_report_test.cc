// folio status's report: made from push's diff, as text and as JSON; and the
// manifest's "site_url" and per-note "warnings".
#include <doctest/doctest.h>
#include <simdjson.h>

#include <string>
#include <vector>

#include "plan.h"
#include "status_report.h"
#include "vault.h"
#include "wire.h"

using namespace folio;
using namespace folio::cli;

namespace {

LocalFile Local(std::string path, std::string sha) { return {std::move(path), std::move(sha), 10, {}}; }
RemoteFile Remote(std::string path, std::string sha) { return {std::move(path), std::move(sha), "/x"}; }

StatusReport Sample(std::optional<bool> vault_strict = std::nullopt) {
  Vault v;
  v.notes = {Local("A.md", "aa"), Local("B.md", "b2"), Local("New.md", "nn")};
  v.attachments = {Local("pic.png", "pp")};
  v.skipped = {{"big.png", "2 MiB is over the 1008 KiB attachment limit; not sent", true, true},
               {"bad.md", "content is not valid UTF-8; not sent", true, false},
               {"link.md", "dangling symbolic link; not sent", false, false}};
  Manifest m;
  m.version = 7;
  m.site = "default";
  m.site_url = "https://notes.example.com";
  m.strict_line_breaks = false;
  m.notes = {Remote("A.md", "AA"), Remote("B.md", "b1"), Remote("Gone.md", "gg")};
  m.warnings["A.md"] = {"dangling link [[Nowhere]]"};
  m.attachments = {Remote("old.pdf", "oo")};
  PushPlan plan = Diff(v, m);
  StatusReport r = MakeStatusReport(plan, m, v, "", vault_strict);
  r.server = "http://127.0.0.1:8080";
  return r;
}

}  // namespace

TEST_CASE("status report: the diff split into add, change and delete per kind") {
  StatusReport r = Sample();
  CHECK(r.notes.add == std::vector<std::string>{"New.md"});
  CHECK(r.notes.change == std::vector<std::string>{"B.md"});
  CHECK(r.notes.remove == std::vector<std::string>{"Gone.md"});
  CHECK(r.notes.unchanged == 1);  // A.md: hashes compare ignoring case
  CHECK(r.attachments.add == std::vector<std::string>{"pic.png"});
  CHECK(r.attachments.remove == std::vector<std::string>{"old.pdf"});
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].path == "A.md");
  REQUIRE(r.oversized.size() == 1);
  CHECK(r.oversized[0].path == "big.png");
  REQUIRE(r.left_out.size() == 1);  // the symlink note is informational
  CHECK(r.left_out[0].path == "bad.md");
  CHECK(!r.in_sync());
}

TEST_CASE("status text: counts, marked paths, warnings, oversized, verdict") {
  std::string t = StatusText(Sample());
  CHECK(t.find("server http://127.0.0.1:8080: site default, version 7, https://notes.example.com\n") == 0);
  CHECK(t.find("notes: 1 to add, 1 to change, 1 to delete, 1 unchanged\n  + New.md\n  ~ B.md\n  - Gone.md\n") !=
        std::string::npos);
  CHECK(t.find("attachments: 1 to add, 0 to change, 1 to delete, 0 unchanged\n  + pic.png\n  - old.pdf\n") !=
        std::string::npos);
  CHECK(t.find("server warnings: 1\n  A.md: dangling link [[Nowhere]]\n") != std::string::npos);
  CHECK(t.find("oversized (over the server's limits; push leaves them out): 1\n  big.png: 2 MiB") !=
        std::string::npos);
  CHECK(t.find("left out (push does not send them): 1\n  bad.md: content is not valid UTF-8") != std::string::npos);
  CHECK(t.ends_with("not in sync: 3 notes and 2 attachments differ; `folio push` sends them\n"));
}

TEST_CASE("status text: a long list is capped with '... and N more'") {
  StatusReport r;
  r.server = "http://s";
  for (int i = 0; i < 25; ++i) r.notes.add.push_back("n" + std::to_string(i) + ".md");
  std::string t = StatusText(r, 20);
  CHECK(t.find("  + n19.md\n  ... and 5 more\n") != std::string::npos);
  CHECK(t.find("n20.md") == std::string::npos);
  CHECK(t.find("server http://s: version 0\n") == 0);  // no site, no URL
}

TEST_CASE("status text: in sync, and a settings difference is not in sync") {
  StatusReport r;
  r.server = "http://s";
  r.notes.unchanged = 4;
  CHECK(r.in_sync());
  CHECK(StatusText(r).ends_with("notes: 0 to add, 0 to change, 0 to delete, 4 unchanged\n"
                                "attachments: 0 to add, 0 to change, 0 to delete, 0 unchanged\nin sync\n"));
  StatusReport s = Sample(true);
  REQUIRE(s.strict_line_breaks_change);
  CHECK(StatusText(s).find("settings: strict line breaks on in the vault, off on the site\n") != std::string::npos);
  CHECK(!Sample(false).strict_line_breaks_change);  // same as the site's
}

TEST_CASE("status json: one object with lists, exact counts and the verdict") {
  std::string j = StatusJson(Sample(), 1);
  CHECK(j.find('\n') == std::string::npos);
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  REQUIRE(!p.parse(j).get(doc));
  CHECK(bool(doc["in_sync"]) == false);
  CHECK(std::string_view(doc["site_url"]) == "https://notes.example.com");
  CHECK(int64_t(doc["version"]) == 7);
  CHECK(std::string_view(doc["notes"]["add"].at(0)) == "New.md");
  CHECK(int64_t(doc["notes"]["delete_count"]) == 1);
  CHECK(int64_t(doc["attachments"]["add_count"]) == 1);
  CHECK(std::string_view(doc["warnings"].at(0)["warning"]) == "dangling link [[Nowhere]]");
  CHECK(std::string_view(doc["oversized"].at(0)["path"]) == "big.png");
  CHECK(std::string_view(doc["left_out"].at(0)["path"]) == "bad.md");
  StatusReport big;
  for (int i = 0; i < 3; ++i) big.notes.add.push_back(std::to_string(i) + ".md");
  REQUIRE(!p.parse(StatusJson(big, 2)).get(doc));
  CHECK(simdjson::dom::array(doc["notes"]["add"]).size() == 2);
  CHECK(int64_t(doc["notes"]["add_count"]) == 3);
}

TEST_CASE("manifest: site_url and per-note warnings are parsed; both optional") {
  auto m = ParseManifest(
      R"({"version":3,"site":"s","site_url":"https://x.org","notes":[{"path":"A.md","sha256":"a","url":"/a",)"
      R"("warnings":["dangling link [[B]]","ambiguous link [[C]]"]},{"path":"B.md","sha256":"b","url":"/b"}]})");
  REQUIRE(m.ok());
  CHECK(m->site_url == "https://x.org");
  REQUIRE(m->notes.size() == 2);
  CHECK(m->warnings.size() == 1);  // B.md has none
  CHECK(m->warnings["A.md"] == std::vector<std::string>{"dangling link [[B]]", "ambiguous link [[C]]"});
  auto old = ParseManifest(R"({"version":1,"notes":[]})");
  REQUIRE(old.ok());
  CHECK(old->site_url.empty());
}

TEST_CASE("status: an attachment the server lists but lost is not in sync, and push sends it (issue 23)") {
  Vault v;
  v.notes = {Local("A.md", "aa")};
  v.attachments = {Local("kept.png", "kk"), Local("lost.png", "ll")};
  Manifest m;
  m.notes = {Remote("A.md", "aa")};
  m.attachments = {Remote("kept.png", "kk"), Remote("lost.png", "ll")};
  CHECK(MakeStatusReport(Diff(v, m), m, v, "", std::nullopt).in_sync());

  auto parsed = ParseManifest(R"({"version":3,"notes":[{"path":"A.md","sha256":"aa","url":"/a"}],)"
                              R"("attachments":[{"path":"kept.png","sha256":"kk","url":"/k"},)"
                              R"({"path":"lost.png","sha256":"ll","url":"/l"}],"missing_attachments":["lost.png"]})");
  REQUIRE(parsed.ok());
  CHECK(parsed->missing_attachments == std::vector<std::string>{"lost.png"});
  PushPlan plan = Diff(v, *parsed);
  REQUIRE(plan.attachments.to_send.size() == 1);
  CHECK(plan.attachments.to_send[0].path == "lost.png");
  CHECK(!plan.attachments.is_new[0]);
  CHECK(plan.attachments.lost_count == 1);
  CHECK(plan.attachments.unchanged == 1);
  CHECK(plan.to_delete.empty());
  StatusReport r = MakeStatusReport(plan, *parsed, v, "", std::nullopt);
  CHECK(!r.in_sync());
  CHECK(r.attachments.lost == std::vector<std::string>{"lost.png"});
  CHECK(StatusText(r).find("1 lost by the server's storage: re-sent") != std::string::npos);
  CHECK(StatusJson(r).find(R"("lost":["lost.png"])") != std::string::npos);

  // Deleted locally: still deleted on the server, not re-sent.
  v.attachments = {Local("kept.png", "kk")};
  plan = Diff(v, *parsed);
  CHECK(plan.attachments.to_send.empty());
  CHECK(plan.to_delete == std::vector<std::string>{"lost.png"});
}

TEST_CASE("issue 28: a warning the server repeats for one note is listed once") {
  Vault v;
  Manifest m;
  m.notes = {Remote("A.md", "AA")};
  m.warnings["A.md"] = {"dangling link [[X]]", "dangling link [[X]]", "dangling link [[Y]]"};
  m.warnings["B.md"] = {"dangling link [[X]]"};
  StatusReport r = MakeStatusReport(Diff(v, m), m, v, "", std::nullopt);
  REQUIRE(r.warnings.size() == 3);
  CHECK(r.warnings[0].warning == "dangling link [[X]]");
  CHECK(r.warnings[1].warning == "dangling link [[Y]]");
  CHECK(r.warnings[2].path == "B.md");
}
