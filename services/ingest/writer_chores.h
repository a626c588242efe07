// The periodic work folio-ingest's writer loop does besides pushes:
// blob collection (--blob-gc-every) and a one-second round (the disk-full
// recheck, reloading the sites table, connecting to NATS or publishing the
// outbox, the outbox's age, dropping stale staged imports). The log's
// checkpoint is not among them: wal_checkpointer.h.
//
// Ownership: everything is borrowed from main and outlives the writer
// loop's run; the returned BlobGc belongs to the caller, likewise.
// Threads: call on the main thread before the writer loop runs; the work
// runs on the writer loop (a collection pass leaves alone the blobs of
// pushes uploaded and not committed yet: BlobsInFlight).
#pragma once

#include <memory>

#include "folio/http/loop.h"
#include "folio/metrics/metrics.h"
#include "blob_gc.h"
#include "bus_link.h"
#include "config.h"
#include "sites.h"
#include "store.h"

namespace folio::ingest {

// A BlobGc run every config.blob_gc_every_ms on `writer_loop` (a failed
// pass is logged and retried next time); nullptr when there is no
// --storage or the period is 0.
std::unique_ptr<BlobGc> ScheduleBlobGc(const IngestConfig& config, Store* store, const BlobsInFlight* in_flight,
                                       metrics::Registry* registry,
                                       http::Loop* writer_loop);

// Registers folio_ingest_disk_full and folio_ingest_outbox_oldest_seconds
// and runs the one-second round on `writer_loop`: a full disk is rechecked
// (statvfs: pushes fail with 507 and /readyz says so until a commit
// succeeds again or this finds space), the sites table is reloaded if
// `folio-ingest site add|remove` changed it, `link` connects or publishes
// the outbox, and the outbox's age is measured; staged imports unused for
// stage_ttl_ms are dropped and folio_ingest_staged_bytes is measured.
void ScheduleWriterRound(http::Loop* writer_loop, Store* store, Sites* sites, BusLink* link,
                         metrics::Registry* registry, int64_t stage_ttl_ms);

}  // namespace folio::ingest
