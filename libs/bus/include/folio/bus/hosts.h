// Host names as folio compares them: the canonical form of a Host header or
// of a host an operator configures. Three places must agree on it, so it
// lives here once: ingest canonicalizes the hosts it publishes in a site
// record (site_schema.h), the site-record decoder rejects hosts that are not
// canonical, and the edge canonicalizes each request's Host header to pick
// the site. Pure function; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace folio::bus {

inline constexpr size_t kMaxHostNameSize = 253;

// Canonical form of a host as a Host header or an operator gives it:
// ASCII lower case, without ":port", without the brackets of an IPv6
// literal and without a trailing '.' ("A.Example.:8081" -> "a.example",
// "[::1]:80" -> "::1"). Writes into *out, reusing its capacity (no
// allocation once it has kMaxHostNameSize bytes: safe on the edge's hot
// path). False (out unspecified) when the result is empty, longer than
// kMaxHostNameSize, or has a character outside [a-z0-9._-] (an IPv6
// literal, bracketed or with two or more ':', allows [0-9a-f:.] only).
bool NormalizeHost(std::string_view host, std::string* out);

}  // namespace folio::bus
