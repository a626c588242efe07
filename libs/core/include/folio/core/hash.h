// Content hashes (SHA-256, via OpenSSL's libcrypto) and hex/base64url codecs.
// Pure functions; thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace folio {

using Sha256Digest = std::array<uint8_t, 32>;

Sha256Digest Sha256(std::string_view data);
// Lower-case hex of SHA-256(data): 64 characters.
std::string Sha256Hex(std::string_view data);
std::string HexEncode(const uint8_t* data, size_t n);
// Lower-case hex of HMAC-SHA-256(key, message): 64 characters.
std::string HmacSha256Hex(std::string_view key, std::string_view message);
// True if every character of s is 0-9 or a-f (as HexEncode and Sha256Hex
// write them); true for "".
bool IsLowerHex(std::string_view s);

// SHA-256 of data that arrives in pieces (a streamed upload). One thread at
// a time per object; Finish() once, after which the object is spent.
class Sha256Stream {
 public:
  Sha256Stream();
  ~Sha256Stream();
  Sha256Stream(const Sha256Stream&) = delete;
  Sha256Stream& operator=(const Sha256Stream&) = delete;
  void Update(std::string_view data);
  // Lower-case hex of the digest of everything passed to Update.
  std::string FinishHex();

 private:
  void* ctx_;  // EVP_MD_CTX
};
// FNV-1a, 64-bit, of s continuing from h: a fast non-cryptographic hash for
// fingerprints, shards and feature hashing (never where an attacker's
// collision would matter).
inline constexpr uint64_t kFnv1aOffset = 14695981039346656037ull;
uint64_t Fnv1a64(std::string_view s, uint64_t h = kFnv1aOffset);

// RFC 4648 base64url, no padding (NATS-key safe: [A-Za-z0-9_-]).
std::string Base64UrlEncode(std::string_view data);
// Returns false on a character outside the alphabet.
bool Base64UrlDecode(std::string_view in, std::string* out);
// Standard base64 (RFC 4648, with padding) encode and decode, for attachment payloads.
std::string Base64Encode(std::string_view data);
bool Base64Decode(std::string_view in, std::string* out);

}  // namespace folio
