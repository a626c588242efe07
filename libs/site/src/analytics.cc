#include "folio/site/analytics.h"

#include "folio/core/hash.h"
#include "folio/core/text.h"

namespace folio::site {
namespace {

using P = AnalyticsProvider;

constexpr std::string_view kPlausibleScript = "https://plausible.io/js/script.js";
constexpr std::string_view kGoatCounterScript = "https://gc.zgo.at/count.js";
constexpr std::string_view kGtagOrigin = "https://www.googletagmanager.com";
constexpr std::string_view kMarkerOpen = "<meta name=\"folio-analytics\" content=\"";

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// "https://host[:port]/path": nothing a double-quoted attribute or a CSP
// source list cannot carry, and no query or fragment (a source expression
// has neither). `flag` names the setting in the error.
Status CheckHttpsUrl(std::string_view url, std::string_view flag) {
  auto bad = [&](std::string_view why) {
    return Status::Invalid(std::string(flag) + " '" + std::string(url) + "' " + std::string(why));
  };
  if (url.size() > 512) return bad("is longer than 512 bytes");
  for (char c : url) {
    if (c <= ' ' || c >= 0x7f || c == '"' || c == '\'' || c == '<' || c == '>' || c == ';' || c == ',' ||
        c == '|' || c == '\\' || c == '?' || c == '#' || c == '*') {
      return bad("has a character a page and its policy cannot carry (spaces, quotes, <, >, ';', ',', '|', "
                 "'*', the '?' of a query, the '#' of a fragment)");
    }
  }
  if (!StartsWith(url, "https://")) return bad("must be an https:// URL");
  std::string_view rest = url.substr(8);
  size_t slash = rest.find('/');
  std::string_view host = rest.substr(0, slash);
  if (host.empty() || host.find('@') != std::string_view::npos) return bad("has no host (https://host/path)");
  if (slash == std::string_view::npos || slash + 1 == rest.size()) return bad("names no script path (https://host/script.js)");
  return Status::Ok();
}

// "https://host[:port]" of a URL CheckHttpsUrl accepted.
std::string_view Origin(std::string_view url) {
  size_t slash = url.find('/', 8);
  return url.substr(0, slash);
}

bool IsDomain(std::string_view id) {
  if (id.empty() || id.size() > 253 || id.front() == '.' || id.back() == '.' || id.front() == '-') return false;
  for (char c : id) {
    if (!IsLowerAlnum(c) && c != '.' && c != '-') return false;
  }
  return true;
}

bool IsUuid(std::string_view id) {
  if (id.size() != 36) return false;
  for (size_t i = 0; i < id.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? id[i] != '-' : !IsHex(id[i])) return false;
  }
  return true;
}

bool IsGoatCounterCode(std::string_view id) {
  if (id.empty() || id.size() > 63 || id.front() == '-' || id.back() == '-') return false;
  for (char c : id) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

bool IsMeasurementId(std::string_view id) {
  if (!StartsWith(id, "G-") || id.size() < 6 || id.size() > 22) return false;
  for (char c : id.substr(2)) {
    if (!(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

Result<P> ParseProvider(std::string_view name) {
  if (name.empty() || name == "none") return P::kNone;
  for (P p : {P::kPlausible, P::kUmami, P::kGoatCounter, P::kGoogle, P::kCustom}) {
    if (name == AnalyticsProviderName(p)) return p;
  }
  return Status::Invalid("--analytics '" + std::string(name) +
                         "' is not a provider: plausible, umami, goatcounter, google, custom or none");
}

Status CheckId(P p, std::string_view id) {
  auto bad = [&](std::string_view want) {
    return Status::Invalid("--analytics-id '" + std::string(id) + "' is not " + std::string(want));
  };
  switch (p) {
    case P::kNone:
      return Status::Ok();
    case P::kPlausible:
      return IsDomain(id) ? Status::Ok() : bad("a Plausible site domain (lowercase letters, digits, '.', '-')");
    case P::kUmami:
      return IsUuid(id) ? Status::Ok() : bad("an Umami website id (a UUID: 8-4-4-4-12 hex digits)");
    case P::kGoatCounter:
      if (StartsWith(id, "https://")) {
        if (!EndsWith(id, "/count")) return bad("a GoatCounter count URL (https://.../count)");
        return CheckHttpsUrl(id, "--analytics-id");
      }
      return IsGoatCounterCode(id) ? Status::Ok()
                                   : bad("a GoatCounter code (lowercase letters, digits, '-') or https://.../count");
    case P::kGoogle:
      return IsMeasurementId(id) ? Status::Ok() : bad("a Google Analytics measurement id (G-XXXXXXXXXX)");
    case P::kCustom:
      return id.empty() ? Status::Ok() : bad("empty (a custom script takes only --analytics-url)");
  }
  return Status::Ok();
}

// The GoatCounter endpoint hits go to.
std::string GoatCounterCountUrl(const SiteAnalytics& a) {
  if (StartsWith(a.id, "https://")) return a.id;
  return "https://" + a.id + ".goatcounter.com/count";
}

std::string GtagConfig(std::string_view id) {
  return "window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments);}gtag(\"js\",new Date());"
         "gtag(\"config\",\"" + std::string(id) + "\");";
}

// The CSP hash source of an inline script (as csp.h's ScriptHashSource; not
// called from here: csp.h depends on this file).
std::string HashSource(std::string_view script) {
  Sha256Digest d = Sha256(script);
  return "'sha256-" + Base64Encode(std::string_view(reinterpret_cast<const char*>(d.data()), d.size())) + "'";
}

void AppendScript(std::string_view attrs, std::string_view src, std::string* out) {
  *out += "<script ";
  *out += attrs;
  *out += " src=\"";
  AppendHtmlEscaped(src, out);
  *out += "\"></script>";
}

}  // namespace

std::string_view AnalyticsProviderName(AnalyticsProvider p) {
  switch (p) {
    case P::kNone: return "none";
    case P::kPlausible: return "plausible";
    case P::kUmami: return "umami";
    case P::kGoatCounter: return "goatcounter";
    case P::kGoogle: return "google";
    case P::kCustom: return "custom";
  }
  return "none";
}

Result<SiteAnalytics> CheckAnalytics(std::string_view provider, std::string_view id, std::string_view script_url) {
  Result<P> p = ParseProvider(provider);
  if (!p.ok()) return p.status();
  if (*p == P::kNone) {
    if (!id.empty() || !script_url.empty()) {
      return Status::Invalid("--analytics-id and --analytics-url need a provider (--analytics plausible, ...)");
    }
    return SiteAnalytics{};
  }
  if (id.empty() && *p != P::kCustom) {
    return Status::Invalid("--analytics " + std::string(provider) + " needs --analytics-id (the provider's site id)");
  }
  if (Status s = CheckId(*p, id); !s.ok()) return s;
  if (script_url.empty() && (*p == P::kUmami || *p == P::kCustom)) {
    return Status::Invalid("--analytics " + std::string(provider) + " needs --analytics-url (the script's https URL)");
  }
  if (!script_url.empty() && *p == P::kGoogle) {
    return Status::Invalid("--analytics google loads Google's gtag.js: --analytics-url is not used, leave it empty");
  }
  if (!script_url.empty()) {
    if (Status s = CheckHttpsUrl(script_url, "--analytics-url"); !s.ok()) return s;
  }
  return SiteAnalytics{*p, std::string(id), std::string(script_url)};
}

std::string AnalyticsScriptUrl(const SiteAnalytics& a) {
  if (!a.script_url.empty()) return a.script_url;
  switch (a.provider) {
    case P::kPlausible: return std::string(kPlausibleScript);
    case P::kGoatCounter: return std::string(kGoatCounterScript);
    case P::kGoogle: return std::string(kGtagOrigin) + "/gtag/js?id=" + a.id;
    default: return "";
  }
}

void AppendAnalyticsTags(const SiteAnalytics& a, std::string* out) {
  const std::string src = AnalyticsScriptUrl(a);
  switch (a.provider) {
    case P::kNone:
      return;
    case P::kPlausible:
      AppendScript("defer data-domain=\"" + HtmlEscape(a.id) + "\"", src, out);
      return;
    case P::kUmami:
      AppendScript("defer data-website-id=\"" + HtmlEscape(a.id) + "\"", src, out);
      return;
    case P::kGoatCounter:
      AppendScript("async data-goatcounter=\"" + HtmlEscape(GoatCounterCountUrl(a)) + "\"", src, out);
      return;
    case P::kGoogle:
      AppendScript("async", src, out);
      *out += "<script>" + GtagConfig(a.id) + "</script>";
      return;
    case P::kCustom:
      AppendScript("defer", src, out);
      return;
  }
}

AnalyticsCsp AnalyticsCspOf(const SiteAnalytics& a) {
  AnalyticsCsp c;
  auto add = [](std::string* to, std::string_view source) {
    *to += ' ';
    *to += source;
  };
  const std::string src = AnalyticsScriptUrl(a);
  switch (a.provider) {
    case P::kNone:
      break;
    case P::kPlausible:
    case P::kUmami:
    case P::kCustom:
      add(&c.script_src, src);
      add(&c.connect_src, Origin(src));  // events are posted to the script's own server
      break;
    case P::kGoatCounter: {
      add(&c.script_src, src);
      std::string count = GoatCounterCountUrl(a);
      add(&c.connect_src, Origin(count));  // navigator.sendBeacon
      add(&c.img_src, Origin(count));      // the pixel, without sendBeacon
      break;
    }
    case P::kGoogle:
      // Google's own list for GA4 (developers.google.com/tag-platform/security/guides/csp).
      add(&c.script_src, kGtagOrigin);
      add(&c.script_src, HashSource(GtagConfig(a.id)));
      add(&c.connect_src, "https://*.google-analytics.com https://*.analytics.google.com https://*.googletagmanager.com");
      add(&c.img_src, "https://*.google-analytics.com https://*.googletagmanager.com");
      break;
  }
  return c;
}

void AppendAnalyticsMarker(const SiteAnalytics& a, std::string* out) {
  if (a.provider == P::kNone) return;
  *out += kMarkerOpen;
  AppendHtmlEscaped(AnalyticsProviderName(a.provider), out);
  *out += '|';
  AppendHtmlEscaped(a.id, out);
  *out += '|';
  AppendHtmlEscaped(a.script_url, out);
  *out += "\">";
}

SiteAnalytics AnalyticsFromPage(std::string_view html) {
  size_t at = html.find(kMarkerOpen);
  if (at == std::string_view::npos) return {};
  html.remove_prefix(at + kMarkerOpen.size());
  html = html.substr(0, html.find('"'));
  // Checked values hold no '&', '<', '>' or '"': nothing was escaped.
  size_t bar1 = html.find('|');
  size_t bar2 = bar1 == std::string_view::npos ? bar1 : html.find('|', bar1 + 1);
  if (bar2 == std::string_view::npos) return {};
  Result<SiteAnalytics> a =
      CheckAnalytics(html.substr(0, bar1), html.substr(bar1 + 1, bar2 - bar1 - 1), html.substr(bar2 + 1));
  return a.ok() ? *a : SiteAnalytics{};
}

}  // namespace folio::site
