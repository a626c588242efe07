#include "header_check.h"

#include <array>
#include <cstdint>
#include <string_view>

#include "folio/core/text.h"

namespace folio::http {

namespace {

// Byte classes: the plain bytes of a field name, a field value, the request line.
enum : uint8_t { kTchar = 1, kValueChar = 2, kLineChar = 4 };

constexpr bool IsTchar(int c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c > 0 && c < 0x80 &&
          std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) != std::string_view::npos);
}

constexpr std::array<uint8_t, 256> MakeClasses() {
  std::array<uint8_t, 256> classes{};
  for (int c = 0; c < 256; ++c) {
    bool control = c < 0x20 || c == 0x7f;  // obs-text (0x80-0xff) is allowed
    uint8_t k = control ? 0 : kValueChar | kLineChar;
    if (c == '\t') k |= kValueChar;
    if (IsTchar(c)) k |= kTchar;
    classes[static_cast<size_t>(c)] = k;
  }
  return classes;
}

constexpr std::array<uint8_t, 256> kClasses = MakeClasses();

constexpr const char kBareCr[] = "bare CR (not followed by LF)";
constexpr const char kBareLf[] = "bare LF (line ends must be CRLF)";
constexpr const char kBoth[] = "both Content-Length and Transfer-Encoding";
constexpr const char kBadLength[] = "Content-Length is not a decimal number";

// RFC 9112 §6.1, §6.3: the final coding is chunked, and no other is.
bool ChunkedLast(std::string_view v) {
  for (;;) {
    size_t comma = v.find(',');
    std::string_view coding = TrimAsciiSpace(v.substr(0, comma));
    bool chunked = EqualsIgnoreAsciiCase(coding, "chunked");
    if (comma == std::string_view::npos) return chunked;
    if (chunked || coding.empty()) return false;
    v.remove_prefix(comma + 1);
  }
}

}  // namespace

bool HeaderCheck::Scan(const char* base, size_t* at, size_t to) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(base);
  base_ = base;
  pos_ = *at;
  bool ok = true;
  while (ok && pos_ < to && state_ != State::kDone) {
    uint8_t plain = state_ == State::kValue         ? kValueChar
                    : state_ == State::kName        ? kTchar
                    : state_ == State::kRequestLine ? kLineChar
                                                    : 0;
    while (pos_ < to && (kClasses[bytes[pos_]] & plain) != 0) ++pos_;
    if (pos_ == to) break;
    ok = Step(bytes[pos_]);
    if (ok) ++pos_;
  }
  *at = pos_;
  base_ = nullptr;
  return ok;
}

bool HeaderCheck::Step(unsigned char c) {
  switch (state_) {
    case State::kStart:
      if (c == '\r') {
        state_ = State::kStartLf;
        return true;
      }
      state_ = State::kRequestLine;
      return (kClasses[c] & kLineChar) != 0 || Step(c);
    case State::kRequestLine:
      if (c != '\r') return StepOther(c, "control character in the request line");
      state_ = State::kRequestLineLf;
      return true;
    case State::kValue:
      if (c != '\r') return StepOther(c, "control character in a header field value");
      state_ = State::kValueLf;
      return OnValue();
    case State::kLineStart: return StepLineStart(c);
    case State::kName: return StepName(c);
    case State::kLengthStart:
    case State::kLengthDigits:
    case State::kLengthEnd: return StepLength(c);
    case State::kStartLf: return ExpectLf(c, State::kStart);
    case State::kRequestLineLf:
    case State::kValueLf: return ExpectLf(c, State::kLineStart);
    case State::kEndLf: return ExpectLf(c, State::kDone);
    case State::kDone: return true;
  }
  return true;
}

bool HeaderCheck::StepLineStart(unsigned char c) {
  if ((kClasses[c] & kTchar) != 0) {
    name_ = pos_;
    state_ = State::kName;
    return true;
  }
  switch (c) {
    case '\r':
      state_ = State::kEndLf;
      return true;
    case ' ':
    case '\t': return Fail("obsolete line folding (a header line starting with whitespace)");
    case ':': return Fail("empty header field name");
    default: return StepOther(c, "invalid character in a header field name");
  }
}

bool HeaderCheck::StepName(unsigned char c) {
  switch (c) {
    case ':':
      colon_ = pos_;
      state_ = State::kValue;
      return OnName();
    case ' ':
    case '\t': return Fail("whitespace in a header field name or before its colon");
    case '\r': return Fail("header line without a colon");
    default: return StepOther(c, "invalid character in a header field name");
  }
}

// Per byte, so that http-parser, which reads the number as it comes, never
// sees a byte of a value we refuse.
bool HeaderCheck::StepLength(unsigned char c) {
  if (c >= '0' && c <= '9' && state_ != State::kLengthEnd) {
    if (length_ > (UINT64_MAX - 10) / 10) return Fail(kBadLength);  // http-parser's bound
    length_ = length_ * 10 + static_cast<uint64_t>(c - '0');
    state_ = State::kLengthDigits;
    return true;
  }
  if (c == ' ' || c == '\t') {
    if (state_ == State::kLengthDigits) state_ = State::kLengthEnd;
    return true;
  }
  if (c == '\r' && state_ != State::kLengthStart) {
    state_ = State::kValueLf;
    return true;
  }
  return StepOther(c, kBadLength);
}

bool HeaderCheck::StepOther(unsigned char c, const char* what) {
  if (c == '\n') return Fail(kBareLf);
  if (c == '\0') return Fail("NUL byte in the request head");
  return Fail(what);
}

bool HeaderCheck::ExpectLf(unsigned char c, State next) {
  if (c != '\n') return Fail(kBareCr);
  state_ = next;
  return true;
}

bool HeaderCheck::OnName() {
  if (section_ == Section::kTrailers) return true;  // no offsets: body bytes move
  std::string_view name(base_ + name_, colon_ - name_);
  field_ = name.size() == 4 && EqualsIgnoreAsciiCase(name, "host")                ? Field::kHost
           : name.size() == 14 && EqualsIgnoreAsciiCase(name, "content-length")     ? Field::kContentLength
           : name.size() == 17 && EqualsIgnoreAsciiCase(name, "transfer-encoding") ? Field::kTransferEncoding
                                                                                  : Field::kOther;
  switch (field_) {
    case Field::kContentLength:
      if (content_lengths_++ > 0) return Fail("more than one Content-Length");
      state_ = State::kLengthStart;
      return transfer_encodings_ == 0 || Fail(kBoth);
    case Field::kTransferEncoding:
      if (transfer_encodings_++ > 0) return Fail("more than one Transfer-Encoding");
      return content_lengths_ == 0 || Fail(kBoth);
    case Field::kHost: return hosts_++ == 0 || Fail("more than one Host");
    case Field::kOther: return true;
  }
  return true;
}

// http-parser sets its chunked flag only after the line's LF, which it sees
// after us; until the blank line it decides nothing.
bool HeaderCheck::OnValue() {
  if (field_ != Field::kTransferEncoding) return true;
  // Only SP and HTAB can be trimmed: the value holds no other control byte.
  std::string_view value = TrimAsciiSpace({base_ + colon_ + 1, pos_ - colon_ - 1});
  return ChunkedLast(value) ||
         Fail("Transfer-Encoding must have chunked as its final coding, and only there");
}

bool HeaderCheck::Fail(const char* why) {
  error_ = why;
  return false;
}

}  // namespace folio::http
