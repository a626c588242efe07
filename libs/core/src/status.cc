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

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string s(CodeName(code_));
  s += ": ";
  s += message_;
  return s;
}

}  // namespace folio
