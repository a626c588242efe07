#include "folio/site/csp.h"

#include "folio/core/hash.h"
#include "folio/core/text.h"
#include "layout_internal.h"

namespace folio::site {
namespace {

// Everything after style-src, the same for every page but for what a
// site's analytics adds (img-src, connect-src).
std::string Policy(std::string_view script_src, std::string_view style_src, const AnalyticsCsp& a = {}) {
  std::string p = "default-src 'none'; script-src ";
  p += script_src;
  p += a.script_src;
  p += "; style-src ";
  p += style_src;
  p += "; img-src 'self' https: http: data:";
  p += a.img_src;
  p += "; media-src 'self'; frame-src 'self' https://www.youtube-nocookie.com https://player.vimeo.com; font-src 'self'; "
       "connect-src 'self'";
  p += a.connect_src;
  p += "; form-action 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'self'";
  return p;
}

bool IsBase64Char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/';
}

// "sha384-<64 base64 chars>" and the like: one digest of a known length.
bool IsIntegrity(std::string_view v) {
  struct Alg {
    std::string_view prefix;
    size_t chars;  // base64 of the digest, with padding
  };
  for (Alg a : {Alg{"sha256-", 44}, Alg{"sha384-", 64}, Alg{"sha512-", 88}}) {
    if (!StartsWith(v, a.prefix) || v.size() != a.prefix.size() + a.chars) continue;
    std::string_view b = v.substr(a.prefix.size());
    while (!b.empty() && b.back() == '=') b.remove_suffix(1);
    if (b.size() + 2 < a.chars) return false;
    for (char c : b) {
      if (!IsBase64Char(c)) return false;
    }
    return true;
  }
  return false;
}

}  // namespace

std::string ScriptHashSource(std::string_view script) {
  Sha256Digest d = Sha256(script);
  return "'sha256-" + Base64Encode(std::string_view(reinterpret_cast<const char*>(d.data()), d.size())) + "'";
}

namespace internal {

const std::string& BaseScriptSources() {
  static const std::string sources = "'self' " + ScriptHashSource(kThemeInit);
  return sources;
}

}  // namespace internal

const std::string& PageCsp() {
  static const std::string csp = Policy(internal::BaseScriptSources(), "'self'");
  return csp;
}

std::string PageCsp(const SiteInfo& site) {
  if (site.analytics.provider == AnalyticsProvider::kNone) return PageCsp();
  return Policy(internal::BaseScriptSources(), "'self'", AnalyticsCspOf(site.analytics));
}

std::string NotePageCsp(const NotePage& p) {
  if (!p.has_mermaid || p.site.mermaid_url.empty()) return PageCsp(p.site);
  const std::string& url = p.site.mermaid_url;
  // A source expression needs a host: a same-origin path is 'self'.
  std::string script = internal::BaseScriptSources() + " " + ScriptHashSource(internal::kMermaidInit);
  if (url[0] != '/') script += " " + url;  // a path on the site is covered by 'self' already
  return Policy(script, "'self' 'unsafe-inline'", AnalyticsCspOf(p.site.analytics));
}

Status CheckMermaidSource(std::string_view url, std::string_view integrity) {
  if (url.empty()) {
    if (!integrity.empty()) return Status::Invalid("--mermaid-integrity is set but --mermaid-url is empty");
    return Status::Ok();
  }
  for (char c : url) {
    // A CSP source expression has no query or fragment: with '?' or '#' the
    // policy would not match the URL and diagrams would silently not load.
    if (c <= ' ' || c >= 0x7f || c == '"' || c == '\'' || c == '<' || c == '>' || c == ';' || c == ',' ||
        c == '\\' || c == '?' || c == '#') {
      return Status::Invalid("--mermaid-url '" + std::string(url) +
                             "' has a character a URL in a page and its policy cannot carry (spaces, quotes, <, >,"
                             " ';', ',', the '?' of a query, the '#' of a fragment)");
    }
  }
  if (!integrity.empty() && !IsIntegrity(integrity)) {
    return Status::Invalid("--mermaid-integrity '" + std::string(integrity) +
                           "' is not sha256-, sha384- or sha512- followed by the base64 digest");
  }
  bool same_origin = url[0] == '/' && !StartsWith(url, "//");
  if (same_origin) return Status::Ok();
  if (!StartsWith(url, "https://") && !StartsWith(url, "http://")) {
    return Status::Invalid("--mermaid-url '" + std::string(url) + "' must be an https:// URL or a path on the site (/...)");
  }
  if (integrity.empty()) {
    return Status::Invalid("--mermaid-url '" + std::string(url) +
                           "' is loaded from another origin: give its Subresource Integrity with "
                           "--mermaid-integrity sha384-... (openssl dgst -sha384 -binary FILE | openssl base64 -A), "
                           "or serve it from the site (/...)");
  }
  return Status::Ok();
}

}  // namespace folio::site
