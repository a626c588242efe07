// Test helper: the pages a site has on the bus's page feed (KV bucket
// "pages": packs, snapshot chunks and per-page keys, bus/page_pack.h), read
// the way a fresh edge reads them: every current entry in order, ops
// applied. For tests that check what ingest published.
// Separate target (folio_testing_feed): it links folio_bus, which
// folio_testing does not. Blocking; any thread.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "folio/bus/bus.h"
#include "folio/core/status.h"

namespace folio::testing {

struct FeedPages {
  std::map<std::string, std::string> records;  // url -> encoded PageRecord
  std::vector<std::string> keys;               // the site's keys in the bucket, in stream order
  int snapshots = 0;                           // snapshot chunks among them
};

// kDeadlineExceeded if the replay does not end within timeout_ms.
Result<FeedPages> ReadFeed(bus::Bus* bus, std::string_view site, int64_t timeout_ms = 10'000);

}  // namespace folio::testing
