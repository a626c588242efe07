// The push request as folio-ingest uses it: the types of the ingest API's
// contract (libs/ingest_api, folio/ingest_api/push.h: the body, its one
// decoder DecodePushRequest, and limits.h), named in this namespace for the
// writer, the stage merge and the blob upload. Nothing is defined here.
#pragma once

#include "folio/ingest_api/limits.h"
#include "folio/ingest_api/push.h"

namespace folio::ingest {

using ingest_api::kPushBodyPadding;
using ingest_api::PushAttachment;
using ingest_api::PushError;
using ingest_api::PushLimits;
using ingest_api::PushNote;
using ingest_api::PushRequest;
using ingest_api::PushSettings;

}  // namespace folio::ingest
