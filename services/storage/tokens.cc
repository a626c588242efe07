#include "tokens.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "folio/core/hash.h"
#include "folio/core/secret.h"

namespace folio::storage {
namespace {

constexpr size_t kTokenBytes = 24;  // random bytes of a generated token (48 hex digits)
constexpr size_t kMaxTokenChars = 256;

Status CheckGiven(const std::string& token, const char* flag) {
  bool ok = !token.empty() && token.size() <= kMaxTokenChars;
  for (char c : token) ok = ok && c > 0x20 && c < 0x7f;
  if (ok) return Status::Ok();
  return Status::Invalid(std::string(flag) + " must be 1.." + std::to_string(kMaxTokenChars) +
                         " visible ASCII characters (no spaces)");
}

// role -> hash, from the hashes file; empty if it does not exist.
Result<std::map<std::string, std::string>> ReadHashes(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path);
  if (!in) {
    if (errno == ENOENT) return out;
    return Status::Unavailable("cannot read " + path + ": " + strerror(errno));
  }
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty()) continue;
    std::istringstream words(line);
    std::string role, hash, extra;
    words >> role >> hash >> extra;
    if ((role != "write" && role != "read") || hash.size() != 64 || !IsLowerHex(hash) || !extra.empty()) {
      return Status::Invalid(path + " line " + std::to_string(n) +
                             " is not \"write|read <sha256 hex>\"; restore the file, or delete it (and hand out the"
                             " tokens generated on the next start)");
    }
    out[role] = hash;
  }
  if (in.bad()) return Status::Unavailable("cannot read " + path);
  return out;
}

}  // namespace

Result<TokenHashes> LoadTokens(const TokenConfig& config, std::vector<std::string>* created) {
  created->clear();
  if (!config.write_token.empty()) {
    if (Status s = CheckGiven(config.write_token, "--write-token"); !s.ok()) return s;
  }
  if (!config.read_token.empty()) {
    if (Status s = CheckGiven(config.read_token, "--read-token"); !s.ok()) return s;
  }
  const std::string hashes_path = config.data_dir + "/" + kTokenHashesFile;
  auto stored = ReadHashes(hashes_path);
  if (!stored.ok()) return stored.status();
  bool generated = false;
  TokenHashes out;
  struct Role {
    const char* name;
    const char* file;
    const std::string& given;
    std::string* hash;
  };
  for (const Role& role : {Role{"write", kWriteTokenFile, config.write_token, &out.write_sha256},
                           Role{"read", kReadTokenFile, config.read_token, &out.read_sha256}}) {
    if (!role.given.empty()) {
      *role.hash = Sha256Hex(role.given);
      continue;
    }
    if (auto it = stored->find(role.name); it != stored->end()) {
      *role.hash = it->second;
      continue;
    }
    auto token = RandomHex(kTokenBytes);
    if (!token.ok()) return token.status();
    // The plain text first: a crash before the hash is stored only means
    // a new token (and file) on the next start.
    std::string path = config.data_dir + "/" + role.file;
    if (Status s = WriteSecretFile(path, *token + "\n"); !s.ok()) return s;
    created->push_back(path);
    (*stored)[role.name] = *role.hash = Sha256Hex(*token);
    generated = true;
  }
  if (out.write_sha256 == out.read_sha256) {
    return Status::Invalid("storage's write and read tokens are the same; give them different values (the read"
                           " token must not be able to write)");
  }
  if (generated) {
    std::string text;
    for (const char* role : {"write", "read"}) {
      if (auto it = stored->find(role); it != stored->end()) text += std::string(role) + " " + it->second + "\n";
    }
    if (Status s = WriteSecretFile(hashes_path, text); !s.ok()) return s;
  }
  return out;
}

}  // namespace folio::storage
