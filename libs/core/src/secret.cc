#include "folio/core/secret.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "folio/core/files.h"
#include "folio/core/hash.h"
#include "folio/core/log.h"

namespace folio {
namespace {

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) line.pop_back();
  return line;
}

// Reads the whole file; kNotFound if it does not exist.
Result<std::string> Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return Status::NotFound("no file " + path);
    return Status::Unavailable("cannot read " + path + ": " + strerror(errno));
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Status::Unavailable("cannot read " + path);
  return text;
}

// A secret file that others may read (older versions of ingest wrote its
// token 0644; or one was copied in) is made 0600; the warning comes once,
// since the file then is 0600.
void MakePrivate(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || (st.st_mode & 077) == 0) return;
  char was[8];
  snprintf(was, sizeof was, "%04o", static_cast<unsigned>(st.st_mode & 07777));
  if (chmod(path.c_str(), 0600) == 0) {
    log::Warn("secret file was readable by others; made it 0600", {{"file", path}, {"mode_was", was}});
  } else {
    log::Warn("secret file is readable by others and cannot be made 0600: fix its mode",
              {{"file", path}, {"mode", was}, {"error", strerror(errno)}});
  }
}

}  // namespace

Status WriteSecretFile(const std::string& path, std::string_view text) {
  std::string tmp = path + ".tmp-" + std::to_string(getpid());
  // A stale temp file (a crash) is removed, and the new one must be created
  // here: a link planted at that name would otherwise redirect the secret.
  if (unlink(tmp.c_str()) != 0 && errno != ENOENT) {
    return Status::Unavailable("cannot remove the stale " + tmp + ": " + strerror(errno));
  }
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return Status::Unavailable("cannot create " + tmp + ": " + strerror(errno));
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && fsync(fd) == 0;
  int err = errno;
  close(fd);
  if (!ok || rename(tmp.c_str(), path.c_str()) != 0) {
    if (ok) err = errno;
    unlink(tmp.c_str());
    return Status::Unavailable("cannot write " + path + ": " + strerror(err));
  }
  // The rename itself must survive a crash too (best effort: the file is
  // in place either way).
  std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/') + 1);
  (void)SyncDirectory(dir);
  return Status::Ok();
}

bool SameSecret(std::string_view given, std::string_view expected) {
  if (expected.empty()) return false;
  unsigned char diff = given.size() == expected.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i) {
    diff |= static_cast<unsigned char>(given[i] ^ expected[i % expected.size()]);
  }
  return diff == 0;
}

Result<std::string> RandomHex(size_t bytes) {
  unsigned char raw[256];
  if (bytes == 0 || bytes > sizeof raw) return Status::Invalid("RandomHex: bytes must be in 1..256");
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = getrandom(raw + got, bytes - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::Internal(std::string("getrandom failed: ") + strerror(errno));
    got += static_cast<size_t>(n);
  }
  return HexEncode(raw, bytes);
}

Result<std::string> ReadSecretFile(const std::string& path) {
  auto text = Slurp(path);
  if (!text.ok()) return text.status();
  std::string line = FirstLine(*text);
  if (line.empty()) return Status::Invalid("secret file " + path + " is empty");
  return line;
}

Result<std::string> ReadOrCreateSecretFile(const std::string& path, size_t bytes, bool* created) {
  if (created != nullptr) *created = false;
  auto text = Slurp(path);
  if (text.ok()) {
    std::string line = FirstLine(*text);
    if (!line.empty()) {
      MakePrivate(path);
      return line;
    }
  } else if (text.status().code() != Code::kNotFound) {
    return text.status();
  }
  auto secret = RandomHex(bytes);
  if (!secret.ok()) return secret.status();
  if (Status s = WriteSecretFile(path, *secret + "\n"); !s.ok()) return s;
  if (created != nullptr) *created = true;
  return secret;
}

void AddSecretFlags(Flags* flags, const std::string& name, const std::string& help) {
  flags->Add(name, "", help);
  flags->Add(name + "-file", "", "file whose first line is --" + name + " (e.g. a mounted secret)");
}

Result<std::string> SecretFromFlags(const Flags& flags, const std::string& name) {
  const std::string& value = flags.Get(name);
  const std::string& file = flags.Get(name + "-file");
  if (!value.empty() && !file.empty()) return Status::Invalid("give --" + name + " or --" + name + "-file, not both");
  if (!value.empty() || file.empty()) return value;
  auto secret = ReadSecretFile(file);
  if (!secret.ok()) return Status::Invalid("--" + name + "-file: " + secret.status().message());
  return secret;
}

}  // namespace folio
