// Status and Result<T>: how every fallible folio call reports failure.
//
// A Status is a code plus a message a user can act on ("note 'a/b.md': path
// contains '..'"). Codes are protocol-neutral; each service maps them to its
// wire (HTTP status, CLI exit code) in one place. Status and Result are plain
// values: copy them, return them, never throw them across an event loop.
// Thread-safety: none needed; values are not shared.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace folio {

enum class Code {
  kOk = 0,
  kInvalidArgument,   // the caller sent something malformed
  kUnauthenticated,   // missing or wrong credentials
  kPermissionDenied,  // credentials valid, action not allowed
  kNotFound,
  kTooLarge,          // a size or count limit was exceeded
  kConflict,
  kUnavailable,       // a dependency (NATS, disk) is down; retry later
  kDeadlineExceeded,
  kNoSpace,           // the disk is full; nothing was written; retry once space returns
  kDataLoss,          // stored data is damaged (a checksum failed); retrying will not help
  kInternal,          // a bug or an unexpected system error
  kUnprocessable,     // well-formed, but this content cannot be processed as it is (a note
                      // that crashed the service); retrying the same content will not help
  // (the last code: loops over every code end here)
};

// The name of a code, e.g. "invalid_argument"; stable, used in JSON errors.
std::string_view CodeName(Code code);
// The code CodeName calls `name` ("not_found" -> kNotFound), or nullopt for
// a name no code has (a newer peer's): the reverse of CodeName.
std::optional<Code> CodeNamed(std::string_view name);

// The code an HTTP status stands for when nothing better is known (an
// error body without a "code"): 400 and other 4xx kInvalidArgument, 401
// kUnauthenticated, 403 kPermissionDenied, 404 kNotFound, 408 and 504
// kDeadlineExceeded, 409 kConflict, 413/414/431 kTooLarge, 422
// kUnprocessable, 429/502/503 kUnavailable, 507 kNoSpace, 500 and any other
// status kInternal (a 2xx/3xx is not an error: kInternal too).
// The reverse of http::HttpStatusFor for bare statuses. It sits in core, not
// libs/http, because libs/bus needs it too (search replies of older services
// carry an HTTP-like "error_status") and deps point down: bus must not
// include libs/http. HTTP clients call http::StatusFromHttp (folio/http/
// client.h), which reads the error body's "code" first and falls back here.
Code CodeForHttpStatus(int http_status);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status Invalid(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status NotFound(std::string m) { return {Code::kNotFound, std::move(m)}; }
  static Status TooLarge(std::string m) { return {Code::kTooLarge, std::move(m)}; }
  static Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
  static Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }
  static Status Unauthenticated(std::string m) { return {Code::kUnauthenticated, std::move(m)}; }
  static Status PermissionDenied(std::string m) { return {Code::kPermissionDenied, std::move(m)}; }
  static Status NoSpace(std::string m) { return {Code::kNoSpace, std::move(m)}; }
  static Status DataLoss(std::string m) { return {Code::kDataLoss, std::move(m)}; }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "invalid_argument: <message>"
  std::string ToString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

// Either a value or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}                  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {}          // NOLINT: implicit by design

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  // REQUIRES: ok()
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  T&& value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace folio
