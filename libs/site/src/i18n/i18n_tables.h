// The shipped string tables, one per language (i18n/<code>.cc), that
// i18n.cc serves through StringsFor. Internal to libs/site.
#pragma once

#include "folio/site/i18n.h"

namespace folio::site::i18n {

extern const Strings kEn, kDe, kFr, kEs, kRu, kJa, kZh, kPt;

}  // namespace folio::site::i18n
