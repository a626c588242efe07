// The deterministic blobs of journal-crash-writer: key = decimal index, and
// content derived from the index by a PRNG (splitmix64), so a checker needs
// only the index to know the exact bytes. Shared by crash_writer.cc and
// crash_test.cc. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace folio::journal::crash {

inline uint64_t Mix(uint64_t* s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

inline std::string Key(uint64_t index) { return std::to_string(index); }

// Size: a third tiny (0..4 KiB), a third medium (..64 KiB), a third up to
// max_bytes; then the bytes, all from the index.
inline std::string Content(uint64_t index, uint64_t max_bytes) {
  uint64_t s = index * 0x2545F4914F6CDD1Dull + 0x5eed;
  uint64_t r = Mix(&s);
  uint64_t cap = r % 3 == 0 ? 4096 : r % 3 == 1 ? 65536 : max_bytes;
  if (cap > max_bytes) cap = max_bytes;
  std::string out(static_cast<size_t>(Mix(&s) % (cap + 1)), '\0');
  for (size_t i = 0; i < out.size(); i += 8) {
    uint64_t v = Mix(&s);
    for (size_t k = 0; k < 8 && i + k < out.size(); ++k) out[i + k] = static_cast<char>(v >> (8 * k));
  }
  return out;
}

}  // namespace folio::journal::crash
