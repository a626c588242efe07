// Where folio-storage's two tokens (auth.h) come from, and its token files.
//
// A role's token is given (--write-token / --read-token, the env variables
// FOLIO_WRITE_TOKEN / FOLIO_READ_TOKEN, or --write-token-file /
// --read-token-file) or, when not given, generated on the first start:
// storage writes it in plain text ONCE, for the operator to hand out, and
// keeps only its SHA-256, which it reads on every later start. It never
// reads the plain-text files back: delete them once the tokens are handed
// out. Files in the data folder, each 0600 and written whole or not at all:
//
//   token-hashes   "write <sha256 hex>\nread <sha256 hex>\n": the
//                  generated tokens' hashes (no token in plain text)
//   write-token    the generated write token (for ingest's --storage-token)
//   read-token     the generated read token (for edges' --storage-token)
//
// A given token is used as is and never written anywhere. Startup only
// (disk): call from main before serving.
#pragma once

#include <string>
#include <vector>

#include "auth.h"
#include "folio/core/status.h"

namespace folio::storage {

inline constexpr const char* kTokenHashesFile = "token-hashes";
inline constexpr const char* kWriteTokenFile = "write-token";
inline constexpr const char* kReadTokenFile = "read-token";

struct TokenConfig {
  std::string data_dir;     // the storage's --data; REQUIRES: exists
  std::string write_token;  // "" (default): the generated one
  std::string read_token;   // "" (default): the generated one
};

// Both roles' hashes. *created lists the plain-text token files written
// now (empty when every token was given or generated before). Failure:
// kInvalidArgument if a given token is not 1..256 visible ASCII characters,
// if both roles would have the same token, or if token-hashes is malformed
// (the message names the file); kUnavailable if a file cannot be read or
// written. Nothing is written unless a token must be generated.
Result<TokenHashes> LoadTokens(const TokenConfig& config, std::vector<std::string>* created);

}  // namespace folio::storage
