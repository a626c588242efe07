#include "folio/auth/password.h"

#include <sodium.h>

namespace folio::auth {
namespace {

bool Verify(const std::string& hash, std::string_view password) {
  if (sodium_init() < 0) return false;
  std::string pw(password);  // crypto_pwhash_str_verify takes a length, but the hash a C string
  return crypto_pwhash_str_verify(hash.c_str(), pw.data(), pw.size()) == 0;
}

}  // namespace

const bus::SiteReader* VerifyReader(const std::vector<bus::SiteReader>& readers, std::string_view name,
                                    std::string_view password) {
  const bus::SiteReader* found = nullptr;
  bool tried = false;
  for (const bus::SiteReader& r : readers) {
    if (r.name != name) continue;
    tried = true;
    if (Verify(r.hash, password)) {
      found = &r;
      break;
    }
  }
  // An unknown name costs one verification too; its answer is ignored.
  if (!tried && !readers.empty()) (void)Verify(readers.front().hash, password);
  return found;
}

std::string HashPassword(std::string_view password) {
  if (sodium_init() < 0) return "";
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str(out, password.data(), password.size(), crypto_pwhash_OPSLIMIT_INTERACTIVE,
                        crypto_pwhash_MEMLIMIT_INTERACTIVE) != 0) {
    return "";
  }
  return out;
}

}  // namespace folio::auth
