// CRC-32C: SSE4.2 instruction when the CPU has it, slicing-by-8 otherwise.
#include "folio/journal/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace folio::journal::crc32c {

namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables MakeTables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? (c >> 1) ^ kPoly : c >> 1;
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (size_t s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
  return t;
}

constexpr Tables kTables = MakeTables();

uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;  // little-endian hosts only (the journal format is little-endian)
}

#if defined(__x86_64__)
// Compiled for SSE4.2 regardless of -march; only called after the run-time
// check, so the binary still runs on older CPUs.
__attribute__((target("sse4.2"))) uint32_t HardwareImpl(uint32_t crc, const uint8_t* p, size_t n) {
  uint64_t c = ~crc;
  while (n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0) {
    c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
    --n;
  }
  for (; n >= 8; n -= 8, p += 8) c = _mm_crc32_u64(c, Load64(p));
  for (; n > 0; --n) c = _mm_crc32_u8(static_cast<uint32_t>(c), *p++);
  return ~static_cast<uint32_t>(c);
}

bool DetectHardware() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2") != 0;
}
#endif

}  // namespace

uint32_t ExtendPortable(uint32_t crc, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint32_t c = ~crc;
  for (; n > 0 && (reinterpret_cast<uintptr_t>(p) & 7) != 0; --n) c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xff];
  for (; n >= 8; n -= 8, p += 8) {
    uint64_t v = Load64(p) ^ c;
    c = kTables[7][v & 0xff] ^ kTables[6][(v >> 8) & 0xff] ^ kTables[5][(v >> 16) & 0xff] ^
        kTables[4][(v >> 24) & 0xff] ^ kTables[3][(v >> 32) & 0xff] ^ kTables[2][(v >> 40) & 0xff] ^
        kTables[1][(v >> 48) & 0xff] ^ kTables[0][v >> 56];
  }
  for (; n > 0; --n) c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xff];
  return ~c;
}

bool HardwareAvailable() {
#if defined(__x86_64__)
  static const bool hardware = DetectHardware();
  return hardware;
#else
  return false;
#endif
}

uint32_t ExtendHardware(uint32_t crc, const void* data, size_t n) {
#if defined(__x86_64__)
  return HardwareImpl(crc, static_cast<const uint8_t*>(data), n);
#else
  return ExtendPortable(crc, data, n);
#endif
}

uint32_t Extend(uint32_t crc, const void* data, size_t n) {
  return HardwareAvailable() ? ExtendHardware(crc, data, n) : ExtendPortable(crc, data, n);
}

}  // namespace folio::journal::crc32c
