// `folio-ingest site add|list|remove`: administration of the sites table.
// Runs as its own short process against --data (ingest may be running on
// the same directory: it picks additions and removals up within a second,
// or at once when an unknown token arrives).
//
//   folio-ingest site add NAME --host HOST[,HOST...] [--title TITLE] [--data DIR]
//       creates the site and prints its new API token (one line) on stdout;
//       only the token's SHA-256 is stored.
//   folio-ingest site list [--data DIR]
//       one line per site: NAME<TAB>HOST,HOST...<TAB>TITLE
//   folio-ingest site remove NAME [--data DIR]
//       deletes the site row (its token stops working; its notes and pages
//       stay in the database) and withdraws its hosts from the edges.
//
//   folio-ingest site set NAME [--private on|off] [--lang TAG] [--feed content|summary]
//       [--analytics P] [--analytics-id ID] [--analytics-url URL] [--session-ttl 7d]
//   folio-ingest site show NAME
//   folio-ingest site reader add NAME [USER] [--owner]     (password: one line on stdin)
//   folio-ingest site reader remove NAME [USER]
//   folio-ingest site rotate-key NAME
//       a site's settings and readers (site_prefs.h, issue 29); NAME is a
//       row of the sites table or the --site site. No USER = the site
//       password. A reader change or rotate-key makes a new session key
//       (everyone is signed out). Only Argon2id hashes are stored; the
//       running ingest publishes the site record and re-publishes pages.
//
// Site records reach NATS through the outbox: the row and the record's KV
// put (or delete) commit together, and ingest publishes them.
// Threading: main thread only.
#pragma once

#include <string>
#include <vector>

#include "folio/core/config.h"
#include "folio/core/status.h"

namespace folio::ingest {

// Returns the exit code: 0 ok, 1 the command failed (message on stderr),
// 2 usage error. REQUIRES: flags parsed, positional()[0] == "site".
int RunSiteCommand(const Flags& flags);
// set|show|reader|rotate-key (site_prefs_command.cc); same exit codes.
int RunSitePrefsCommand(const Flags& flags);
// Prints `message` and the usage to stderr; returns 2.
int SiteUsage(const std::string& message);

// Splits a comma-separated --host value, normalises each host
// (bus::NormalizeHost) and drops duplicates, keeping order.
// kInvalidArgument naming the first bad host, or if there is none.
Result<std::vector<std::string>> ParseHostList(std::string_view list);

}  // namespace folio::ingest
