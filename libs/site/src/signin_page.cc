// The sign-in page (signin_page.h): no script, no explorer, nothing of the
// vault: only what an anonymous reader may see of a private site.
#include "folio/site/signin_page.h"

#include "folio/core/text.h"
#include "folio/site/i18n.h"

namespace folio::site {

std::string AssembleSignInPage(const SiteInfo& site, bool named_users) {
  const std::string_view lang = PageLang("", site.lang);
  const Strings& t = StringsFor(lang);
  std::string out = "<!doctype html>\n<html lang=\"";
  AppendHtmlEscaped(lang, &out);
  out += "\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
         "<meta name=\"color-scheme\" content=\"light dark\">"
         "<meta name=\"robots\" content=\"noindex, nofollow\"><title>";
  AppendHtmlEscaped(t.signin_title, &out);
  if (!site.name.empty()) {
    out += " · ";
    AppendHtmlEscaped(site.name, &out);
  }
  out += "</title><link rel=\"stylesheet\" href=\"" + StyleSheetUrl() +
         "\"><link rel=\"icon\" href=\"data:,\"></head>\n<body class=\"folio-signin\">"
         "<main class=\"signin\"><h1 class=\"site-name\">";
  AppendHtmlEscaped(site.name, &out);
  out += "</h1><p>";
  AppendHtmlEscaped(t.signin_intro, &out);
  out += "</p><p class=\"signin-error\" hidden>";
  AppendHtmlEscaped(t.signin_wrong, &out);
  out += "</p><form method=\"post\" class=\"signin-form\">";
  if (named_users) {
    out += "<label>";
    AppendHtmlEscaped(t.signin_name, &out);
    out += " <input name=\"name\" autocomplete=\"username\" required maxlength=\"64\"></label>";
  }
  out += "<label>";
  AppendHtmlEscaped(t.signin_password, &out);
  out += " <input type=\"password\" name=\"password\" autocomplete=\"current-password\" required maxlength=\"1024\""
         "></label><button type=\"submit\">";
  AppendHtmlEscaped(t.signin_submit, &out);
  out += "</button></form></main></body></html>\n";
  return out;
}

}  // namespace folio::site
