// The key that signs ingest's backups, and the signed names it gives them.
//
// A backup is stored as backups/ingest/<base name>, where the base name is
//
//   <UTC stamp>-<SHA-256 of the file, 64 hex>-<signature, 32 hex>.db
//   signature = first 32 hex of HMAC-SHA-256(key, "folio-backup-v1\n" +
//               stamp + "\n" + sha256)
//
// so restore can tell a backup this ingest made (name signed by its key,
// bytes hashing to the name's SHA-256) from anything else put under
// backups/ingest/ (a planted database would hand over its token hashes).
// The key is <data>/backup.key (32 random bytes as hex, created 0600 on
// first use) unless --backup-key-file names another file. Restoring on
// another machine needs a copy of it; backups named by older versions
// (<stamp>-<12 hex>.db) carry no signature and are refused.
//
// Pure functions and file reads; thread-safe; call off event loops (disk).
#pragma once

#include <string>
#include <string_view>

#include "folio/core/status.h"

namespace folio::ingest {

inline constexpr const char* kBackupKeyFile = "backup.key";

struct BackupKey {
  std::string secret;  // the HMAC key
  std::string path;    // where it is kept, for messages
};

// key_file if not "" (it must exist), else <data_dir>/backup.key, created
// if missing when `create`. kNotFound if the key file does not exist (and
// is not to be created): the message says to pass --backup-key-file;
// kInvalidArgument if it is empty; kUnavailable if it cannot be read or
// written.
Result<BackupKey> LoadBackupKey(const std::string& data_dir, const std::string& key_file, bool create);

// The key at `path`, made (32 random bytes as hex, 0600) if the file does
// not exist; *created says which. For --restore-from-storage's first start
// with an empty storage (backup.h: RestoreIfEmpty). kUnavailable if it
// cannot be read or written.
Result<BackupKey> CreateBackupKeyFile(const std::string& path, bool* created);

// The base name of a backup taken at `stamp` ("20260101T120000Z") whose
// file has SHA-256 `sha256_hex`. REQUIRES: both well-formed.
std::string SignedBackupName(const BackupKey& key, std::string_view stamp, std::string_view sha256_hex);

// True if base_name is a SignedBackupName of this key (the signature is
// compared in constant time); *sha256_hex is then the name's SHA-256.
bool VerifyBackupName(const BackupKey& key, std::string_view base_name, std::string* sha256_hex);

}  // namespace folio::ingest
