// SitePrefs (site_prefs.h): readers, their Argon2id hashes and the session
// key, with libsodium. A plain-text password lives only in the caller's
// buffer; nothing here keeps or logs it.
#include <sodium.h>

#include <algorithm>

#include "folio/core/hash.h"
#include "site_prefs.h"

namespace folio::ingest {
namespace {

bool SodiumReady() {
  static const bool ready = sodium_init() >= 0;
  return ready;
}

}  // namespace

Result<std::string> HashPassword(std::string_view password) {
  if (!SodiumReady()) return Status::Internal("libsodium failed to initialise");
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str(out, password.data(), password.size(), crypto_pwhash_OPSLIMIT_INTERACTIVE,
                        crypto_pwhash_MEMLIMIT_INTERACTIVE) != 0) {
    return Status::Internal("cannot hash the password (out of memory?)");
  }
  return std::string(out);
}

bool CheckPassword(std::string_view hash, std::string_view password) {
  if (!SodiumReady() || hash.size() >= crypto_pwhash_STRBYTES) return false;
  char h[crypto_pwhash_STRBYTES] = {};
  std::copy(hash.begin(), hash.end(), h);
  return crypto_pwhash_str_verify(h, password.data(), password.size()) == 0;
}

Result<std::string> NewSessionKey() {
  if (!SodiumReady()) return Status::Internal("libsodium failed to initialise");
  unsigned char key[bus::kSessionKeyHexBytes / 2];
  randombytes_buf(key, sizeof key);
  std::string hex = HexEncode(key, sizeof key);
  sodium_memzero(key, sizeof key);
  return hex;
}

Status AddReader(SitePrefs* p, std::string_view name, std::string_view password, bool owner) {
  if (!bus::IsValidReaderName(name)) {
    return Status::Invalid("reader name \"" + std::string(name) + "\" must be 1-" +
                           std::to_string(bus::kMaxReaderNameBytes) +
                           " printable characters without spaces or ':'");
  }
  if (password.size() < kMinPasswordBytes || password.size() > kMaxPasswordBytes ||
      password.find('\0') != std::string_view::npos) {
    return Status::Invalid("the password must be " + std::to_string(kMinPasswordBytes) + " to " +
                           std::to_string(kMaxPasswordBytes) + " bytes");
  }
  auto it = std::find_if(p->readers.begin(), p->readers.end(), [&](const bus::SiteReader& r) { return r.name == name; });
  if (it == p->readers.end() && p->readers.size() >= bus::kMaxSiteReaders) {
    return Status::TooLarge("a site has at most " + std::to_string(bus::kMaxSiteReaders) + " readers");
  }
  auto hash = HashPassword(password);
  if (!hash.ok()) return hash.status();
  auto key = NewSessionKey();
  if (!key.ok()) return key.status();
  if (it == p->readers.end()) {
    p->readers.push_back({std::string(name), std::move(*hash), owner});
  } else {
    it->hash = std::move(*hash);
    it->owner = owner;
  }
  std::sort(p->readers.begin(), p->readers.end(),
            [](const bus::SiteReader& a, const bus::SiteReader& b) { return a.name < b.name; });
  p->session_key = std::move(*key);
  return Status::Ok();
}

Status RemoveReader(SitePrefs* p, std::string_view name) {
  auto it = std::find_if(p->readers.begin(), p->readers.end(), [&](const bus::SiteReader& r) { return r.name == name; });
  if (it == p->readers.end()) {
    return Status::NotFound(name.empty() ? std::string("the site has no site password")
                                         : "the site has no reader \"" + std::string(name) + "\"");
  }
  p->readers.erase(it);
  if (p->readers.empty()) {
    p->session_key.clear();
    return Status::Ok();
  }
  auto key = NewSessionKey();
  if (!key.ok()) return key.status();
  p->session_key = std::move(*key);
  return Status::Ok();
}

}  // namespace folio::ingest
