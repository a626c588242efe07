// CRC-32C (Castagnoli, polynomial 0x1EDC6F41, reflected 0x82F63B78): the
// checksum of every journal record and checkpoint file.
//
// Two implementations compute the same value: the SSE4.2 `crc32` instruction
// (x86-64 only, chosen at run time with __builtin_cpu_supports("sse4.2"))
// and a portable slicing-by-8 table. `Extend` dispatches; the others are
// public so tests can check both against RFC 3720's vectors.
//
// Pure functions; thread-safe; no ownership.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace folio::journal::crc32c {

// CRC-32C of data[0, n) continued from `crc` (the CRC of the bytes before;
// 0 for a fresh start): Extend(Extend(0, a), b) == Value(a ‖ b).
uint32_t Extend(uint32_t crc, const void* data, size_t n);
inline uint32_t Value(const void* data, size_t n) { return Extend(0, data, n); }
inline uint32_t Value(std::string_view s) { return Extend(0, s.data(), s.size()); }

uint32_t ExtendPortable(uint32_t crc, const void* data, size_t n);
// True on an x86-64 CPU with SSE4.2.
bool HardwareAvailable();
// REQUIRES: HardwareAvailable().
uint32_t ExtendHardware(uint32_t crc, const void* data, size_t n);

// Stored CRCs are masked (as in LevelDB's util/crc32c.h): the CRC of a
// string that itself contains CRCs is otherwise prone to degenerate cases.
inline constexpr uint32_t kMaskDelta = 0xa282ead8u;
inline uint32_t Mask(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + kMaskDelta; }
inline uint32_t Unmask(uint32_t masked) {
  uint32_t rot = masked - kMaskDelta;
  return (rot >> 17) | (rot << 15);
}

}  // namespace folio::journal::crc32c
