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

// The page's words, one key each, English by default: the i18n tables
// can fill them per language.
struct SignInStrings {
  std::string title = "Sign in";
  std::string intro = "This site is private. Sign in to read it.";
  std::string name_label = "Name";
  std::string password_label = "Password";
  std::string submit = "Sign in";
  std::string error = "Wrong name or password. Try again.";
};

// The complete page: <meta name="robots" content="noindex, nofollow">, the
// site's name, and the form. named_users: the site has readers with names
// (then a `name` field comes first).
std::string AssembleSignInPage(const SiteInfo& site, bool named_users, const SignInStrings& words = {});

}  // namespace folio::site
