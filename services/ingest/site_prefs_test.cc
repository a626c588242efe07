// Site settings and readers (site_prefs.h, issue 29): validation, the
// Argon2id hashes that never hold the password, session keys that change
// with the readers, and a private site's pages as its writer publishes
// them, against a real SQLite file.
#include <doctest/doctest.h>

#include <fstream>
#include <iterator>

#include "folio/core/gzip.h"
#include "folio/metrics/metrics.h"
#include "folio/site/signin_page.h"
#include "folio/testing/testing.h"
#include "site_prefs.h"
#include "site_writer.h"
#include "sites.h"
#include "store.h"

using namespace folio;
using namespace folio::ingest;

namespace {

std::string FileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool IsLowerHex(const std::string& s) {
  return s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

}  // namespace

TEST_CASE("site prefs: each setting refuses a bad value, naming it, and keeps the old one") {
  SitePrefs p;
  struct Bad {
    const char* name;
    const char* value;
  };
  for (Bad b : {Bad{"private", "maybe"}, {"lang", "english language"}, {"lang", "e"}, {"lang", "en-"},
                {"lang", "en-toolongsubtag"}, {"feed", "full"}, {"analytics", "matomo"},
                {"analytics-id", "a b"}, {"analytics-id", "x\"><script>"}, {"analytics-url", "http://a.example/s.js"},
                {"analytics-url", "https:///s.js"}, {"analytics-url", "https://a.example/s.js\" onload=x"},
                {"session-ttl", "59s"}, {"session-ttl", "401d"}, {"session-ttl", "7y"}, {"session-ttl", "-1d"},
                {"session-ttl", "99999999999999w"}, {"colour", "red"}}) {
    const SitePrefs before = p;
    Status s = SetPref(&p, b.name, b.value);
    CAPTURE(b.name);
    CAPTURE(b.value);
    CHECK(s.code() == Code::kInvalidArgument);
    CHECK(s.message().find(b.name) != std::string::npos);
    CHECK(SamePrefs(p, before));
  }
  REQUIRE(SetPref(&p, "private", "on").ok());
  REQUIRE(SetPref(&p, "lang", "pt-BR").ok());
  REQUIRE(SetPref(&p, "feed", "summary").ok());
  REQUIRE(SetPref(&p, "session-ttl", "36h").ok());
  CHECK(p.private_site);
  CHECK(p.lang == "pt-BR");
  CHECK(p.feed == "summary");
  CHECK(p.session_ttl_s == 36 * 3600);
  CHECK(FormatSessionTtl(p.session_ttl_s) == "36h");
  CHECK(FormatSessionTtl(7 * 86400) == "7d");

  // Across settings: a provider needs its id, custom its URL.
  REQUIRE(SetPref(&p, "analytics", "plausible").ok());
  CHECK(CheckPrefs(p).message().find("analytics-id") != std::string::npos);
  REQUIRE(SetPref(&p, "analytics-id", "notes.example").ok());
  CHECK(CheckPrefs(p).ok());
  REQUIRE(SetPref(&p, "analytics", "custom").ok());
  CHECK(CheckPrefs(p).message().find("analytics-url") != std::string::npos);
  REQUIRE(SetPref(&p, "analytics-url", "https://stats.example/script.js").ok());
  CHECK(CheckPrefs(p).ok());
  REQUIRE(SetPref(&p, "analytics", "google").ok());
  CHECK(!CheckPrefs(p).ok());  // a script URL is not Google's
  REQUIRE(SetPref(&p, "analytics", "none").ok());
  CHECK(p.analytics.empty());
  CHECK(p.analytics_id.empty());
  CHECK(p.analytics_url.empty());
  CHECK(CheckPrefs(p).ok());
}

TEST_CASE("site prefs: a refused change stores nothing") {
  testing::TempDir dir;
  auto store = Store::Open(dir.path());
  REQUIRE(store.ok());
  REQUIRE((*store)->UpdateSitePrefs("s", [](SitePrefs* p) { return SetPref(p, "lang", "de"); }).ok());
  Status s = (*store)->UpdateSitePrefs("s", [](SitePrefs* p) {
    if (Status e = SetPref(p, "private", "on"); !e.ok()) return e;
    return SetPref(p, "feed", "everything");
  });
  CHECK(s.code() == Code::kInvalidArgument);
  auto p = (*store)->LoadSitePrefs("s");
  REQUIRE(p.ok());
  CHECK(!p->private_site);
  CHECK(p->lang == "de");
  CHECK((*store)->LoadSitePrefs("other")->lang == "en");  // no row: the defaults
}

TEST_CASE("site readers: only Argon2id hashes are stored, and each change makes a new session key") {
  testing::TempDir dir;
  const std::string password = "correct horse battery";
  const std::string ann_password = "ann's own secret";
  {
    auto store = Store::Open(dir.path());
    REQUIRE(store.ok());
    Store& s = **store;
    REQUIRE(s.UpdateSitePrefs("s", [&](SitePrefs* p) { return AddReader(p, "", password, false); }).ok());
    SitePrefs p = *s.LoadSitePrefs("s");
    REQUIRE(p.readers.size() == 1);
    CHECK(p.readers[0].hash.rfind("$argon2id$", 0) == 0);
    CHECK(p.readers[0].hash.find(password) == std::string::npos);
    CHECK(CheckPassword(p.readers[0].hash, password));
    CHECK(!CheckPassword(p.readers[0].hash, "correct horse battery!"));
    CHECK(p.session_key.size() == bus::kSessionKeyHexBytes);
    CHECK(IsLowerHex(p.session_key));
    const std::string key1 = p.session_key;

    REQUIRE(s.UpdateSitePrefs("s", [&](SitePrefs* q) { return AddReader(q, "ann", ann_password, true); }).ok());
    p = *s.LoadSitePrefs("s");
    REQUIRE(p.readers.size() == 2);
    CHECK(p.readers[1].name == "ann");
    CHECK(p.readers[1].owner);
    const std::string key2 = p.session_key;
    CHECK(key2 != key1);
    // A new password for the same reader: a new hash, and everyone signed out.
    REQUIRE(s.UpdateSitePrefs("s", [&](SitePrefs* q) { return AddReader(q, "", "another password", false); }).ok());
    p = *s.LoadSitePrefs("s");
    CHECK(p.readers.size() == 2);
    CHECK(CheckPassword(p.readers[0].hash, "another password"));
    CHECK(!CheckPassword(p.readers[0].hash, password));
    CHECK(p.session_key != key2);
    const std::string key3 = p.session_key;
    REQUIRE(s.UpdateSitePrefs("s", [&](SitePrefs* q) { return RemoveReader(q, ""); }).ok());
    p = *s.LoadSitePrefs("s");
    CHECK(p.readers.size() == 1);
    CHECK(p.session_key != key3);
    CHECK(s.UpdateSitePrefs("s", [&](SitePrefs* q) { return RemoveReader(q, "bob"); }).code() == Code::kNotFound);
    REQUIRE(s.UpdateSitePrefs("s", [&](SitePrefs* q) { return RemoveReader(q, "ann"); }).ok());
    CHECK(s.LoadSitePrefs("s")->session_key.empty());  // nobody left to sign in

    SitePrefs bad;
    CHECK(AddReader(&bad, "ann", "short", false).code() == Code::kInvalidArgument);
    CHECK(AddReader(&bad, "ann", std::string(kMaxPasswordBytes + 1, 'x'), false).code() == Code::kInvalidArgument);
    CHECK(AddReader(&bad, "a b", "long enough", false).code() == Code::kInvalidArgument);
    CHECK(AddReader(&bad, "a:b", "long enough", false).code() == Code::kInvalidArgument);
    CHECK(bad.readers.empty());
    CHECK(bad.session_key.empty());
    REQUIRE(s.UpdateSitePrefs("s", [&](SitePrefs* q) { return AddReader(q, "zed", ann_password, false); }).ok());
    REQUIRE(s.Checkpoint().ok());
  }
  // Not in the database, nor in its log.
  const std::string bytes = FileBytes(dir.path() + "/ingest.db") + FileBytes(dir.path() + "/ingest.db-wal");
  CHECK(bytes.find("argon2id") != std::string::npos);  // the files were read
  CHECK(bytes.find(password) == std::string::npos);
  CHECK(bytes.find(ann_password) == std::string::npos);
  CHECK(bytes.find("another password") == std::string::npos);
}

TEST_CASE("private site: every page signed-in only, no feeds, robots disallow, a public sign-in page") {
  testing::TempDir dir;
  auto opened = Store::Open(dir.path());
  REQUIRE(opened.ok());
  Store& store = **opened;
  ThreadPool pool{2};
  metrics::Registry registry;
  SiteOptions o;
  o.site = "s";
  auto writer = std::make_unique<SiteWriter>(o, &store, &pool, &registry);
  REQUIRE(writer->Start().ok());
  PushRequest req;
  req.notes.push_back({"Alpha.md", "# Alpha\n\nSee [[Beta]].\n"});
  req.notes.push_back({"Beta.md", "# Beta\n\n#topic\n"});
  req.attachments.push_back({"pic.png", "\x89PNG not really", ""});
  REQUIRE(writer->Push(std::move(req)).ok());
  auto page = [&](const std::string& url, bus::PageRecord* r) {
    auto rec = store.PageRecord("s", url);
    return rec.ok() && bus::DecodePageRecord(*rec, r).ok();
  };
  auto body = [](const bus::PageRecord& r) {
    std::string out;
    REQUIRE(GzipDecompress(r.body_gzip, &out).ok());
    return out;
  };
  bus::PageRecord r;
  REQUIRE(page("/rss.xml", &r));
  CHECK(r.access == bus::PageAccess::kPublic);
  CHECK(!page(std::string(site::kSignInUrl), &r));

  auto restart = [&](SitePrefs prefs) {
    writer.reset();
    o.prefs = std::move(prefs);
    writer = std::make_unique<SiteWriter>(o, &store, &pool, &registry);
    REQUIRE(writer->Start().ok());
  };
  SitePrefs prefs;
  prefs.private_site = true;
  REQUIRE(AddReader(&prefs, "ann", "ann's password", false).ok());
  restart(prefs);
  auto all = store.AllPages("s");
  REQUIRE(all.ok());
  size_t assets = 0;
  for (const PageRow& row : *all) {
    REQUIRE(bus::DecodePageRecord(row.record, &r).ok());
    CAPTURE(row.url);
    const bool public_page = row.url == site::kSignInUrl || row.url == site::StyleSheetUrl();
    CHECK(r.access == (public_page ? bus::PageAccess::kPublic : bus::PageAccess::kSignedIn));
    if (row.url.rfind("/assets/", 0) == 0) ++assets;
  }
  CHECK(assets >= 1);  // re-stamped though no render writes them
  CHECK(!page("/rss.xml", &r));
  CHECK(!page("/sitemap.xml", &r));
  REQUIRE(page("/robots.txt", &r));
  CHECK(body(r) == "User-agent: *\nDisallow: /\n");
  REQUIRE(page("/alpha", &r));
  const std::string alpha = body(r);
  CHECK(alpha.find("<meta name=\"robots\" content=\"noindex, nofollow\">") != std::string::npos);
  CHECK(alpha.find("application/rss+xml") == std::string::npos);
  REQUIRE(page(std::string(site::kSignInUrl), &r));
  const std::string signin = body(r);
  CHECK(signin.find("<form method=\"post\" class=\"signin-form\">") != std::string::npos);
  CHECK(signin.find("action=") == std::string::npos);
  CHECK(signin.find("name=\"name\"") != std::string::npos);  // ann is a named user
  CHECK(signin.find("name=\"password\"") != std::string::npos);
  CHECK(signin.find("<p class=\"signin-error\" hidden>") != std::string::npos);
  CHECK(signin.find("noindex, nofollow") != std::string::npos);

  // A push to the private site publishes signed-in pages too.
  PushRequest more;
  more.notes.push_back({"Gamma.md", "# Gamma\n"});
  REQUIRE(writer->Push(std::move(more)).ok());
  REQUIRE(page("/gamma", &r));
  CHECK(r.access == bus::PageAccess::kSignedIn);

  // Public again, with only a site password: feeds back, no name field.
  prefs.private_site = false;
  REQUIRE(RemoveReader(&prefs, "ann").ok());
  REQUIRE(AddReader(&prefs, "", "site password", false).ok());
  restart(prefs);
  auto again = store.AllPages("s");
  REQUIRE(again.ok());
  for (const PageRow& row : *again) {
    REQUIRE(bus::DecodePageRecord(row.record, &r).ok());
    CAPTURE(row.url);
    CHECK(r.access == bus::PageAccess::kPublic);
  }
  REQUIRE(page("/rss.xml", &r));
  REQUIRE(page("/sitemap.xml", &r));
  REQUIRE(page("/robots.txt", &r));
  CHECK(body(r).find("Allow: /") != std::string::npos);
  REQUIRE(page(std::string(site::kSignInUrl), &r));
  CHECK(body(r).find("name=\"name\"") == std::string::npos);
  // No readers and public: no sign-in page.
  restart(SitePrefs());
  CHECK(!page(std::string(site::kSignInUrl), &r));
}

TEST_CASE("sites: the flag site's record, and settings another process commits reach it without a restart") {
  testing::TempDir dir;
  auto serving = Store::Open(dir.path());
  auto admin = Store::Open(dir.path());
  REQUIRE(serving.ok());
  REQUIRE(admin.ok());
  ThreadPool pool{2};
  metrics::Registry registry;
  SiteOptions flag;
  flag.site = "default";
  flag.site_name = "My Notes";
  Sites sites(flag, "token", serving->get(), &pool, &registry);
  REQUIRE(sites.Start().ok());
  bus::SiteRecord rec = sites.RecordOf("default");
  CHECK(rec.site == "default");
  CHECK(rec.hosts.empty());
  CHECK(rec.title == "My Notes");
  CHECK(!rec.access.private_site);
  CHECK(rec.access.readers.empty());
  bus::SiteRecord decoded;
  REQUIRE(bus::DecodeSiteRecord(bus::EncodeSiteRecord(rec), &decoded).ok());  // edges accept it

  const SiteWriter* before = sites.writer("default");
  REQUIRE((*admin)->UpdateSitePrefs("default", [](SitePrefs* p) {
    if (Status s = SetPref(p, "private", "on"); !s.ok()) return s;
    return AddReader(p, "ann", "ann's password", true);
  }).ok());
  sites.ReloadIfChanged();
  CHECK(sites.writer("default") != nullptr);
  CHECK(sites.writer("default") != before);  // a new writer, started with the settings
  rec = sites.RecordOf("default");
  CHECK(rec.access.private_site);
  REQUIRE(rec.access.readers.size() == 1);
  CHECK(rec.access.readers[0].owner);
  CHECK(rec.access.session_key.size() == 64);
  auto signin = (*serving)->PageRecord("default", std::string(site::kSignInUrl));
  REQUIRE(signin.ok());
  bus::PageRecord page;
  REQUIRE(bus::DecodePageRecord(*signin, &page).ok());
  CHECK(page.access == bus::PageAccess::kPublic);
  REQUIRE(bus::DecodePageRecord(*(*serving)->PageRecord("default", "/robots.txt"), &page).ok());
  CHECK(page.access == bus::PageAccess::kSignedIn);

  // Unchanged settings: the writer stays.
  const SiteWriter* now = sites.writer("default");
  REQUIRE((*admin)->AddSite(SiteRow{"b", "", {"b.example"}, "00", 1}, {}).ok());
  sites.ReloadIfChanged();
  CHECK(sites.writer("default") == now);
  CHECK(sites.RecordOf("b").hosts == std::vector<std::string>{"b.example"});
}
