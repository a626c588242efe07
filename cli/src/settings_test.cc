// The vault's Obsidian settings (issue 13): DIR/.obsidian/app.json read,
// bounded and forgiving; the flags over it; the push body and reply.
#include "settings.h"

#include <doctest/doctest.h>
#include <simdjson.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "report.h"
#include "wire.h"

using namespace folio::cli;
namespace fs = std::filesystem;

namespace {

struct TempVault {
  TempVault() {
    std::string tmpl = (fs::temp_directory_path() / "folio-settings-test-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    dir = tmpl;
  }
  ~TempVault() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  void AppJson(const std::string& text) const {
    fs::create_directories(dir / ".obsidian");
    std::ofstream(dir / ".obsidian" / "app.json", std::ios::binary) << text;
  }
  fs::path dir;
};

}  // namespace

TEST_CASE("settings: app.json missing, with the key true or false, or without it") {
  TempVault v;
  std::string warning = "stale";
  CHECK(ReadVaultSettings(v.dir, &warning).empty());  // no .obsidian at all
  CHECK(warning.empty());
  v.AppJson(R"({"alwaysUpdateLinks":true,"strictLineBreaks":true})");
  VaultSettings on = ReadVaultSettings(v.dir, &warning);
  REQUIRE(on.strict_line_breaks.has_value());
  CHECK(*on.strict_line_breaks);
  CHECK(warning.empty());
  v.AppJson(R"({"strictLineBreaks":false})");
  VaultSettings off = ReadVaultSettings(v.dir, &warning);
  REQUIRE(off.strict_line_breaks.has_value());  // said explicitly: sent, so a site that was strict goes back
  CHECK(!*off.strict_line_breaks);
  v.AppJson(R"({"promptDelete":false})");
  CHECK(ReadVaultSettings(v.dir, &warning).empty());
  CHECK(warning.empty());
}

TEST_CASE("settings: a bad app.json is a warning, never a failure, and sends nothing") {
  TempVault v;
  std::string warning;
  v.AppJson(R"({"strictLineBreaks":true,)");
  CHECK(ReadVaultSettings(v.dir, &warning).empty());
  CHECK(warning.find("not valid JSON") != std::string::npos);
  v.AppJson("[true]");
  CHECK(ReadVaultSettings(v.dir, &warning).empty());
  CHECK(warning.find("object") != std::string::npos);
  v.AppJson(R"({"strictLineBreaks":"yes"})");
  CHECK(ReadVaultSettings(v.dir, &warning).empty());
  CHECK(warning.find("strictLineBreaks") != std::string::npos);
  // Over the bound: not read at all.
  v.AppJson("{\"strictLineBreaks\":true,\"pad\":\"" + std::string(kMaxAppJsonBytes, 'x') + "\"}");
  CHECK(ReadVaultSettings(v.dir, &warning).empty());
  CHECK(!warning.empty());
  // A directory where the file should be.
  fs::remove(v.dir / ".obsidian" / "app.json");
  fs::create_directories(v.dir / ".obsidian" / "app.json");
  CHECK(ReadVaultSettings(v.dir, &warning).empty());
}

TEST_CASE("settings: the flags win over app.json; no flag keeps it") {
  VaultSettings file;
  file.strict_line_breaks = true;
  CHECK(*ApplySettingsFlags(file, std::nullopt).strict_line_breaks);
  CHECK(!*ApplySettingsFlags(file, false).strict_line_breaks);
  CHECK(*ApplySettingsFlags({}, true).strict_line_breaks);
  CHECK(ApplySettingsFlags({}, std::nullopt).empty());
}

TEST_CASE("settings: the push body carries them only when known; the reply says the site's") {
  VaultSettings none, on;
  on.strict_line_breaks = true;
  CHECK(BuildPushBody({}, {}, {}, &none).find("settings") == std::string::npos);
  CHECK(BuildPushBody({}, {}, {}).find("settings") == std::string::npos);
  std::string body = BuildPushBody({}, {}, {}, &on);
  simdjson::dom::parser p;
  simdjson::dom::element doc;
  REQUIRE(!p.parse(body).get(doc));
  bool strict = false;
  REQUIRE(!doc["settings"]["strict_line_breaks"].get_bool().get(strict));
  CHECK(strict);

  auto reply = ParsePushReply(R"({"version":3,"received":0,"changed":0,"notes":[],)"
                              R"("settings":{"strict_line_breaks":true},"settings_changed":true})");
  REQUIRE(reply.ok());
  REQUIRE(reply->strict_line_breaks.has_value());
  CHECK(*reply->strict_line_breaks);
  CHECK(reply->settings_changed);
  auto old = ParsePushReply(R"({"version":3,"notes":[]})");  // a server before settings
  REQUIRE(old.ok());
  CHECK(!old->strict_line_breaks.has_value());
  CHECK(!old->settings_changed);

  auto manifest = ParseManifest(R"({"version":2,"notes":[],"settings":{"strict_line_breaks":false}})");
  REQUIRE(manifest.ok());
  CHECK(manifest->strict_line_breaks == std::optional<bool>(false));
  auto older = ParseManifest(R"({"version":2,"notes":[]})");
  REQUIRE(older.ok());
  CHECK(!older->strict_line_breaks.has_value());

  PushTotals t;
  CHECK(SummaryLine(t).find("line breaks") == std::string::npos);
  t.strict_line_breaks_now = false;
  CHECK(SummaryLine(t).find("strict line breaks now off") != std::string::npos);
  CHECK(SummaryJson(t).find("\"strict_line_breaks\":false") != std::string::npos);
}
