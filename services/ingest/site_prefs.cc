// SitePrefs (site_prefs.h): each setting's validation. The secrets
// (hashes, session keys) are in site_secrets.cc.
#include "site_prefs.h"

#include <algorithm>

#include "folio/core/text.h"
#include "folio/site/analytics.h"

namespace folio::ingest {
namespace {

constexpr std::string_view kProviders[] = {"plausible", "umami", "goatcounter", "google", "custom"};

bool IsAlpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAlnum(char c) { return IsAlpha(c) || (c >= '0' && c <= '9'); }

// "en", "pt-BR", "zh-Hans", "es-419": a 2-3 letter language, then subtags of 1-8 letters or digits.
bool IsLangTag(std::string_view tag) {
  if (tag.empty() || tag.size() > kMaxLangBytes) return false;
  size_t first = tag.find('-');
  std::string_view lang = tag.substr(0, first);
  if (lang.size() < 2 || lang.size() > 3 || !std::all_of(lang.begin(), lang.end(), IsAlpha)) return false;
  while (first != std::string_view::npos) {
    tag = tag.substr(first + 1);
    first = tag.find('-');
    std::string_view sub = tag.substr(0, first);
    if (sub.empty() || sub.size() > 8 || !std::all_of(sub.begin(), sub.end(), IsAlnum)) return false;
  }
  return true;
}

// Printable ASCII without spaces, quotes or angle brackets: it lands in an
// HTML attribute and a CSP source.
bool IsPlainToken(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c > 0x20 && c < 0x7f && c != '"' && c != '\'' && c != '<' && c != '>' && c != '\\' && c != '`';
  });
}

Status CheckAnalyticsUrl(std::string_view url) {
  constexpr std::string_view kHttps = "https://";
  if (url.size() > kMaxAnalyticsUrlBytes) {
    return Status::Invalid("analytics-url is longer than " + std::to_string(kMaxAnalyticsUrlBytes) + " bytes");
  }
  if (!StartsWith(url, kHttps) || !IsPlainToken(url)) {
    return Status::Invalid("analytics-url must be an https:// URL without spaces or quotes");
  }
  std::string_view host = url.substr(kHttps.size());
  host = host.substr(0, host.find_first_of("/?#"));
  if (host.empty() || host.find('@') != std::string_view::npos || host.find(';') != std::string_view::npos ||
      host.find(',') != std::string_view::npos) {
    return Status::Invalid("analytics-url needs a host name: https://HOST/script.js");
  }
  return Status::Ok();
}

Status SetOnOff(std::string_view value, bool* out) {
  if (value == "on" || value == "true" || value == "yes") {
    *out = true;
  } else if (value == "off" || value == "false" || value == "no") {
    *out = false;
  } else {
    return Status::Invalid("private takes on or off, not \"" + std::string(value) + "\"");
  }
  return Status::Ok();
}

Status SetAnalytics(SitePrefs* p, std::string_view value) {
  if (value == "none") {
    p->analytics.clear();
    p->analytics_id.clear();
    p->analytics_url.clear();
    return Status::Ok();
  }
  if (std::find(std::begin(kProviders), std::end(kProviders), value) == std::end(kProviders)) {
    return Status::Invalid("analytics takes plausible, umami, goatcounter, google, custom or none, not \"" +
                           std::string(value) + "\"");
  }
  p->analytics = std::string(value);
  return Status::Ok();
}

}  // namespace

Status SetPref(SitePrefs* p, std::string_view name, std::string_view value) {
  if (name == "private") return SetOnOff(value, &p->private_site);
  if (name == "lang") {
    if (!IsLangTag(value)) {
      return Status::Invalid("lang \"" + std::string(value) + "\" is not a language tag (en, de, pt-BR, zh-Hans)");
    }
    p->lang = std::string(value);
    return Status::Ok();
  }
  if (name == "feed") {
    if (value != "content" && value != "summary") {
      return Status::Invalid("feed takes content or summary, not \"" + std::string(value) + "\"");
    }
    p->feed = std::string(value);
    return Status::Ok();
  }
  if (name == "analytics") return SetAnalytics(p, value);
  if (name == "analytics-id") {
    if (value.empty() || value.size() > kMaxAnalyticsIdBytes || !IsPlainToken(value)) {
      return Status::Invalid("analytics-id must be 1-" + std::to_string(kMaxAnalyticsIdBytes) +
                             " printable characters without spaces or quotes");
    }
    p->analytics_id = std::string(value);
    return Status::Ok();
  }
  if (name == "analytics-url") {
    if (Status s = CheckAnalyticsUrl(value); !s.ok()) return s;
    p->analytics_url = std::string(value);
    return Status::Ok();
  }
  if (name == "session-ttl") {
    auto ttl = ParseSessionTtl(value);
    if (!ttl.ok()) return ttl.status();
    p->session_ttl_s = *ttl;
    return Status::Ok();
  }
  return Status::Invalid("no setting \"" + std::string(name) + "\"");
}

Status CheckPrefs(const SitePrefs& p) {
  if (p.analytics.empty()) {
    if (!p.analytics_id.empty() || !p.analytics_url.empty()) {
      return Status::Invalid("analytics-id and analytics-url need --analytics PROVIDER");
    }
    return Status::Ok();
  }
  if (p.analytics == "custom") {
    if (p.analytics_url.empty()) return Status::Invalid("analytics custom needs --analytics-url https://...");
    return Status::Ok();
  }
  if (p.analytics_id.empty()) {
    return Status::Invalid("analytics " + p.analytics + " needs --analytics-id (" +
                           (p.analytics == "plausible"     ? "the site's domain"
                            : p.analytics == "umami"       ? "the website id"
                            : p.analytics == "goatcounter" ? "the site code"
                                                           : "the measurement id, G-...") +
                           ")");
  }
  // The rest (an id's shape per provider, an https URL that cannot break the
  // tag or the policy) is the page builder's own check (analytics.h).
  return site::CheckAnalytics(p.analytics, p.analytics_id, p.analytics_url).status();
}

Result<int64_t> ParseSessionTtl(std::string_view value) {
  const Status bad = Status::Invalid("session-ttl \"" + std::string(value) +
                                     "\" must be a duration from 60s to 400d (90s, 30m, 12h, 7d, 2w)");
  if (value.empty() || value.size() > 12) return bad;
  int64_t unit = 1;
  switch (value.back()) {
    case 's': unit = 1; break;
    case 'm': unit = 60; break;
    case 'h': unit = 3600; break;
    case 'd': unit = 86400; break;
    case 'w': unit = 7 * 86400; break;
    default: unit = 0;
  }
  std::string_view digits = unit ? value.substr(0, value.size() - 1) : value;
  if (!unit) unit = 1;
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return bad;
  }
  int64_t n = std::stoll(std::string(digits));  // at most 11 digits: no overflow
  if (n > kMaxSessionTtlS / unit || n * unit < kMinSessionTtlS) return bad;
  return n * unit;
}

std::string FormatSessionTtl(int64_t s) {
  for (auto [unit, suffix] : {std::pair<int64_t, char>{86400, 'd'}, {3600, 'h'}, {60, 'm'}}) {
    if (s % unit == 0) return std::to_string(s / unit) + suffix;
  }
  return std::to_string(s) + "s";
}

bool SamePrefs(const SitePrefs& a, const SitePrefs& b) {
  auto same_reader = [](const bus::SiteReader& x, const bus::SiteReader& y) {
    return x.name == y.name && x.hash == y.hash && x.owner == y.owner;
  };
  return a.private_site == b.private_site && a.lang == b.lang && a.feed == b.feed && a.analytics == b.analytics &&
         a.analytics_id == b.analytics_id && a.analytics_url == b.analytics_url &&
         a.session_ttl_s == b.session_ttl_s && a.session_key == b.session_key &&
         std::equal(a.readers.begin(), a.readers.end(), b.readers.begin(), b.readers.end(), same_reader);
}

bus::SiteAccess SiteAccessOf(const SitePrefs& p) {
  bus::SiteAccess a;
  a.private_site = p.private_site;
  a.session_key = p.session_key;
  a.session_ttl_s = p.session_ttl_s;
  a.readers = p.readers;
  return a;
}

}  // namespace folio::ingest
