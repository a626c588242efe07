// The sign-in page of a site with readers (issue 29): ingest renders it
// and publishes it at kSignInUrl, public even on a private site; the edge
// serves it in place of any page of a private site a reader without a
// session asks for. Its form has no action, so it posts (fields `name` when
// the site has named users, and `password`) to the URL asked for; the edge
// answers that POST, and shows an error by unhiding p.signin-error.
// The page links folio's own stylesheet only (never the vault's
// publish.css, which a private site serves to signed-in readers only).
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "folio/site/layout.h"

namespace folio::site {

inline constexpr std::string_view kSignInUrl = "/_folio/signin";

// The complete page in the site's language (SiteInfo::lang: its <html
// lang> and the words of the i18n.h table, signin_*): <meta name="robots"
// content="noindex, nofollow">, the site's name, and the form. named_users:
// the site has readers with names (then a `name` field comes first).
std::string AssembleSignInPage(const SiteInfo& site, bool named_users);

}  // namespace folio::site
