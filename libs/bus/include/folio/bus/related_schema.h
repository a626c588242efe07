// The related-notes contract: stream "related", subject RelatedSubject(site)
// = "related.<site>", data EncodeRelatedUpdate(RelatedUpdate) (JSON, schema
// 1). Search publishes the related notes it computes; ingest consumes them
// (durable pull consumer) and re-renders the pages that show them. Several
// search replicas publish the same lists: each message carries a
// Nats-Msg-Id that is equal for equal lists computed from the same note
// events, so the stream's duplicate window keeps one copy (the publisher's
// rule, README.md). Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "folio/bus/site_name.h"
#include "folio/core/status.h"

namespace folio::bus {

inline constexpr std::string_view kRelatedStream = "related";
// The stream's limits (issue 24), discard "old": ingest applies a list
// within seconds, so a week (age) and 256 MiB (size) only drop lists long
// applied, unless ingest's consumer was stopped for a week (alerted long
// before). Given to a stream created without them; an operator's are kept.
inline constexpr int64_t kRelatedMaxBytes = int64_t{256} << 20;      // 256 MiB
inline constexpr int64_t kRelatedMaxAgeSeconds = 7 * 24 * 3600;      // 7 days
inline constexpr std::string_view kRelatedSubjectPrefix = "related.";  // + site
inline constexpr int kRelatedUpdateSchema = 1;
inline constexpr int kMaxRelatedK = 50;  // largest related list search publishes (and a related query asks for)
inline constexpr size_t kMaxRelatedMessageBytes = 512 * 1024;

// "related.<site>"
std::string RelatedSubject(std::string_view site);

// Related notes of some notes of one site, as search computed them. A list
// replaces the note's previous list; an empty list clears it. Search splits
// large updates so one message stays under kMaxRelatedMessageBytes.
struct RelatedEntry {
  std::string path;       // vault path of the related note
  double score = 0;
};
struct RelatedList {
  std::string path;       // vault path of the note whose list this is
  std::vector<RelatedEntry> related;  // best first, at most kMaxRelatedK
};
struct RelatedUpdate {
  std::string site;
  std::vector<RelatedList> lists;
};

// {"schema":1,"site":"docs","lists":[{"path":"a.md","related":[{"path":"b.md","score":0.5}]}]}
// A score that is not finite is written as 0.
std::string EncodeRelatedUpdate(const RelatedUpdate& u);
// kInvalidArgument naming the field: malformed JSON, unknown schema, invalid
// site, a missing key at any level, an invalid vault path, a list of more
// than kMaxRelatedK notes, a score that is not a finite number.
Status DecodeRelatedUpdate(std::string_view json, RelatedUpdate* out);
// Splits u into updates whose encodings are each at most max_bytes (a single
// list larger than that goes alone). Order of lists is kept.
std::vector<RelatedUpdate> SplitRelatedUpdate(const RelatedUpdate& u, size_t max_bytes = kMaxRelatedMessageBytes);

}  // namespace folio::bus
