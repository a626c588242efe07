// CRC-32C: RFC 3720 (iSCSI) B.4 vectors for both implementations, and the
// two must agree on every length and alignment.
#include <doctest/doctest.h>

#include <random>
#include <string>

#include "folio/journal/crc32c.h"
#include "format.h"

using namespace folio::journal;

namespace {

struct Impl {
  const char* name;
  uint32_t (*extend)(uint32_t, const void*, size_t);
};

std::vector<Impl> Impls() {
  std::vector<Impl> v = {{"portable", crc32c::ExtendPortable}, {"dispatch", crc32c::Extend}};
  if (crc32c::HardwareAvailable()) v.push_back({"sse4.2", crc32c::ExtendHardware});
  return v;
}

}  // namespace

TEST_CASE("CRC-32C: RFC 3720 test vectors, every implementation") {
  MESSAGE("SSE4.2 available: ", crc32c::HardwareAvailable());
  std::string zeros(32, '\0'), ones(32, '\xff'), up(32, '\0'), down(32, '\0');
  for (int i = 0; i < 32; ++i) {
    up[i] = static_cast<char>(i);
    down[i] = static_cast<char>(31 - i);
  }
  // An iSCSI SCSI Read (10) command PDU.
  const unsigned char pdu[48] = {0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
                                 0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
                                 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
                                 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
  for (const Impl& impl : Impls()) {
    CAPTURE(impl.name);
    CHECK(impl.extend(0, zeros.data(), 32) == 0x8A9136AAu);
    CHECK(impl.extend(0, ones.data(), 32) == 0x62A8AB43u);
    CHECK(impl.extend(0, up.data(), 32) == 0x46DD794Eu);
    CHECK(impl.extend(0, down.data(), 32) == 0x113FDB5Cu);
    CHECK(impl.extend(0, pdu, sizeof pdu) == 0xD9963A56u);
    CHECK(impl.extend(0, "123456789", 9) == 0xE3069283u);
    CHECK(impl.extend(0, "", 0) == 0u);
    // Extend composes: crc(a ‖ b) from crc(a).
    CHECK(impl.extend(impl.extend(0, "12345", 5), "6789", 4) == 0xE3069283u);
  }
}

TEST_CASE("CRC-32C: implementations agree on random data at every alignment and length") {
  std::mt19937 rng(42);
  std::string buf(4200, '\0');
  for (char& c : buf) c = static_cast<char>(rng());
  for (size_t offset = 0; offset < 16; ++offset) {
    for (size_t len : {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4096}) {
      uint32_t want = crc32c::ExtendPortable(0, buf.data() + offset, len);
      CHECK(crc32c::Extend(0, buf.data() + offset, len) == want);
      if (crc32c::HardwareAvailable()) CHECK(crc32c::ExtendHardware(0, buf.data() + offset, len) == want);
      CHECK(crc32c::ExtendPortable(0x12345678u, buf.data() + offset, len) ==
            crc32c::Extend(0x12345678u, buf.data() + offset, len));
    }
  }
  // A single flipped bit always changes the CRC.
  uint32_t base = crc32c::Value(buf);
  for (size_t bit = 0; bit < buf.size() * 8; bit += 97) {
    std::string flipped = buf;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    CHECK(crc32c::Value(flipped) != base);
  }
}

TEST_CASE("CRC-32C: Mask and Unmask are inverse and change the value") {
  for (uint32_t v : {0u, 1u, 0x8A9136AAu, 0xFFFFFFFFu}) {
    CHECK(crc32c::Unmask(crc32c::Mask(v)) == v);
    CHECK(crc32c::Mask(v) != v);
  }
}

// The record layout of README.md, byte for byte: a tombstone for key "k",
// seq 5, written at offset 64 of segment 1 (expected bytes computed
// independently with a bitwise CRC-32C in Python).

TEST_CASE("format: a tombstone record's exact bytes") {
  format::RecordHeader h;
  h.type = format::kTombstone;
  h.segment = 1;
  h.position = 64;
  h.seq = 5;
  h.key_len = 1;
  format::EncodedRecord rec;
  format::EncodeRecord(h, "k", "", "", format::PayloadCrc("k", "", ""), &rec);
  std::string bytes = std::string(rec.header, format::kHeaderSize) + "k" + std::string(rec.trailer, rec.trailer_len);
  const unsigned char want[40] = {0x46, 0x4f, 0x4c, 0x4a, 0x01, 0x03, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x40, 0x00,
                                  0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
                                  0x00, 0x00, 0x00, 0x00, 0x6b, 0x63, 0x67, 0x54, 0x27, 0x00, 0x00, 0x00};
  CHECK(rec.size == 40);
  CHECK(bytes == std::string(reinterpret_cast<const char*>(want), sizeof want));
  format::RecordHeader parsed;
  REQUIRE(format::ParseHeader(bytes.data(), &parsed));
  CHECK(format::CheckRecordCrc(bytes.data(), parsed));
  CHECK(parsed.seq == 5);
  bytes[33] ^= 1;  // the CRC itself
  CHECK_FALSE(format::CheckRecordCrc(bytes.data(), parsed));
}
