// Internal UTF-8 helpers for libs/markdown. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "folio/core/utf8.h"

namespace folio::markdown {

// The codec itself is core's (folio/core/utf8.h); markdown adds character classes.
using folio::AppendUtf8;
using folio::DecodeUtf8;
using folio::kBadCodePoint;
using folio::LowerCodePoint;
using folio::Utf8Lower;

// A letter or digit of any script (ASCII letters/digits, and every non-ASCII
// code point outside the separator ranges of README "The slug rule").
// Defined in slug.cc.
bool IsWordCodePoint(uint32_t cp);

}  // namespace folio::markdown
