// Backup names signed with the backup key (backup_key.h): a name verifies
// only under the key that signed it and only with the SHA-256 it was made
// with; older unsigned names never verify; the key file is made once.
#include <doctest/doctest.h>

#include <sys/stat.h>

#include "backup_key.h"
#include "folio/core/hash.h"
#include "folio/testing/testing.h"

using namespace folio;
using namespace folio::ingest;

TEST_CASE("backup names: signed by the key, verified in full") {
  testing::TempDir dir;
  auto key = LoadBackupKey(dir.path(), "", true);
  REQUIRE(key.ok());
  CHECK(key->path == dir.path() + "/backup.key");
  CHECK(key->secret.size() == 64);
  struct stat st {};
  REQUIRE(stat(key->path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  auto again = LoadBackupKey(dir.path(), "", false);
  REQUIRE(again.ok());
  CHECK(again->secret == key->secret);

  const std::string sha = Sha256Hex("a database");
  const std::string name = SignedBackupName(*key, "20260101T120000Z", sha);
  CHECK(name.size() == 16 + 1 + 64 + 1 + 32 + 3);
  CHECK(name.rfind("20260101T120000Z-" + sha + "-", 0) == 0);
  std::string got;
  CHECK(VerifyBackupName(*key, name, &got));
  CHECK(got == sha);

  BackupKey other{std::string(64, 'a'), "/elsewhere/backup.key"};
  const std::string foreign = SignedBackupName(other, "20260101T120000Z", sha);
  std::string unused;
  CHECK_FALSE(VerifyBackupName(*key, foreign, &unused));
  CHECK(VerifyBackupName(other, foreign, &unused));
  // Any change to the stamp, the hash or the signature breaks it.
  std::string later = name;
  later[14] = '1';
  CHECK_FALSE(VerifyBackupName(*key, later, &unused));
  std::string other_sha = name;
  other_sha[17] = other_sha[17] == '0' ? '1' : '0';
  CHECK_FALSE(VerifyBackupName(*key, other_sha, &unused));
  std::string other_sig = name;
  other_sig[82] = other_sig[82] == '0' ? '1' : '0';
  CHECK_FALSE(VerifyBackupName(*key, other_sig, &unused));
  // Older versions' names (<stamp>-<12 hex>.db) and anything else.
  for (const char* n : {"20260101T120000Z-abcdefabcdef.db", "", "x.db", "../../etc/passwd"}) {
    CAPTURE(n);
    CHECK_FALSE(VerifyBackupName(*key, n, &unused));
  }

  // Restoring needs the key the backups were made with: never a new one.
  testing::TempDir fresh;
  auto missing = LoadBackupKey(fresh.path(), "", false);
  CHECK(missing.status().code() == Code::kNotFound);
  CHECK(missing.status().message().find("--backup-key-file") != std::string::npos);
  auto from_file = LoadBackupKey(fresh.path(), key->path, false);
  REQUIRE(from_file.ok());
  CHECK(from_file->secret == key->secret);
  CHECK(LoadBackupKey(fresh.path(), fresh.path() + "/nope", true).status().code() == Code::kNotFound);
}
