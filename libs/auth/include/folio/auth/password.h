// Checking a reader's password against a site's readers (Argon2id hashes
// made by libsodium's crypto_pwhash_str; bus::SiteReader). CPU- and
// memory-hard by design (tens of ms, tens of MiB): call it off any event
// loop, and bound how many run at once. Thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "folio/bus/site_schema.h"

namespace folio::auth {

// The reader `name` ("" = a site password) whose hash `password` matches,
// or nullptr. Always verifies at least one hash, so that an unknown name
// costs what a known one does (the first reader's hash stands in for it,
// and its answer is ignored): a wrong answer says nothing about the names.
// Readers with a name match only that name; with "" every site password is
// tried in turn.
const bus::SiteReader* VerifyReader(const std::vector<bus::SiteReader>& readers, std::string_view name,
                                    std::string_view password);

// A crypto_pwhash_str of `password` at libsodium's interactive limits
// (tests, and the edge's tests); "" if libsodium fails.
std::string HashPassword(std::string_view password);

}  // namespace folio::auth
