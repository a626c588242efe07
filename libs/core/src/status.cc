#include "folio/core/status.h"

namespace folio {

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kInvalidArgument: return "invalid_argument";
    case Code::kUnauthenticated: return "unauthenticated";
    case Code::kPermissionDenied: return "permission_denied";
    case Code::kNotFound: return "not_found";
    case Code::kTooLarge: return "too_large";
    case Code::kConflict: return "conflict";
    case Code::kUnavailable: return "unavailable";
    case Code::kDeadlineExceeded: return "deadline_exceeded";
    case Code::kNoSpace: return "no_space";
    case Code::kDataLoss: return "data_loss";
    case Code::kInternal: return "internal";
    case Code::kUnprocessable: return "unprocessable";
  }
  return "unknown";
}

std::optional<Code> CodeNamed(std::string_view name) {
  for (int i = static_cast<int>(Code::kOk); i <= static_cast<int>(Code::kUnprocessable); ++i) {
    if (CodeName(static_cast<Code>(i)) == name) return static_cast<Code>(i);
  }
  return std::nullopt;
}

Code CodeForHttpStatus(int http_status) {
  switch (http_status) {
    case 400: return Code::kInvalidArgument;
    case 401: return Code::kUnauthenticated;
    case 403: return Code::kPermissionDenied;
    case 404: return Code::kNotFound;
    case 408:
    case 504: return Code::kDeadlineExceeded;
    case 409: return Code::kConflict;
    case 413:
    case 414:
    case 431: return Code::kTooLarge;
    case 422: return Code::kUnprocessable;
    case 429:
    case 502:
    case 503: return Code::kUnavailable;
    case 507: return Code::kNoSpace;
    default: break;
  }
  return http_status >= 400 && http_status < 500 ? Code::kInvalidArgument : Code::kInternal;
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string s(CodeName(code_));
  s += ": ";
  s += message_;
  return s;
}

}  // namespace folio
