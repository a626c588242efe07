// ChunkCheck: folio's own strict rules for a chunked body's framing (RFC 9112
// §7.1), the counterpart of HeaderCheck (header_check.h) for what follows the
// head. RequestParser feeds it every byte of a chunked body before
// http-parser sees it. http-parser's non-strict build takes any byte after a
// chunk size's CR as its LF, any two bytes after chunk data as its CRLF, and
// an LF inside a chunk extension; a proxy that reads those otherwise would
// disagree with us about where the body ends (issue 22).
//
// Refused (error() names which): a chunk size that is not 1*HEXDIG (or past
// 64 bits); a control byte other than HTAB in a chunk extension; a chunk-size
// line not ended by CRLF; chunk data not followed by CRLF; a trailer section
// breaking HeaderCheck's line rules. Chunk data itself is skipped unread.
//
// Incremental, without offsets into the body: the owner may drop consumed
// body bytes and move the rest between calls. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>

#include "header_check.h"

namespace folio::http {

class ChunkCheck {
 public:
  // Checks base[*at, to) up to the end of the body (the trailer section's
  // blank line), advancing *at past each byte checked. Returns false at the
  // first broken rule (then error() says which); done() once the body ended.
  // REQUIRES: !done(); error() == nullptr; *at <= to.
  bool Scan(const char* base, size_t* at, size_t to);

  bool done() const { return state_ == State::kTrailers && trailers_.done(); }
  // What broke the rules (a static string), or nullptr.
  const char* error() const { return error_; }
  void Reset() { *this = ChunkCheck(); }

 private:
  enum class State : uint8_t {
    kSize,        // first digit of a chunk size
    kSizeDigits,  // more digits, or the extension, or CR
    kExtension,
    kSizeLf,      // CR seen
    kData,        // size_ bytes left
    kDataCr,
    kDataLf,
    kTrailers,    // after the last chunk: trailers_ checks
  };

  bool Step(unsigned char c);
  bool StepSize(unsigned char c);
  bool Fail(const char* why);

  uint64_t size_ = 0;  // the chunk size so far, then its bytes left
  State state_ = State::kSize;
  const char* error_ = nullptr;
  HeaderCheck trailers_{HeaderCheck::Section::kTrailers};
};

}  // namespace folio::http
