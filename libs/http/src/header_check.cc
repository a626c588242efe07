#include "header_check.h"

#include <array>
#include <cstdint>
#include <cstring>
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

// Skips whole 8-byte words of bytes that are neither below 0x20 nor 0x7f (the
// plain bytes of a value or the request line but HTAB): the hot GET path's
// heads are mostly values. Exact "some byte < n" word tests, as in
// https://graphics.stanford.edu/~seander/bithacks.html#HasLessInWord.
size_t SkipText(const unsigned char* bytes, size_t i, size_t to) {
  constexpr uint64_t kOnes = 0x0101010101010101, kHighs = 0x8080808080808080;
  while (to - i >= 8) {
    uint64_t w;
    memcpy(&w, bytes + i, 8);
    uint64_t del = w ^ (kOnes * 0x7f);  // a 0x7f byte is 0 here
    if ((((w - kOnes * 0x20) & ~w) | ((del - kOnes) & ~del)) & kHighs) break;
    i += 8;
  }
  return i;
}

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
  size_t i = *at;  // a local: bytes may alias the members
  bool ok = true;
  while (ok && i < to && state_ != State::kDone) {
    uint8_t plain = state_ == State::kValue         ? kValueChar
                    : state_ == State::kName        ? kTchar
                    : state_ == State::kRequestLine ? kLineChar
                                                    : 0;
    if (plain == kValueChar || plain == kLineChar) i = SkipText(bytes, i, to);
    while (i < to && (kClasses[bytes[i]] & plain) != 0) ++i;
    if (i == to) break;
    pos_ = i;
    ok = Step(bytes[i]);
    if (ok) ++i;
  }
  *at = i;
  base_ = nullptr;
  return ok;
}

// The delimiters of a well-formed header line first, as plain branches: one
// jump through the state table per delimiter made the hot path a third slower.
bool HeaderCheck::Step(unsigned char c) {
  if (state_ == State::kValue && c == '\r') {
    state_ = State::kValueLf;
    return field_ != Field::kTransferEncoding || OnValue();
  }
  if (state_ == State::kValueLf && c == '\n') {
    state_ = State::kLineStart;
    return true;
  }
  if (state_ == State::kLineStart && (kClasses[c] & kTchar) != 0) {
    name_ = pos_;
    state_ = State::kName;
    return true;
  }
  if (state_ == State::kName && c == ':') {
    colon_ = pos_;
    state_ = State::kValue;
    field_ = Field::kOther;
    size_t length = colon_ - name_;  // of the names OnName looks for
    return (length != 4 && length != 14 && length != 17) || OnName();
  }
  return StepOther(c);
}

// Everything else: the request line, line ends, the framing fields' values,
// and every broken rule.
bool HeaderCheck::StepOther(unsigned char c) {
  switch (state_) {
    case State::kStart:
      if (c == '\r') {
        state_ = State::kStartLf;
        return true;
      }
      state_ = State::kRequestLine;
      return (kClasses[c] & kLineChar) != 0 || StepOther(c);
    case State::kRequestLine:
      if (c != '\r') return Refuse(c, "control character in the request line");
      state_ = State::kRequestLineLf;
      return true;
    case State::kValue: return Refuse(c, "control character in a header field value");
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

// Not a field name's first byte.
bool HeaderCheck::StepLineStart(unsigned char c) {
  switch (c) {
    case '\r':
      state_ = State::kEndLf;
      return true;
    case ' ':
    case '\t': return Fail("obsolete line folding (a header line starting with whitespace)");
    case ':': return Fail("empty header field name");
    default: return Refuse(c, "invalid character in a header field name");
  }
}

// Neither a token byte nor the colon.
bool HeaderCheck::StepName(unsigned char c) {
  switch (c) {
    case ' ':
    case '\t': return Fail("whitespace in a header field name or before its colon");
    case '\r': return Fail("header line without a colon");
    default: return Refuse(c, "invalid character in a header field name");
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
  return Refuse(c, kBadLength);
}

bool HeaderCheck::Refuse(unsigned char c, const char* what) {
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
