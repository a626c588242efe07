#include "backup_key.h"

#include <cctype>

#include "folio/core/hash.h"
#include "folio/core/secret.h"

namespace folio::ingest {
namespace {

constexpr size_t kKeyBytes = 32;
constexpr size_t kSignatureHex = 32;  // 128 bits of the HMAC
constexpr std::string_view kDomain = "folio-backup-v1\n";

std::string Signature(const BackupKey& key, std::string_view stamp, std::string_view sha256_hex) {
  std::string message(kDomain);
  message.append(stamp).append("\n").append(sha256_hex);
  return HmacSha256Hex(key.secret, message).substr(0, kSignatureHex);
}

// "20260101T120000Z"
bool IsStamp(std::string_view s) {
  if (s.size() != 16 || s[8] != 'T' || s[15] != 'Z') return false;
  for (size_t i = 0; i < 15; ++i) {
    if (i != 8 && !isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

}  // namespace

Result<BackupKey> LoadBackupKey(const std::string& data_dir, const std::string& key_file, bool create) {
  BackupKey key;
  key.path = key_file.empty() ? data_dir + "/" + kBackupKeyFile : key_file;
  Result<std::string> secret = key_file.empty() && create ? ReadOrCreateSecretFile(key.path, kKeyBytes, nullptr)
                                                          : ReadSecretFile(key.path);
  if (!secret.ok()) {
    if (secret.status().code() != Code::kNotFound) return secret.status();
    if (!key_file.empty()) return Status::NotFound("--backup-key-file " + key_file + " does not exist");
    return Status::NotFound("no backup key at " + key.path +
                            ": backups are signed with the key of the ingest that made them; pass "
                            "--backup-key-file with a copy of that ingest's " + kBackupKeyFile);
  }
  key.secret = std::move(*secret);
  return key;
}

Result<BackupKey> CreateBackupKeyFile(const std::string& path, bool* created) {
  auto secret = ReadOrCreateSecretFile(path, kKeyBytes, created);
  if (!secret.ok()) return secret.status();
  return BackupKey{std::move(*secret), path};
}

std::string SignedBackupName(const BackupKey& key, std::string_view stamp, std::string_view sha256_hex) {
  return std::string(stamp) + "-" + std::string(sha256_hex) + "-" + Signature(key, stamp, sha256_hex) + ".db";
}

bool VerifyBackupName(const BackupKey& key, std::string_view base_name, std::string* sha256_hex) {
  // <16 stamp>-<64 hex>-<32 hex>.db
  constexpr size_t kSize = 16 + 1 + 64 + 1 + kSignatureHex + 3;
  if (base_name.size() != kSize || base_name[16] != '-' || base_name[81] != '-' ||
      base_name.substr(kSize - 3) != ".db") {
    return false;
  }
  std::string_view stamp = base_name.substr(0, 16), sha = base_name.substr(17, 64);
  std::string_view sig = base_name.substr(82, kSignatureHex);
  if (!IsStamp(stamp) || !IsLowerHex(sha) || !IsLowerHex(sig)) return false;
  if (!SameSecret(sig, Signature(key, stamp, sha))) return false;
  *sha256_hex = std::string(sha);
  return true;
}

}  // namespace folio::ingest
