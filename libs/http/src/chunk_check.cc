#include "chunk_check.h"

#include <algorithm>
#include <cstdint>

namespace folio::http {

namespace {

int HexValue(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsControl(unsigned char c) { return (c < 0x20 && c != '\t') || c == 0x7f; }

constexpr const char kBareCr[] = "bare CR (not followed by LF)";
constexpr const char kBareLf[] = "bare LF (line ends must be CRLF)";
constexpr const char kBadSize[] = "chunk size is not a hexadecimal number";

}  // namespace

bool ChunkCheck::Scan(const char* base, size_t* at, size_t to) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(base);
  while (*at < to) {
    if (state_ == State::kTrailers) {
      return trailers_.Scan(base, at, to) || Fail(trailers_.error());
    }
    if (state_ == State::kData) {  // skipped unread: any bytes may be data
      size_t n = static_cast<size_t>(std::min<uint64_t>(size_, to - *at));
      *at += n;
      size_ -= n;
      if (size_ == 0) state_ = State::kDataCr;
      continue;
    }
    if (!Step(bytes[*at])) return false;
    ++*at;
  }
  return true;
}

bool ChunkCheck::Step(unsigned char c) {
  switch (state_) {
    case State::kSize:
    case State::kSizeDigits: return StepSize(c);
    case State::kExtension:
      if (c == '\r') {
        state_ = State::kSizeLf;
        return true;
      }
      if (c == '\n') return Fail(kBareLf);
      return !IsControl(c) || Fail("control character in a chunk extension");
    case State::kSizeLf:
      if (c != '\n') return Fail(kBareCr);
      state_ = size_ == 0 ? State::kTrailers : State::kData;  // size 0: the last chunk
      return true;
    case State::kDataCr:
      if (c != '\r') return Fail("chunk data not followed by CRLF");
      state_ = State::kDataLf;
      return true;
    case State::kDataLf:
      if (c != '\n') return Fail(kBareCr);
      state_ = State::kSize;
      return true;
    case State::kData:
    case State::kTrailers: return true;  // handled by Scan
  }
  return true;
}

bool ChunkCheck::StepSize(unsigned char c) {
  if (int digit = HexValue(c); digit >= 0) {
    if (size_ > (UINT64_MAX - 16) / 16) return Fail(kBadSize);  // http-parser's bound
    size_ = size_ * 16 + static_cast<uint64_t>(digit);
    state_ = State::kSizeDigits;
    return true;
  }
  if (state_ == State::kSize) return Fail(c == '\n' ? kBareLf : kBadSize);
  switch (c) {
    case '\r':
      state_ = State::kSizeLf;
      return true;
    case ';':
    case ' ':
    case '\t':  // BWS before the extension's ';'
      state_ = State::kExtension;
      return true;
    case '\n': return Fail(kBareLf);
    default: return Fail(kBadSize);
  }
}

bool ChunkCheck::Fail(const char* why) {
  error_ = why;
  return false;
}

}  // namespace folio::http
