// `folio-ingest site set|show|reader|rotate-key` (site_command.h): a site's
// settings and readers (issue 29). Ingest, if running, notices the commit
// within a second (Sites::ReloadIfChanged): it publishes the site's record
// and restarts the site's writer, which re-publishes what changed.
#include <termios.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "folio/core/text.h"
#include "site_command.h"
#include "site_prefs.h"
#include "store.h"

namespace folio::ingest {
namespace {

constexpr const char* kSettingFlags[] = {"private", "lang", "feed", "analytics", "analytics-id", "analytics-url",
                                         "session-ttl"};

int Failed(std::string_view verb, const Status& s) {
  std::fprintf(stderr, "folio-ingest site %.*s: %s\n", static_cast<int>(verb.size()), verb.data(),
               s.message().c_str());
  return 1;
}

// The password on stdin: one line (without its line ending), at most
// kMaxPasswordBytes. Not echoed when stdin is a terminal.
Result<std::string> ReadPassword() {
  const bool tty = isatty(STDIN_FILENO) != 0;
  termios old{};
  if (tty) {
    std::fprintf(stderr, "password: ");
    tcgetattr(STDIN_FILENO, &old);
    termios quiet = old;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    tcsetattr(STDIN_FILENO, TCSANOW, &quiet);
  }
  std::string pw;
  int c;
  while ((c = std::getchar()) != EOF && c != '\n' && pw.size() <= kMaxPasswordBytes) pw.push_back(static_cast<char>(c));
  if (tty) {
    tcsetattr(STDIN_FILENO, TCSANOW, &old);
    std::fprintf(stderr, "\n");
  }
  if (!pw.empty() && pw.back() == '\r') pw.pop_back();
  if (pw.size() > kMaxPasswordBytes) {
    return Status::Invalid("the password is longer than " + std::to_string(kMaxPasswordBytes) + " bytes");
  }
  return pw;
}

int Set(const Flags& flags, Store* store, const std::string& site) {
  bool any = false;
  Status s = store->UpdateSitePrefs(site, [&](SitePrefs* p) {
    for (const char* name : kSettingFlags) {
      const std::string& v = flags.Get(name);
      if (v.empty()) continue;
      any = true;
      if (Status e = SetPref(p, name, v); !e.ok()) return e;
    }
    if (!any) return Status::Invalid("nothing to set (--private on|off, --lang TAG, --feed content|summary, ...)");
    return CheckPrefs(*p);
  });
  if (!s.ok()) return Failed("set", s);
  std::fprintf(stderr, "site \"%s\": settings saved (a running ingest applies them within a second)\n", site.c_str());
  return 0;
}

int Show(Store* store, const std::string& site) {
  auto p = store->LoadSitePrefs(site);
  if (!p.ok()) return Failed("show", p.status());
  std::printf("site\t%s\nprivate\t%s\nlang\t%s\nfeed\t%s\nanalytics\t%s\nanalytics-id\t%s\nanalytics-url\t%s\n"
              "session-ttl\t%s\nsession-key\t%s\n",
              site.c_str(), p->private_site ? "on" : "off", p->lang.c_str(), p->feed.c_str(),
              p->analytics.empty() ? "none" : p->analytics.c_str(), p->analytics_id.c_str(),
              p->analytics_url.c_str(), FormatSessionTtl(p->session_ttl_s).c_str(),
              p->session_key.empty() ? "none" : "set");
  for (const bus::SiteReader& r : p->readers) {
    std::printf("reader\t%s%s\n", r.name.empty() ? "(site password)" : r.name.c_str(), r.owner ? "\towner" : "");
  }
  return 0;
}

int Reader(const Flags& flags, Store* store, const std::vector<std::string>& args) {
  // args: site reader add|remove NAME [USER]
  const std::string& verb = args[2];
  const std::string& site = args[3];
  const std::string user = args.size() > 4 ? args[4] : "";
  if (verb == "add") {
    auto pw = ReadPassword();
    if (!pw.ok()) return Failed("reader add", pw.status());
    Status s = store->UpdateSitePrefs(site, [&](SitePrefs* p) { return AddReader(p, user, *pw, flags.GetBool("owner")); });
    std::fill(pw->begin(), pw->end(), '\0');
    if (!s.ok()) return Failed("reader add", s);
    std::fprintf(stderr, "site \"%s\": %s%s%s saved; everyone signed in before must sign in again\n", site.c_str(),
                 user.empty() ? "site password" : "reader \"", user.c_str(), user.empty() ? "" : "\"");
    return 0;
  }
  Status s = store->UpdateSitePrefs(site, [&](SitePrefs* p) { return RemoveReader(p, user); });
  if (!s.ok()) return Failed("reader remove", s);
  std::fprintf(stderr, "site \"%s\": %s removed; everyone signed in before must sign in again\n", site.c_str(),
               user.empty() ? "site password" : ("reader \"" + user + "\"").c_str());
  return 0;
}

int RotateKey(Store* store, const std::string& site) {
  Status s = store->UpdateSitePrefs(site, [](SitePrefs* p) {
    if (p->readers.empty()) return Status::Invalid("the site has no readers: nobody is signed in");
    auto key = NewSessionKey();
    if (!key.ok()) return key.status();
    p->session_key = std::move(*key);
    return Status::Ok();
  });
  if (!s.ok()) return Failed("rotate-key", s);
  std::fprintf(stderr, "site \"%s\": new session key; everyone is signed out\n", site.c_str());
  return 0;
}

// kNotFound unless `site` is served: a row of the sites table or the flag site (--site).
Status CheckServed(const Flags& flags, Store* store, const std::string& site) {
  if (site == flags.Get("site")) return Status::Ok();
  auto sites = store->ListSites();
  if (!sites.ok()) return sites.status();
  for (const SiteRow& row : *sites) {
    if (row.name == site) return Status::Ok();
  }
  return Status::NotFound("no site \"" + site + "\" (see `folio-ingest site list`; the --site site is \"" +
                          flags.Get("site") + "\")");
}

}  // namespace

int RunSitePrefsCommand(const Flags& flags) {
  const auto& args = flags.positional();
  const std::string& verb = args[1];
  const bool reader = verb == "reader";
  const size_t name_at = reader ? 3 : 2;
  const size_t most = reader ? 5 : 3;
  if (reader && (args.size() < 3 || (args[2] != "add" && args[2] != "remove"))) {
    return SiteUsage("site reader add|remove NAME [USER]");
  }
  if (args.size() <= name_at) return SiteUsage(verb + " needs a site NAME");
  if (args.size() > most) return SiteUsage("unexpected argument \"" + args[most] + "\"");
  const std::string& site = args[name_at];
  if (!bus::IsValidSiteName(site)) {
    return Failed(verb, Status::Invalid("site name \"" + site + "\" must match [a-z0-9-]{1,63} and not start with '-'"));
  }
  if (reader && args.size() > 4 && (args[4].empty() || !IsValidUtf8(args[4]) || !bus::IsValidReaderName(args[4]))) {
    return Failed(verb, Status::Invalid("reader name \"" + args[4] + "\" must be 1-64 printable characters "
                                        "without spaces or ':'"));
  }
  auto store = Store::Open(flags.Get("data"));
  if (!store.ok()) return Failed(verb, store.status());
  if (Status s = CheckServed(flags, store->get(), site); !s.ok()) return Failed(verb, s);
  if (verb == "set") return Set(flags, store->get(), site);
  if (verb == "show") return Show(store->get(), site);
  if (verb == "rotate-key") return RotateKey(store->get(), site);
  return Reader(flags, store->get(), args);
}

}  // namespace folio::ingest
