// HeaderCheck: folio's own strict framing rules for a request's head (the
// request line and the header section up to the blank line), RFC 9112 §2-§6,
// and, in its trailer mode, for a chunked body's trailer section.
// RequestParser feeds it every head byte just before http-parser sees it, so
// a head that breaks a rule is refused before the library acts on it (decides
// the body length, decodes chunks): http-parser's non-strict build accepts
// some of these, and a proxy that reads them otherwise would disagree with us
// about where a request ends (request smuggling, issue 22).
//
// Refused (error() names which):
//   - a line end that is not CRLF: a bare CR, a bare LF;
//   - NUL anywhere; any other control character in the request line, or in a
//     field value other than HTAB;
//   - a field name that is empty, holds a non-token character (whitespace
//     before the colon included), or a header line without a colon;
//   - obs-fold: a header line starting with SP or HTAB;
//   - Content-Length twice (even equal), or not a decimal number;
//     Transfer-Encoding twice, or with Content-Length, or whose final coding
//     is not `chunked` (or that names `chunked` earlier, or an empty one);
//   - Host twice.
// Empty lines (CRLF) before the request line are skipped (RFC 9112 §2.2).
// Trailers: the same line rules; their fields mean nothing to framing.
//
// Incremental: the head may arrive split anywhere; only a few bytes of state
// are kept between calls, plus offsets into the head, which must stay at the
// same place relative to `base` while it is read (trailers: no offsets).
// Not thread-safe; one per connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace folio::http {

class HeaderCheck {
 public:
  enum class Section : uint8_t { kHead, kTrailers };
  explicit HeaderCheck(Section section = Section::kHead)
      : state_(section == Section::kHead ? State::kStart : State::kLineStart), section_(section) {}

  // Checks base[*at, to) up to the end of the section, advancing *at past
  // each byte checked. Returns false at the first broken rule (*at is then
  // the byte's offset and error() says which); true otherwise, done() once
  // the blank line ending the section was seen. base is the request's first
  // byte (head: offsets into it are kept between calls).
  // REQUIRES: !done(); error() == nullptr; *at <= to.
  bool Scan(const char* base, size_t* at, size_t to);

  bool done() const { return state_ == State::kDone; }
  // What broke the rules (a static string), or nullptr.
  const char* error() const { return error_; }
  // A Host field was seen (so far).
  bool has_host() const { return hosts_ > 0; }
  // The body is chunked (a valid Transfer-Encoding). REQUIRES: done().
  bool chunked() const { return transfer_encodings_ > 0; }
  // For the next request (or trailer section).
  void Reset() { *this = HeaderCheck(section_); }

 private:
  enum class State : uint8_t {
    kStart,          // before the request line (empty lines skipped)
    kStartLf,        // CR of an empty line seen
    kRequestLine,
    kRequestLineLf,  // CR seen
    kLineStart,      // a header line, or the blank line
    kName,
    kValue,
    kLengthStart,    // a Content-Length value: OWS, then digits,
    kLengthDigits,
    kLengthEnd,      //   then OWS
    kValueLf,        // CR seen
    kEndLf,          // CR of the blank line seen
    kDone,
  };
  enum class Field : uint8_t { kOther, kContentLength, kTransferEncoding, kHost };

  // One byte that is not a plain byte of the current state (Scan skips those).
  bool Step(unsigned char c);
  bool StepOther(unsigned char c);
  bool StepLineStart(unsigned char c);
  bool StepName(unsigned char c);
  bool StepLength(unsigned char c);
  // An unexpected byte: a bare LF, NUL, or else `what`.
  bool Refuse(unsigned char c, const char* what);
  bool ExpectLf(unsigned char c, State next);
  // At the colon of a name as long as Host, Content-Length or
  // Transfer-Encoding: which field, counted against the framing rules.
  bool OnName();
  // At the CR ending a Transfer-Encoding value: its codings.
  bool OnValue();
  bool Fail(const char* why);

  const char* base_ = nullptr;  // during Scan
  const char* error_ = nullptr;
  size_t pos_ = 0;    // during Scan: the byte being checked
  size_t name_ = 0;   // offset of the current field name
  size_t colon_ = 0;  // offset of its colon
  uint64_t length_ = 0;  // Content-Length so far, checked per digit
  State state_;
  Section section_;
  Field field_ = Field::kOther;
  uint8_t content_lengths_ = 0;
  uint8_t transfer_encodings_ = 0;
  uint8_t hosts_ = 0;
};

}  // namespace folio::http
