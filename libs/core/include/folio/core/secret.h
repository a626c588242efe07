// Secrets: API tokens and keys. Random generation (getrandom), comparison
// in constant time, and the token files services create in their data
// folder on first start (mode 0600, written whole or not at all).
// Pure functions and file I/O; thread-safe; call off event loops (disk).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "folio/core/config.h"
#include "folio/core/status.h"

namespace folio {

// True if given == expected, in time that depends only on given's length.
// False whenever expected is empty (an unset secret matches nothing).
bool SameSecret(std::string_view given, std::string_view expected);

// `bytes` random bytes from the kernel's CSPRNG as lower-case hex.
// kInternal if getrandom fails. REQUIRES: 1 <= bytes <= 256.
Result<std::string> RandomHex(size_t bytes);

// The secret kept in `path`: its first line, if the file exists and that
// line is not empty (a file group or others may read is made 0600 first,
// with a warning in the log); otherwise a new RandomHex(bytes) written there
// (WriteSecretFile) and *created set. kUnavailable if the file cannot be
// read or written. created may be null.
Result<std::string> ReadOrCreateSecretFile(const std::string& path, size_t bytes, bool* created);

// The first line of `path` (a secret handed over in a file, e.g. a mounted
// Kubernetes secret). kNotFound if missing, kInvalidArgument if empty.
Result<std::string> ReadSecretFile(const std::string& path);

// Writes `text` to `path` whole or not at all: a temp file
// (<path>.tmp-<pid>; a stale one is removed first) created 0600 and
// exclusively, never through a link, fsync'd, renamed over `path`.
// kUnavailable if that fails (no temp file is left behind).
Status WriteSecretFile(const std::string& path, std::string_view text);

// Declares --<name> (the secret itself, or FOLIO_<NAME> from the
// environment) and --<name>-file (a file holding it, e.g. a mounted secret).
void AddSecretFlags(Flags* flags, const std::string& name, const std::string& help);
// The secret of flags declared by AddSecretFlags: --<name> if set, else the
// first line of --<name>-file, else "" (not given). kInvalidArgument if both
// are set, or if the file is missing or empty (the message names the flag
// and the file). REQUIRES: flags parsed.
Result<std::string> SecretFromFlags(const Flags& flags, const std::string& name);

}  // namespace folio
