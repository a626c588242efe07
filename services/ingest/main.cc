// folio-ingest: accepts pushes, renders pages, commits them to SQLite and
// publishes them to NATS JetStream. Wiring only; the work is in Sites,
// SiteWriter, Store and libs/.
//
//   folio-ingest [flags]              serve (the --site site plus every site
//                                     of the sites table)
//   folio-ingest site add|list|remove administer sites (see site_command.h)
//   folio-ingest backup|restore       backups in folio-storage (see backup.h)
//
// Threads: the main loop serves HTTP; the writer loop (its own thread) owns
// the Store, Sites and their SiteWriters and runs every push, manifest,
// related-list update and publish in order; a ThreadPool renders in
// parallel for the writer; the RelatedConsumer's thread fetches search's
// related lists and hands them to the writer loop.
//
// Wiring only: the NATS side is in bus_link.h, the writer loop's periodic
// work in writer_chores.h, the lease that makes one process of a deployment
// the writer in leader.h (until it leads, a Standby answers the port and
// --data stays closed).

#include <csignal>

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "folio/bus/connect.h"
#include "folio/core/config.h"
#include "folio/core/crash_marks.h"
#include "folio/core/files.h"
#include "folio/core/log.h"
#include "folio/core/memory.h"
#include "folio/core/secret.h"
#include "folio/core/service.h"
#include "folio/core/thread_pool.h"
#include "folio/http/server.h"
#include "folio/metrics/disk.h"
#include "folio/metrics/metrics.h"
#include "backup.h"
#include "blob_gc.h"
#include "bundled_mermaid.h"
#include "bus_link.h"
#include "config.h"
#include "crashed_notes.h"
#include "handlers.h"
#include "jetstream_gauges.h"
#include "leader.h"
#include "site_command.h"
#include "sites.h"
#include "storage_probe.h"
#include "store.h"
#include "wal_checkpointer.h"
#include "writer_chores.h"

using namespace folio;

namespace {

// `folio-ingest site|backup|restore ...`: the command's exit status; -1 when
// there is no command (serve).
int RunCommand(const Flags& flags) {
  if (flags.positional().empty()) return -1;
  if (flags.positional()[0] == "site") return ingest::RunSiteCommand(flags);
  if (flags.positional()[0] == "backup") return ingest::RunBackupCommand(flags);
  if (flags.positional()[0] == "restore") return ingest::RunRestoreCommand(flags);
  fprintf(stderr, "folio-ingest: unknown command \"%s\" (commands: site, backup, restore; none to serve)\n",
          flags.positional()[0].c_str());
  return 2;
}

// The API token: --token, else <data>/token, else a new random one saved there.
Result<std::string> LoadToken(const std::string& flag, const std::string& data_dir) {
  if (!flag.empty()) return flag;
  bool created = false;
  auto tok = ReadOrCreateSecretFile(data_dir + "/token", 24, &created);
  if (tok.ok() && created) log::Info("generated an API token", {{"file", data_dir + "/token"}});
  return tok;
}

// --backup-every: a BackupSchedule into *out, or nothing when 0.
Status StartBackups(const ingest::IngestConfig& c, ingest::BackupMetrics* m,
                    std::unique_ptr<ingest::BackupSchedule>* out) {
  if (c.backup_every_ms <= 0) return Status::Ok();
  auto key = ingest::LoadBackupKey(c.data_dir, c.backup_key_file, true);
  if (!key.ok()) return key.status();
  *out = std::make_unique<ingest::BackupSchedule>(ingest::BackupTarget{c.data_dir, c.site.storage, std::move(*key)},
                                                  c.backup_keep, c.backup_every_ms, m);
  (*out)->Start();
  return Status::Ok();
}

// Until this process holds the lease, a Standby answers the port. Returns
// -1 once leading (or with no lease), else the exit status (a signal came).
int WaitForLease(const ingest::IngestConfig& c, ingest::Leadership* leader, ingest::Standby* standby) {
  if (leader == nullptr) return -1;
  // The usual case, a free lease (or our own): no standby at all, so the
  // port never answers not_leader while this process is about to lead.
  if (leader->WaitUntilLeading(leader->renew_ms() + 2'000)) return -1;
  if (Status s = standby->Start(c.basics); !s.ok()) {
    log::Warn("standby cannot bind the port (a leader on this host has it?); waiting without serving",
              {{"error", s.message()}});
  }
  if (leader->WaitUntilLeading()) return -1;
  standby->Stop();
  log::Info("folio-ingest stopped before leading");
  return 0;
}

// --restore-from-storage on an empty --data, once leading: the newest
// backup that verifies, or nothing when storage has none (backup.h).
Status RestoreIfAsked(const ingest::IngestConfig& c) {
  if (!c.restore_from_storage) return Status::Ok();
  std::string restored;
  Status s = ingest::RestoreIfEmpty(c.data_dir, c.backup_key_file, c.site.storage, &restored);
  if (!s.ok()) return Status(s.code(), "--restore-from-storage: " + s.message());
  if (!restored.empty()) log::Info("restored from storage", {{"backup", restored}, {"data", c.data_dir}});
  return Status::Ok();
}

// The command line: the config to serve with, or nothing and *exit_code
// (--help, a site|backup|restore command, or a bad flag).
std::optional<ingest::IngestConfig> ParseCommandLine(int argc, char** argv, int* exit_code) {
  Flags flags("folio-ingest", "Accepts pushes of markdown notes, renders and publishes pages.");
  ingest::AddIngestFlags(&flags);
  ServiceBasics basics;
  if (int rc = ParseServiceFlags(&flags, argc, argv, &basics); rc >= 0) *exit_code = rc;
  else if (int rc = RunCommand(flags); rc >= 0) *exit_code = rc;
  if (*exit_code >= 0) return std::nullopt;
  auto config = ingest::ReadIngestConfig(flags, basics);
  if (!config.ok()) {
    *exit_code = FailStartup(config.status());
    return std::nullopt;
  }
  return std::move(*config);
}

// --lease-ttl > 0: the lease that makes this process the writer (leader.h);
// null without one.
Result<std::unique_ptr<ingest::Leadership>> StartLeadership(const ingest::IngestConfig& c) {
  if (c.lease.ttl_ms <= 0) return std::unique_ptr<ingest::Leadership>();
  return ingest::Leadership::Start(c.basics, c.lease);
}

// What serving holds of --data, opened in this order (and closed in the
// reverse) by OpenDataDir, once leading and after RestoreIfAsked: the
// store, the data lock, the API token, the notes that crashed the last run.
struct DataDir {
  std::unique_ptr<ingest::Store> store;
  std::unique_ptr<FileLock> lock;
  std::string token;
  std::optional<ingest::CrashedNotes> crashed;
};

Status OpenDataDir(const ingest::IngestConfig& c, DataDir* d) {
  if (Status s = RestoreIfAsked(c); !s.ok()) return s;
  auto store = ingest::Store::Open(c.data_dir);
  if (!store.ok()) return store.status();
  d->store = std::move(*store);
  auto lock = LockServiceData(c.data_dir, "ingest.lock", "folio-ingest");
  if (!lock.ok()) return lock.status();
  d->lock = std::move(*lock);
  auto token = LoadToken(c.token, c.data_dir);
  if (!token.ok()) return token.status();
  d->token = std::move(*token);
  // A note whose render crashed the last run is refused from now on; this
  // run's renders are marked from here (crashed_notes.h, issue 22).
  auto crashed_mark = CrashMarks::TakeCrashed(c.data_dir + "/crash_marks");
  if (!crashed_mark.ok()) return crashed_mark.status();
  auto crashed = ingest::CrashedNotes::Load(d->store.get(), *crashed_mark, ingest::IngestBuild());
  if (!crashed.ok()) return crashed.status();
  d->crashed.emplace(std::move(*crashed));
  return CrashMarks::Install(c.data_dir + "/crash_marks");
}

void ExportCrashedNotes(metrics::Registry* registry, const ingest::CrashedNotes& crashed) {
  registry->NewGauge("folio_ingest_crashed_notes",
                     "Notes whose render crashed this build of ingest; pushes of their text get 422 until they change")
      .Set(static_cast<double>(crashed.size()));
}

// folio_ingest_storage_up, when there is a --storage.
void ExportStorageUp(metrics::Registry* registry, const ingest::IngestConfig& c, ingest::StorageProbe* probe) {
  if (c.site.storage.url.empty()) return;
  registry->AddScrapedGauge("folio_ingest_storage_up",
                            "1 while --storage answers (a listing, with ingest's token); 0: pushes with attachments"
                            " fail",
                            [probe] { return probe->up() ? 1.0 : 0.0; });
}

// /readyz: not ready (503) for what fails every push: not leading, a full
// disk, NATS away.
metrics::ReadinessCheck Readiness(const ingest::Leadership* leader, const DiskFull* disk, const ingest::BusLink* link) {
  return [leader, disk, link]() -> std::string {
    if (leader && !leader->leading()) return leader->NotLeaderReason();
    if (disk->full()) return "disk full: pushes fail until space returns; pages are still served";
    return link->connected() ? "" : "not connected to NATS at " + link->url();
  };
}

// The writer loop's first task (connect to NATS) and its periodic round.
void ScheduleWriter(http::Loop* writer_loop, const ingest::IngestConfig& c, ingest::Store* store, ingest::Sites* sites,
                    ingest::BusLink* link, metrics::Registry* registry) {
  writer_loop->Post([link] { link->TryConnect(); });
  ingest::ScheduleWriterRound(writer_loop, store, sites, link, registry, c.stage.ttl_ms);
}

http::ServerOptions ApiServerOptions(const ingest::IngestConfig& c, http::BodyBudget* body_budget) {
  http::ServerOptions sopts;
  sopts.max_body_bytes = c.max_body;
  sopts.body_budget = body_budget;
  return sopts;
}

// The API port, then the ops port (--admin-listen).
Status Listen(http::Server* server, metrics::OpsEndpoints* ops, const ServiceBasics& basics) {
  Status s = server->ListenActivatedOrBind(basics.host, basics.port);
  if (s.ok()) s = ops->Listen();
  return s;
}

void LogListening(const ingest::IngestConfig& c, const std::string& host, int port) {
  log::Info("folio-ingest listening", {{"addr", host + ":" + std::to_string(port)},
                                        {"site", c.site.site}, {"data", c.data_dir}});
  if (c.site.base_url.empty()) {
    log::Warn("no --base-url: RSS, the sitemap and OpenGraph tags carry relative URLs, which feed readers and link"
              " previews cannot follow; set --base-url https://your.site",
              {{"site", c.site.site}});
  }
}

// Runs the HTTP loop until SIGTERM or SIGINT, or until another process takes
// the lease over: then *taken_over is set, and the writer stops without
// publishing. Either way the server drains and the writer loop is told to
// stop. Everything is captured by pointer: the writer loop may run the last
// task after this returns (*taken_over must live until it is joined).
void ServeUntilStopped(http::Loop* loop, http::Loop* writer_loop, http::Server* server, metrics::OpsEndpoints* ops,
                       ingest::Sites* sites, ingest::Leadership* leader, std::atomic<bool>* taken_over) {
  auto shutdown = [=] {
    log::Info("shutting down");
    ops->Drain(server, [=] {
      writer_loop->Post([=] {
        if (!taken_over->load()) sites->PublishPending();
        writer_loop->Stop();
      });
      loop->Stop();
    });
  };
  loop->OnSignal(SIGTERM, shutdown);
  loop->OnSignal(SIGINT, shutdown);
  if (leader != nullptr) {
    leader->OnTakenOver([=] {
      loop->Post([=] {
        if (taken_over->exchange(true)) return;
        log::Error("lease taken over by another ingest: stopping, writes refused",
                   {{"holder", leader->holder()}, {"instance", leader->instance()}});
        shutdown();
      });
    });
  }
  loop->Run();
  if (leader != nullptr) leader->OnTakenOver(nullptr);  // it posts to `loop`, which goes first
}

// Once the HTTP loop stopped (the writer loop was told to stop): backups,
// then the related consumer (before the bus goes; a batch the writer has not
// run is redelivered), the writer thread, the bus.
void StopWork(std::unique_ptr<ingest::BackupSchedule>* backups, ingest::BusLink* link, std::thread* writer_thread) {
  backups->reset();
  link->StopRelated();
  writer_thread->join();
  link->Close();
  log::Info("folio-ingest stopped");
}

}  // namespace

int main(int argc, char** argv) {
  // Two malloc arenas instead of one per thread: the render, prepare and
  // NATS threads' arenas kept ~12 MB resident after a 10,000-note import
  // that malloc_trim cannot return (issue 15).
  LimitHeapArenas(2);
  int exit_code = -1;
  std::optional<ingest::IngestConfig> config = ParseCommandLine(argc, argv, &exit_code);
  if (!config) return exit_code;
  const ServiceBasics& basics = config->basics;

  auto leader = StartLeadership(*config);  // outlives every write; released last
  if (!leader.ok()) return FailStartup(leader.status());
  ingest::Standby standby(leader->get());
  if (int rc = WaitForLease(*config, leader->get(), &standby); rc >= 0) return rc;
  DataDir data;
  if (Status s = OpenDataDir(*config, &data); !s.ok()) return FailStartup(s);

  // Request bodies held at once by every connection (issue 22). Declared
  // first: connections give their reservations back when the last
  // Responder goes, which may be in a task the loops or pools drop at exit.
  http::BodyBudget body_budget(config->max_inflight_body_bytes);
  metrics::Registry registry;
  ExportCrashedNotes(&registry, *data.crashed);
  metrics::ExportBodyBudget(&registry, &body_budget);
  metrics::DiskGauges data_disk(&registry, config->data_dir);  // free space before writes fail (issue 24)
  ingest::JetStreamGauges jetstream(&registry, bus::BusOptionsFor(config->basics, "folio-ingest", nullptr));
  ingest::BlobsInFlight blobs_in_flight;  // uploaded, not committed yet: the collector leaves them
  std::shared_ptr<void> bundled_mermaid;  // holds the bundled mermaid's blob in blobs_in_flight
  ingest::UseBundledMermaid(config->mermaid_file, &config->site, &blobs_in_flight, &bundled_mermaid);
  ThreadPool pool(config->render_threads);
  ingest::Sites sites(config->site, data.token, data.store.get(), &pool, &registry);
  if (Status s = sites.Start(); !s.ok()) return FailStartup(s);
  ReleaseFreeHeap();  // loading the sites built (and freed) their generated pages
  ingest::BackupMetrics backup_metrics(&registry, config->backup_every_ms);
  std::unique_ptr<ingest::BackupSchedule> backups;  // off the writer thread: it blocks on disk and HTTP
  if (Status s = StartBackups(*config, &backup_metrics, &backups); !s.ok()) return FailStartup(s);

  http::Loop loop;          // HTTP
  http::Loop writer_loop;   // the single writer: SQLite, rendering, publishing
  ingest::BusLink link(basics, &writer_loop, &sites, &registry);
  if (*leader) link.SetPublishGate([l = leader->get()] { return l->leading(); });
  auto blob_gc = ingest::ScheduleBlobGc(*config, data.store.get(), &blobs_in_flight, &registry, &writer_loop);
  ScheduleWriter(&writer_loop, *config, data.store.get(), &sites, &link, &registry);
  // The log's checkpoint, off the writer thread (its fsyncs stalled pushes).
  auto checkpointer = ingest::WalCheckpointer::Start(config->data_dir + "/ingest.db", 1000);
  if (!checkpointer.ok()) return FailStartup(checkpointer.status());
  std::thread writer_thread([&] { writer_loop.Run(); });

  http::Router router;
  // Ready but degraded (200, with the reason) while --storage is missing:
  // only pushes with attachments need it (storage_probe.h says why).
  ingest::StorageProbe storage_probe(config->site.storage);
  storage_probe.Start();
  ExportStorageUp(&registry, *config, &storage_probe);
  if (*leader) ingest::ExportLeaderGauge(&registry, leader->get());
  metrics::OpsEndpoints ops(&loop, &registry, Readiness(leader->get(), &data.store->disk(), &link), basics,
                            [&storage_probe] { return storage_probe.Degraded(); });
  ops.MountPublic(&router);
  ThreadPool prepare_pool(1);  // push bodies parsed, attachments uploaded, in arrival order
  ingest::HandlerContext hctx{&loop,         &writer_loop,         &sites,           config->push_limits,
                              &registry,     &prepare_pool,        config->site.storage, &blobs_in_flight,
                              config->stage, &*data.crashed};
  hctx.leader = leader->get();
  ingest::MountApi(&router, &hctx);

  http::Server server(&loop, &router, ApiServerOptions(*config, &body_budget));
  standby.Stop();  // its sockets are not SO_REUSEPORT: they go before ours bind
  if (Status ls = Listen(&server, &ops, basics); !ls.ok()) {
    link.StopRelated();
    writer_loop.Stop();
    writer_thread.join();
    return FailStartup(ls);
  }
  LogListening(*config, basics.host, server.port());

  // Taken over by another process: stop without publishing and exit 75, so
  // a supervisor starts this one again as a standby that reloads its data.
  std::atomic<bool> taken_over{false};
  ServeUntilStopped(&loop, &writer_loop, &server, &ops, &sites, leader->get(), &taken_over);
  StopWork(&backups, &link, &writer_thread);
  return taken_over.load() ? 75 : 0;
}
