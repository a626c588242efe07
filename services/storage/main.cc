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

// --data, created if missing. kUnavailable if it cannot be.
Status CreateDataDir(const std::string& data_dir) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) return Status::Unavailable("cannot create --data " + data_dir + ": " + ec.message());
  return Status::Ok();
}

// Opens the journal in data_dir and logs what it found.
Result<std::unique_ptr<journal::Journal>> OpenJournal(const storage::StorageConfig& config) {
  auto journal = journal::Journal::Open(config.data_dir, config.journal);
  if (!journal.ok()) return journal.status();
  journal::Stats st = (*journal)->stats();
  log::Info("journal opened", {{"blobs", std::to_string(st.live_blobs)},
                               {"segments", std::to_string(st.segments)},
                               {"checkpoint", st.checkpoint_loaded ? "yes" : "no"},
                               {"truncated_bytes", std::to_string(st.truncated_bytes)},
                               {"corrupt_records", std::to_string(st.corrupt_records)}});
  return journal;
}

// The journal's counters as gauges, set by Refresh (loop thread, once a second).
class JournalGauges {
 public:
  JournalGauges(metrics::Registry* registry, journal::Journal* journal)
      : journal_(journal),
        blobs_(registry->NewGauge("folio_storage_blobs", "Live blobs and objects")),
        live_(registry->NewGauge("folio_storage_live_bytes", "Bytes of live records")),
        disk_(registry->NewGauge("folio_storage_disk_bytes", "Bytes of segment files")),
        fsyncs_(registry->NewGauge("folio_storage_fsyncs", "fdatasync/fsync calls since start")),
        commits_(registry->NewGauge("folio_storage_group_commits", "Group commits (each one fdatasync) since start")),
        commit_sync_(registry->NewGauge("folio_storage_group_commit_sync_seconds",
                                        "Seconds the group commits spent in fdatasync since start")),
        wa_(registry->NewGauge("folio_storage_write_amplification", "Bytes written to disk / blob bytes since start")),
        corrupt_(registry->NewGauge("folio_storage_corrupt_records", "Records that failed their checksum since start")) {}

  void Refresh() {
    journal::Stats st = journal_->stats();
    blobs_.Set(static_cast<double>(st.live_blobs));
    live_.Set(static_cast<double>(st.live_bytes));
    disk_.Set(static_cast<double>(st.disk_bytes));
    fsyncs_.Set(static_cast<double>(st.fsyncs));
    commits_.Set(static_cast<double>(st.batches));
    commit_sync_.Set(static_cast<double>(st.batch_sync_us) / 1e6);
    wa_.Set(st.write_amplification());
    corrupt_.Set(static_cast<double>(st.corrupt_records));
  }

 private:
  journal::Journal* journal_;
  metrics::Gauge &blobs_, &live_, &disk_, &fsyncs_, &commits_, &commit_sync_, &wa_, &corrupt_;
};

// The gauges of the journal's disk. They read the same state /readyz reads
// (NotReadyReason), at each scrape: they never disagree with it (they
// lagged up to a second).
void AddDiskStateGauges(metrics::Registry* registry, DiskFull* disk, journal::Journal* journal) {
  registry->AddScrapedGauge("folio_storage_disk_full",
                            "1 while the disk is full: writes are refused (507) until space returns",
                            [disk] { return disk->full() ? 1.0 : 0.0; });
  registry->AddScrapedGauge("folio_storage_write_failed",
                            "1 once a write or fsync failed: writes are refused until a restart",
                            [journal] { return journal->WriteError().ok() ? 0.0 : 1.0; });
}

// --replicated: the JetStream replica over the journal (replication.h).
Result<std::unique_ptr<storage::Replica>> StartReplica(const ServiceBasics& basics, http::Loop* loop, ThreadPool* io,
                                                       journal::Journal* journal, metrics::Registry* registry) {
  storage::ReplicaOptions ro;
  ro.nats_url = basics.nats_url;
  ro.replicas = basics.nats_replicas;
  ro.nats_user = basics.nats_user;
  ro.nats_password = basics.nats_password;
  ro.nats_ca = basics.nats_ca;
  auto r = storage::Replica::Start(ro, loop, io, journal, registry);
  if (!r.ok()) return r.status();
  log::Info("replicating on NATS JetStream", {{"nats", basics.nats_url},
                                              {"replicas", std::to_string(basics.nats_replicas)}});
  return r;
}

// Only the PUT routes take a body, and they stream it behind the token
// check: any other body is refused (413) before a byte of it is read.
http::ServerOptions ServerOptionsFor(const storage::ApiContext& ctx, http::BodyBudget* body_budget) {
  http::ServerOptions sopts;
  sopts.max_body_bytes = 0;
  sopts.body_budget = body_budget;
  sopts.stream_body_budget_bytes = storage::UploadHoldBytes(ctx.options);
  sopts.stream_pull_bytes = 256 * 1024;
  sopts.stream_watermark_bytes = 1024 * 1024;
  return sopts;
}

// Listens, serves until SIGTERM or SIGINT, drains. The exit code.
int ListenAndRun(http::Loop* loop, http::Server* server, metrics::OpsEndpoints* ops, const ServiceBasics& basics,
                 const std::string& data_dir) {
  if (Status ls = server->ListenActivatedOrBind(basics.host, basics.port); !ls.ok()) return FailStartup(ls);
  if (Status s = ops->Listen(); !s.ok()) return FailStartup(s);
  log::Info("folio-storage listening", {{"addr", basics.host + ":" + std::to_string(server->port())},
                                         {"data", data_dir}});
  auto shutdown = [loop, server, ops] {
    log::Info("shutting down");
    ops->Drain(server, [loop] { loop->Stop(); });
  };
  loop->OnSignal(SIGTERM, shutdown);
  loop->OnSignal(SIGINT, shutdown);
  loop->Run();
  log::Info("folio-storage stopped");
  return 0;
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
  if (Status s = CreateDataDir(data_dir); !s.ok()) return FailStartup(s);
  auto tokens = LoadTokens(config->tokens);
  if (!tokens.ok()) return FailStartup(tokens.status());
  auto journal = OpenJournal(*config);
  if (!journal.ok()) return FailStartup(journal.status());

  // Upload bodies held at once (issue 22). Declared before everything that
  // may hold a connection (the I/O pool's tasks hold Responders).
  http::BodyBudget body_budget(config->max_inflight_body_bytes);
  metrics::Registry registry;
  metrics::ExportBodyBudget(&registry, &body_budget);
  metrics::DiskGauges data_disk(&registry, data_dir);  // free space before writes fail (issue 24)
  JournalGauges gauges(&registry, journal->get());
  // The journal's disk: marked full by a write that failed for lack of
  // space, cleared by the next successful write or once space returns.
  DiskFull disk(data_dir, "data");
  AddDiskStateGauges(&registry, &disk, journal->get());
  gauges.Refresh();

  http::Loop loop;
  // Replicated: destroyed after the I/O pool drained (its tasks use it), before the loop.
  std::unique_ptr<storage::Replica> replica;
  // Declared after the loop: destroyed (drained) before it, since its tasks post to the loop.
  ThreadPool io(config->io_threads);
  if (config->replicated) {
    auto r = StartReplica(basics, &loop, &io, journal->get(), &registry);
    if (!r.ok()) return FailStartup(r.status());
    replica = std::move(*r);
  }
  http::Router router;
  storage::ApiContext ctx{&loop, &io, journal->get(), &registry, {}, &disk, *tokens, replica.get()};
  ctx.options.max_blob_bytes = config->journal.max_blob_bytes;
  metrics::OpsEndpoints ops(&loop, &registry, [&ctx] { return storage::NotReadyReason(ctx); }, basics);
  ops.MountPublic(&router);
  storage::MountApi(&router, &ctx);
  loop.Every(1000, [&] {
    if (disk.full()) io.Submit([&disk] { disk.Recheck(); });  // statvfs, off the loop
    gauges.Refresh();
  });
  http::Server server(&loop, &router, ServerOptionsFor(ctx, &body_budget));
  return ListenAndRun(&loop, &server, &ops, basics, data_dir);
}
