#include "writer_chores.h"

#include <algorithm>
#include <cstdint>

#include "folio/core/disk_space.h"
#include "folio/core/log.h"
#include "folio/core/time.h"

namespace folio::ingest {

std::unique_ptr<BlobGc> ScheduleBlobGc(const IngestConfig& config, Store* store, const BlobsInFlight* in_flight,
                                       metrics::Registry* registry,
                                       http::Loop* writer_loop) {
  if (config.site.storage.url.empty() || config.blob_gc_every_ms <= 0) return nullptr;
  auto blob_gc = std::make_unique<BlobGc>(config.site.storage, config.blob_gc_grace_ms, store, in_flight, registry);
  writer_loop->Post([writer_loop, gc = blob_gc.get(), every = config.blob_gc_every_ms] {
    writer_loop->Every(static_cast<uint64_t>(every), [gc] {
      if (auto pass = gc->RunOnce(NowUnixMs()); !pass.ok()) {
        log::Warn("blob collection failed; retried next time", {{"error", pass.status().message()}});
      }
    });
  });
  return blob_gc;
}

void ScheduleWriterRound(http::Loop* writer_loop, Store* store, Sites* sites, BusLink* link,
                         metrics::Registry* registry, int64_t stage_ttl_ms) {
  // Read at each scrape from the state /readyz reads: the two never disagree.
  DiskFull* disk = &store->disk();
  registry->AddScrapedGauge("folio_ingest_disk_full",
                            "1 while the database's disk is full: pushes fail (507) until space returns",
                            [disk] { return disk->full() ? 1.0 : 0.0; });
  // The outbox's age, measured after each round's publish: how long the
  // oldest committed message has waited for NATS (0 when all went out).
  auto& g_outbox_oldest = registry->NewGauge(
      "folio_ingest_outbox_oldest_seconds",
      "Age of the oldest committed message not yet published to NATS; 0 when the outbox is empty");
  const int64_t started_ms = NowUnixMs();
  auto measure_outbox = [&g_outbox_oldest, started_ms, store] {
    auto oldest = store->OutboxOldestMs();
    if (!oldest.ok()) return;  // the disk's trouble is reported elsewhere; keep the last value
    int64_t since = *oldest == 0 ? started_ms : *oldest;  // a row from before created_ms: at least this old
    g_outbox_oldest.Set(*oldest < 0 ? 0.0 : static_cast<double>(std::max<int64_t>(0, NowUnixMs() - since)) / 1000.0);
  };
  auto& g_staged = registry->NewGauge("folio_ingest_staged_bytes",
                                      "Bytes of staged batches (multi-batch pushes) not committed yet, all sites");
  // Stages nobody committed: dropped after --stage-ttl even when no other
  // staged upload or commit comes along (those drop them too).
  auto sweep_stages = [&g_staged, store, stage_ttl_ms] {
    if (auto dropped = store->DropStaleStages(NowUnixMs() - stage_ttl_ms); dropped.ok() && *dropped > 0) {
      log::Info("stale stages dropped", {{"batches", std::to_string(*dropped)}});
    }
    if (auto bytes = store->StagedBytes(); bytes.ok()) g_staged.Set(static_cast<double>(*bytes));
  };
  writer_loop->Post([writer_loop, store, sites, link, measure_outbox, sweep_stages] {
    writer_loop->Every(1000, [store, sites, link, measure_outbox, sweep_stages] {
      store->disk().Recheck();
      sites->ReloadIfChanged();  // `folio-ingest site add|remove` ran meanwhile
      link->Round();
      measure_outbox();
      sweep_stages();
      // No checkpoint here: its fdatasyncs stalled the pushes queued behind
      // this round; WalCheckpointer does it beside the writer.
    });
  });
}

}  // namespace folio::ingest
