// The two request encodings a sign-in reads: an
// application/x-www-form-urlencoded body (the sign-in form) and the Cookie
// header. Pure functions over views; any thread.
#pragma once

#include <string>
#include <string_view>

namespace folio::auth {

inline constexpr size_t kMaxFormBytes = 4096;  // a sign-in body past this is refused (413)

// The value of field `name` in a urlencoded body (the first one), decoded
// ('+' is a space, %XX a byte); false if absent, if the body is longer than
// kMaxFormBytes, or if the value's percent-encoding is malformed.
bool FormField(std::string_view body, std::string_view name, std::string* out);

// The value of cookie `name` in a Cookie header ("a=1; b=2"), or "" if
// absent. A view into `header`.
std::string_view CookieValue(std::string_view header, std::string_view name);

}  // namespace folio::auth
