// Third-party analytics of a site (issue 29): which provider a site names,
// the script tag every HTML page of that site carries, and exactly the
// Content-Security-Policy sources that script needs, for that site only.
// The setting is stored by ingest (folio-ingest site set --analytics P
// --analytics-id ID --analytics-url URL) and copied into SiteInfo::analytics;
// layout.h writes the tags, csp.h adds the sources, search_page.h does both
// for the edge's search page (which reads the setting back from the site's
// 404 page: AnalyticsFromPage).
//
// What each provider adds (README.md "Analytics"):
//   plausible:   <script defer data-domain="ID" src="URL">, URL default
//                https://plausible.io/js/script.js; script-src URL,
//                connect-src URL's origin (its /api/event).
//   umami:       <script defer data-website-id="ID" src="URL">, URL required;
//                script-src URL, connect-src URL's origin (its /api/send).
//   goatcounter: <script async data-goatcounter="https://ID.goatcounter.com/count"
//                src="https://gc.zgo.at/count.js"> (ID a code, or the https
//                count URL of a self-hosted GoatCounter); script-src the
//                script URL, connect-src and img-src (its pixel fallback) the
//                count URL's origin.
//   google:      <script async src="https://www.googletagmanager.com/gtag/js?id=ID">
//                and an inline config script, allowed by its SHA-256 hash
//                (never 'unsafe-inline'); script-src
//                https://www.googletagmanager.com, connect-src and img-src
//                Google's collect endpoints.
//   custom:      <script defer src="URL">, URL required, no ID; script-src
//                URL, connect-src URL's origin.
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "folio/core/status.h"

namespace folio::site {

enum class AnalyticsProvider { kNone, kPlausible, kUmami, kGoatCounter, kGoogle, kCustom };

// A checked setting (CheckAnalytics made it): values are safe to write into
// an HTML attribute and a CSP source list as they are.
struct SiteAnalytics {
  AnalyticsProvider provider = AnalyticsProvider::kNone;  // kNone: no third-party script (the default)
  std::string id;          // the provider's site id (see above); "" for custom
  std::string script_url;  // the script's https URL; "" = the provider's default (plausible, goatcounter, google)
  bool operator==(const SiteAnalytics&) const = default;
};

// "plausible", "umami", "goatcounter", "google", "custom"; "" or "none" for kNone.
std::string_view AnalyticsProviderName(AnalyticsProvider p);

// Checks a setting as an owner typed it and returns it checked.
// `provider`: a name above ("" or "none": off; then id and url must be "").
// `id` per provider: plausible a domain name ([a-z0-9.-], at most 253);
// umami a UUID (8-4-4-4-12 hex); goatcounter a code ([a-z0-9-], at most 63)
// or an https URL ending in "/count"; google a measurement id "G-" + 4 to 20
// of [A-Z0-9]; custom none. `script_url`: https://host[:port]/path only, no
// space, quote, '<', '>', ';', ',', '|', '\\', query or fragment (they would
// break the HTML attribute or the policy); required for umami and custom,
// not allowed for google (its URL is Google's). kInvalidArgument naming the
// flag and the problem.
Result<SiteAnalytics> CheckAnalytics(std::string_view provider, std::string_view id, std::string_view script_url);

// The script URL the page loads: script_url, else the provider's default;
// "" for kNone. For google it carries "?id=ID".
std::string AnalyticsScriptUrl(const SiteAnalytics& a);

// Appends the analytics tags for <head> (nothing for kNone).
void AppendAnalyticsTags(const SiteAnalytics& a, std::string* out);

// The sources each CSP directive gains (" src1 src2", with a leading space;
// "" for kNone or a directive the provider does not need).
struct AnalyticsCsp {
  std::string script_src;
  std::string connect_src;
  std::string img_src;
};
AnalyticsCsp AnalyticsCspOf(const SiteAnalytics& a);

// The marker the 404 page carries so the edge can give its own pages (the
// search page) the same analytics: <meta name="folio-analytics" content="P|ID|URL">.
void AppendAnalyticsMarker(const SiteAnalytics& a, std::string* out);
// The setting AppendAnalyticsMarker wrote into `html`, checked again by
// CheckAnalytics; kNone if there is none or it does not check.
SiteAnalytics AnalyticsFromPage(std::string_view html);

}  // namespace folio::site
