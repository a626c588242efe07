#include "site_command.h"

#include <sys/random.h>

#include <algorithm>
#include <cstdio>

#include "folio/bus/hosts.h"
#include "folio/bus/site_schema.h"
#include "folio/core/hash.h"
#include "folio/core/text.h"
#include "folio/core/time.h"
#include "store.h"

namespace folio::ingest {
namespace {

constexpr size_t kTokenBytes = 32;
constexpr size_t kMaxTitleBytes = 200;

int Failed(std::string_view verb, const Status& s) {
  std::fprintf(stderr, "folio-ingest site %.*s: %s\n", static_cast<int>(verb.size()), verb.data(),
               s.message().c_str());
  return 1;
}

Result<std::string> NewToken() {
  unsigned char raw[kTokenBytes];
  if (getrandom(raw, sizeof raw, 0) != static_cast<ssize_t>(sizeof raw)) {
    return Status::Internal("getrandom failed: cannot make a token");
  }
  return HexEncode(raw, sizeof raw);
}

Status CheckTitle(std::string_view title) {
  if (title.size() > kMaxTitleBytes) {
    return Status::Invalid("--title is " + std::to_string(title.size()) + " bytes; at most " +
                           std::to_string(kMaxTitleBytes));
  }
  for (char c : title) {
    if (static_cast<unsigned char>(c) < 0x20) return Status::Invalid("--title must not contain control characters");
  }
  return Status::Ok();
}

int Add(const Flags& flags, Store* store, const std::string& name) {
  auto hosts = ParseHostList(flags.Get("host"));
  if (!hosts.ok()) return Failed("add", hosts.status());
  if (Status s = CheckTitle(flags.Get("title")); !s.ok()) return Failed("add", s);
  auto token = NewToken();
  if (!token.ok()) return Failed("add", token.status());
  SiteRow row{name, flags.Get("title"), *hosts, Sha256Hex(*token), NowUnixMs()};
  // The flag site may have settings already (`site set` before `site add`): its record keeps them.
  auto prefs = store->LoadSitePrefs(name);
  if (!prefs.ok()) return Failed("add", prefs.status());
  bus::SiteRecord rec{row.name, row.hosts, row.title, SiteAccessOf(*prefs)};
  std::vector<OutboxMsg> outbox{
      {0, OutboxMsg::kKvPut, bus::SiteKey(name), bus::EncodeSiteRecord(rec), ""}};
  if (Status s = store->AddSite(row, std::move(outbox)); !s.ok()) return Failed("add", s);
  std::printf("%s\n", token->c_str());
  std::string host_list;
  for (const auto& h : row.hosts) host_list += (host_list.empty() ? "" : ",") + h;
  std::fprintf(stderr,
               "created site \"%s\" for %s. The line above is its API token; it is shown only this once "
               "(ingest keeps only its SHA-256). Push with: folio push DIR --token TOKEN\n",
               name.c_str(), host_list.c_str());
  return 0;
}

int List(Store* store) {
  auto sites = store->ListSites();
  if (!sites.ok()) return Failed("list", sites.status());
  for (const SiteRow& s : *sites) {
    std::string hosts;
    for (const auto& h : s.hosts) hosts += (hosts.empty() ? "" : ",") + h;
    std::printf("%s\t%s\t%s\n", s.name.c_str(), hosts.c_str(), s.title.c_str());
  }
  return 0;
}

int Remove(Store* store, const std::string& name) {
  std::vector<OutboxMsg> outbox{{0, OutboxMsg::kKvDelete, bus::SiteKey(name), "", ""}};
  if (Status s = store->RemoveSite(name, std::move(outbox)); !s.ok()) return Failed("remove", s);
  std::fprintf(stderr, "removed site \"%s\"; its token no longer works (its notes and pages are kept)\n",
               name.c_str());
  return 0;
}

}  // namespace

int SiteUsage(const std::string& message) {
  std::fprintf(stderr,
               "folio-ingest site: %s\n"
               "usage: folio-ingest site add NAME --host HOST[,HOST...] [--title TITLE] [--data DIR]\n"
               "       folio-ingest site list [--data DIR]\n"
               "       folio-ingest site remove NAME [--data DIR]\n"
               "       folio-ingest site set NAME [--private on|off] [--lang TAG] [--feed content|summary]\n"
               "                [--analytics plausible|umami|goatcounter|google|custom|none] [--analytics-id ID]\n"
               "                [--analytics-url https://...] [--session-ttl 7d] [--data DIR]\n"
               "       folio-ingest site show NAME [--data DIR]\n"
               "       folio-ingest site reader add NAME [USER] [--owner] [--data DIR]   (password on stdin)\n"
               "       folio-ingest site reader remove NAME [USER] [--data DIR]\n"
               "       folio-ingest site rotate-key NAME [--data DIR]\n",
               message.c_str());
  return 2;
}

Result<std::vector<std::string>> ParseHostList(std::string_view list) {
  std::vector<std::string> out;
  std::string host;
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = TrimAsciiSpace(list.substr(0, comma));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    if (item.empty()) continue;
    if (!bus::NormalizeHost(item, &host)) {
      return Status::Invalid("--host: \"" + std::string(item) +
                             "\" is not a host name (letters, digits, '.', '-', optional :port)");
    }
    if (std::find(out.begin(), out.end(), host) == out.end()) out.push_back(host);
  }
  if (out.empty()) return Status::Invalid("needs --host HOST (several: --host a.example,www.a.example)");
  if (out.size() > bus::kMaxSiteHosts) {
    return Status::Invalid("--host lists " + std::to_string(out.size()) + " hosts; at most " +
                           std::to_string(bus::kMaxSiteHosts));
  }
  return out;
}

int RunSiteCommand(const Flags& flags) {
  const auto& args = flags.positional();
  if (args.size() < 2) return SiteUsage("missing command");
  const std::string& verb = args[1];
  if (verb == "set" || verb == "show" || verb == "reader" || verb == "rotate-key") return RunSitePrefsCommand(flags);
  size_t want = verb == "list" ? 2 : 3;
  if (verb != "add" && verb != "list" && verb != "remove") return SiteUsage("unknown command \"" + verb + "\"");
  if (args.size() < want) return SiteUsage(verb + " needs a site NAME");
  if (args.size() > want) return SiteUsage("unexpected argument \"" + args[want] + "\"");
  if (want == 3 && !bus::IsValidSiteName(args[2])) {
    return Failed(verb, Status::Invalid("site name \"" + args[2] + "\" must match [a-z0-9-]{1,63} and not start with '-'"));
  }
  auto store = Store::Open(flags.Get("data"));
  if (!store.ok()) return Failed(verb, store.status());
  if (verb == "add") return Add(flags, store->get(), args[2]);
  if (verb == "list") return List(store->get());
  return Remove(store->get(), args[2]);
}

}  // namespace folio::ingest
