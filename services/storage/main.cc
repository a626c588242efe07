// folio-storage: content-addressed blobs (note attachments) and named
// objects (backups) in an append-only, checksummed block journal on local
// disk (libs/journal), over HTTP (api.h). Wiring only. Every route but the
// probes and /metrics needs the write or the read token (auth.h, tokens.h).
//
// Threads: the loop serves HTTP; an I/O pool runs the journal's disk work
// (appends, group-committed fdatasyncs, reads); the journal's own thread
// checkpoints its index and compacts segments.
#include <csignal>

#include <filesystem>
#include <memory>

#include "api.h"
#include "config.h"
#include "folio/core/config.h"
#include "folio/core/disk_space.h"
#include "folio/core/log.h"
#include "folio/core/memory.h"
#include "folio/core/service.h"
#include "folio/core/thread_pool.h"
#include "folio/http/server.h"
#include "folio/journal/journal.h"
#include "folio/metrics/disk.h"
#include "folio/metrics/metrics.h"
#include "replication.h"
#include "tokens.h"

using namespace folio;

namespace {

// Both roles' token hashes: given by flags (or env, or files), else the
// ones generated on the first start (tokens.h).
Result<storage::TokenHashes> LoadTokens(const storage::TokenConfig& tc) {
  std::vector<std::string> created;
  auto hashes = storage::LoadTokens(tc, &created);
  if (hashes.ok() && !created.empty()) {
    std::string files;
    for (const std::string& f : created) files += (files.empty() ? "" : " ") + f;
    log::Info("generated storage tokens: hand them out (write: ingest's --storage-token, read: edges'), then the"
              " files may be deleted; only their hashes are kept",
              {{"files", files}, {"hashes", tc.data_dir + "/" + storage::kTokenHashesFile}});
  }
  return hashes;
}

}  // namespace

int main(int argc, char** argv) {
  // An upload's body buffer (up to a MiB per request) is reused by the next
  // upload instead of being mapped and faulted in afresh each time.
  KeepLargeBuffersResident(size_t{4} << 20);
  Flags flags("folio-storage", "Stores attachments and backups in checksummed block journals.");
  storage::AddStorageFlags(&flags);
  ServiceBasics basics;
  if (int rc = ParseServiceFlags(&flags, argc, argv, &basics); rc >= 0) return rc;
  auto config = storage::ReadStorageConfig(flags, basics);
  if (!config.ok()) return FailStartup(config.status());
  const std::string& data_dir = config->data_dir;

  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) return FailStartup(Status::Unavailable("cannot create --data " + data_dir + ": " + ec.message()));
  auto tokens = LoadTokens(config->tokens);
  if (!tokens.ok()) return FailStartup(tokens.status());
  auto journal = journal::Journal::Open(data_dir, config->journal);
  if (!journal.ok()) return FailStartup(journal.status());
  {
    journal::Stats st = (*journal)->stats();
    log::Info("journal opened", {{"blobs", std::to_string(st.live_blobs)},
                                 {"segments", std::to_string(st.segments)},
                                 {"checkpoint", st.checkpoint_loaded ? "yes" : "no"},
                                 {"truncated_bytes", std::to_string(st.truncated_bytes)},
                                 {"corrupt_records", std::to_string(st.corrupt_records)}});
  }

  // Upload bodies held at once (issue 22). Declared before everything that
  // may hold a connection (the I/O pool's tasks hold Responders).
  http::BodyBudget body_budget(config->max_inflight_body_bytes);
  metrics::Registry registry;
  metrics::ExportBodyBudget(&registry, &body_budget);
  metrics::DiskGauges data_disk(&registry, data_dir);  // free space before writes fail (issue 24)
  auto& g_blobs = registry.NewGauge("folio_storage_blobs", "Live blobs and objects");
  auto& g_live = registry.NewGauge("folio_storage_live_bytes", "Bytes of live records");
  auto& g_disk = registry.NewGauge("folio_storage_disk_bytes", "Bytes of segment files");
  auto& g_fsyncs = registry.NewGauge("folio_storage_fsyncs", "fdatasync/fsync calls since start");
  auto& g_commits = registry.NewGauge("folio_storage_group_commits", "Group commits (each one fdatasync) since start");
  auto& g_commit_sync = registry.NewGauge("folio_storage_group_commit_sync_seconds",
                                          "Seconds the group commits spent in fdatasync since start");
  auto& g_wa = registry.NewGauge("folio_storage_write_amplification", "Bytes written to disk / blob bytes since start");
  auto& g_corrupt = registry.NewGauge("folio_storage_corrupt_records", "Records that failed their checksum since start");
  // The journal's disk: marked full by a write that failed for lack of
  // space, cleared by the next successful write or once space returns.
  // Its gauges read the same state /readyz reads (NotReadyReason), at each
  // scrape: they never disagree with it (they lagged up to a second).
  DiskFull disk(data_dir, "data");
  registry.AddScrapedGauge("folio_storage_disk_full",
                           "1 while the disk is full: writes are refused (507) until space returns",
                           [&disk] { return disk.full() ? 1.0 : 0.0; });
  registry.AddScrapedGauge("folio_storage_write_failed",
                           "1 once a write or fsync failed: writes are refused until a restart",
                           [j = journal->get()] { return j->WriteError().ok() ? 0.0 : 1.0; });
  auto refresh = [&] {
    journal::Stats st = (*journal)->stats();
    g_blobs.Set(static_cast<double>(st.live_blobs));
    g_live.Set(static_cast<double>(st.live_bytes));
    g_disk.Set(static_cast<double>(st.disk_bytes));
    g_fsyncs.Set(static_cast<double>(st.fsyncs));
    g_commits.Set(static_cast<double>(st.batches));
    g_commit_sync.Set(static_cast<double>(st.batch_sync_us) / 1e6);
    g_wa.Set(st.write_amplification());
    g_corrupt.Set(static_cast<double>(st.corrupt_records));
  };
  refresh();

  http::Loop loop;
  // Replicated: destroyed after the I/O pool drained (its tasks use it), before the loop.
  std::unique_ptr<storage::Replica> replica;
  // Declared after the loop: destroyed (drained) before it, since its tasks post to the loop.
  ThreadPool io(config->io_threads);
  if (config->replicated) {
    storage::ReplicaOptions ro;
    ro.nats_url = basics.nats_url;
    ro.replicas = basics.nats_replicas;
    ro.nats_user = basics.nats_user;
    ro.nats_password = basics.nats_password;
    ro.nats_ca = basics.nats_ca;
    auto r = storage::Replica::Start(ro, &loop, &io, journal->get(), &registry);
    if (!r.ok()) return FailStartup(r.status());
    replica = std::move(*r);
    log::Info("replicating on NATS JetStream", {{"nats", basics.nats_url},
                                                {"replicas", std::to_string(basics.nats_replicas)}});
  }
  http::Router router;
  storage::ApiContext ctx{&loop, &io, journal->get(), &registry, {}, &disk, *tokens, replica.get()};
  ctx.options.max_blob_bytes = config->journal.max_blob_bytes;
  metrics::OpsEndpoints ops(&loop, &registry, [&ctx] { return storage::NotReadyReason(ctx); }, basics);
  ops.MountPublic(&router);
  storage::MountApi(&router, &ctx);
  loop.Every(1000, [&] {
    if (disk.full()) io.Submit([&disk] { disk.Recheck(); });  // statvfs, off the loop
    refresh();
  });

  http::ServerOptions sopts;
  // Only the PUT routes take a body, and they stream it behind the token
  // check: any other body is refused (413) before a byte of it is read.
  sopts.max_body_bytes = 0;
  sopts.body_budget = &body_budget;
  sopts.stream_body_budget_bytes = storage::UploadHoldBytes(ctx.options);
  sopts.stream_pull_bytes = 256 * 1024;
  sopts.stream_watermark_bytes = 1024 * 1024;
  http::Server server(&loop, &router, sopts);
  if (Status ls = server.ListenActivatedOrBind(basics.host, basics.port); !ls.ok()) return FailStartup(ls);
  if (Status s = ops.Listen(); !s.ok()) return FailStartup(s);
  log::Info("folio-storage listening", {{"addr", basics.host + ":" + std::to_string(server.port())},
                                         {"data", data_dir}});
  auto shutdown = [&] {
    log::Info("shutting down");
    ops.Drain(&server, [&loop] { loop.Stop(); });
  };
  loop.OnSignal(SIGTERM, shutdown);
  loop.OnSignal(SIGINT, shutdown);
  loop.Run();
  log::Info("folio-storage stopped");
  return 0;
}
