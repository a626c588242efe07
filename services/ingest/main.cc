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

#include <csignal>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <thread>

#include "folio/bus/bus.h"
#include "folio/bus/connect.h"
#include "folio/core/config.h"
#include "folio/core/files.h"
#include "folio/core/disk_space.h"
#include "folio/core/hash.h"
#include "folio/core/json.h"
#include "folio/core/log.h"
#include "folio/core/secret.h"
#include "folio/core/service.h"
#include "folio/core/time.h"
#include "folio/http/server.h"
#include "folio/metrics/metrics.h"
#include "backup.h"
#include "blob_gc.h"
#include "config.h"
#include "handlers.h"
#include "related_consumer.h"
#include "site_command.h"
#include "sites.h"
#include "store.h"

using namespace folio;

namespace {


// The API token: --token, else <data>/token, else a new random one saved there.
Result<std::string> LoadToken(const std::string& flag, const std::string& data_dir) {
  if (!flag.empty()) return flag;
  bool created = false;
  auto tok = ReadOrCreateSecretFile(data_dir + "/token", 24, &created);
  if (tok.ok() && created) log::Info("generated an API token", {{"file", data_dir + "/token"}});
  return tok;
}

// --backup-every: a BackupSchedule into *out, or nothing when 0.
Status StartBackups(const ingest::IngestConfig& c, metrics::Registry* registry,
                    std::unique_ptr<ingest::BackupSchedule>* out) {
  if (c.backup_every_ms <= 0) return Status::Ok();
  auto key = ingest::LoadBackupKey(c.data_dir, c.backup_key_file, true);
  if (!key.ok()) return key.status();
  *out = std::make_unique<ingest::BackupSchedule>(ingest::BackupTarget{c.data_dir, c.site.storage, std::move(*key)},
                                                  c.backup_keep, c.backup_every_ms, registry);
  (*out)->Start();
  return Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  Flags flags("folio-ingest", "Accepts pushes of markdown notes, renders and publishes pages.");
  ingest::AddIngestFlags(&flags);
  ServiceBasics basics;
  if (int rc = ParseServiceFlags(&flags, argc, argv, &basics); rc >= 0) return rc;
  if (!flags.positional().empty()) {
    if (flags.positional()[0] == "site") return ingest::RunSiteCommand(flags);
    if (flags.positional()[0] == "backup") return ingest::RunBackupCommand(flags);
    if (flags.positional()[0] == "restore") return ingest::RunRestoreCommand(flags);
    fprintf(stderr, "folio-ingest: unknown command \"%s\" (commands: site, backup, restore; none to serve)\n",
            flags.positional()[0].c_str());
    return 2;
  }
  auto config = ingest::ReadIngestConfig(flags, basics);
  if (!config.ok()) return FailStartup(config.status());
  const std::string& host = basics.host;
  const int port = basics.port;
  const std::string& data_dir = config->data_dir;

  auto store = ingest::Store::Open(data_dir);
  if (!store.ok()) return FailStartup(store.status());
  // One writer per database: the public port is shared (SO_REUSEPORT), so
  // only this lock keeps a second folio-ingest off the same data.
  auto lock = LockFile(data_dir + "/ingest.lock");
  if (!lock.ok()) {
    return FailStartup(Status(lock.status().code(), lock.status().message() +
                                                 ": another folio-ingest serves this --data; stop it first"));
  }
  auto token = LoadToken(config->token, data_dir);
  if (!token.ok()) return FailStartup(token.status());

  metrics::Registry registry;
  ThreadPool pool(config->render_threads);
  const ingest::SiteOptions& site_opts = config->site;
  ingest::Sites sites(site_opts, *token, store->get(), &pool, &registry);
  if (Status s = sites.Start(); !s.ok()) return FailStartup(s);
  std::unique_ptr<ingest::BackupSchedule> backups;  // off the writer thread: it blocks on disk and HTTP
  if (Status s = StartBackups(*config, &registry, &backups); !s.ok()) return FailStartup(s);

  http::Loop loop;          // HTTP
  http::Loop writer_loop;   // the single writer: SQLite, rendering, publishing
  std::atomic<bool> bus_ready{false};
  bus::BusMetrics bus_metrics(&registry);  // outlives bus_conn
  std::unique_ptr<bus::Bus> bus_conn;
  ingest::RelatedConsumer related(&writer_loop, &sites, &registry);

  // Connect to NATS on the writer thread, retrying until it answers; then
  // publish whatever is pending and keep retrying the outbox periodically.
  bus::BusOptions bus_opts = bus::BusOptionsFor(basics, "folio-ingest", &bus_metrics);
  auto try_connect = [&] {
    if (bus_conn) return;
    auto b = bus::ConnectWithSchema(bus_opts);
    if (!b.ok()) {
      log::Warn("cannot connect to NATS; retrying", {{"error", b.status().message()}});
      return;
    }
    bus_conn = std::move(*b);
    sites.SetBus(bus_conn.get());
    sites.PublishPending();
    sites.ResyncIfNeeded();
    if (Status s = sites.PublishSiteRecords(); !s.ok()) {
      log::Warn("site records not published; edges may not know every host yet", {{"error", s.message()}});
    }
    related.Start(bus_conn.get());
    bus_ready = true;
    log::Info("connected to NATS", {{"url", bus_opts.url}});
  };
  // Blob collection on the writer loop: pushes run there, so a pass never
  // sees a blob a push uploaded and has not committed yet.
  std::unique_ptr<ingest::BlobGc> blob_gc;
  if (!site_opts.storage.url.empty() && config->blob_gc_every_ms > 0) {
    blob_gc = std::make_unique<ingest::BlobGc>(site_opts.storage, config->blob_gc_grace_ms, store->get(), &registry);
    writer_loop.Post([&, every = config->blob_gc_every_ms] {
      writer_loop.Every(static_cast<uint64_t>(every), [&] {
        if (auto pass = blob_gc->RunOnce(NowUnixMs()); !pass.ok()) {
          log::Warn("blob collection failed; retried next time", {{"error", pass.status().message()}});
        }
      });
    });
  }
  writer_loop.Post(try_connect);
  // A full disk: pushes fail with 507 and /readyz says so until a commit
  // succeeds again or this check finds space (statvfs; on the writer thread,
  // which waits on the disk anyway).
  DiskFull& disk = (*store)->disk();
  auto& g_disk_full = registry.NewGauge("folio_ingest_disk_full",
                                        "1 while the database's disk is full: pushes fail (507) until space returns");
  // The outbox's age, measured after each round's publish: how long the
  // oldest committed message has waited for NATS (0 when all went out).
  auto& g_outbox_oldest = registry.NewGauge(
      "folio_ingest_outbox_oldest_seconds",
      "Age of the oldest committed message not yet published to NATS; 0 when the outbox is empty");
  const int64_t started_ms = NowUnixMs();
  auto measure_outbox = [&g_outbox_oldest, started_ms, st = store->get()] {
    auto oldest = st->OutboxOldestMs();
    if (!oldest.ok()) return;  // the disk's trouble is reported elsewhere; keep the last value
    int64_t since = *oldest == 0 ? started_ms : *oldest;  // a row from before created_ms: at least this old
    g_outbox_oldest.Set(*oldest < 0 ? 0.0 : static_cast<double>(std::max<int64_t>(0, NowUnixMs() - since)) / 1000.0);
  };
  writer_loop.Post([&, measure_outbox] {
    writer_loop.Every(1000, [&, measure_outbox] {
      g_disk_full.Set(disk.Recheck() ? 1 : 0);
      sites.ReloadIfChanged();  // `folio-ingest site add|remove` ran meanwhile
      if (!bus_conn) try_connect();
      else sites.PublishPending();
      measure_outbox();
    });
  });
  std::thread writer_thread([&] { writer_loop.Run(); });

  http::Router router;
  metrics::OpsEndpoints ops(&loop, &registry, [&]() -> std::string {
    if (disk.full()) return "disk full: pushes fail until space returns; pages are still served";
    return bus_ready ? "" : "not connected to NATS at " + bus_opts.url;
  }, basics);
  ops.MountPublic(&router);
  ingest::HandlerContext hctx{&loop, &writer_loop, &sites, config->push_limits, &registry};
  ingest::MountApi(&router, &hctx);

  http::ServerOptions sopts;
  sopts.max_body_bytes = config->max_body;
  http::Server server(&loop, &router, sopts);
  Status ls = server.ListenActivatedOrBind(host, port);
  if (ls.ok()) ls = ops.Listen();
  if (!ls.ok()) {
    related.Stop();
    writer_loop.Stop();
    writer_thread.join();
    return FailStartup(ls);
  }
  log::Info("folio-ingest listening", {{"addr", host + ":" + std::to_string(server.port())},
                                        {"site", site_opts.site}, {"data", data_dir}});

  auto shutdown = [&] {
    log::Info("shutting down");
    ops.Drain(&server, [&] {
      writer_loop.Post([&] {
        sites.PublishPending();
        writer_loop.Stop();
      });
      loop.Stop();
    });
  };
  loop.OnSignal(SIGTERM, shutdown);
  loop.OnSignal(SIGINT, shutdown);
  loop.Run();
  backups.reset();
  related.Stop();  // before the bus goes; a batch the writer has not run is redelivered
  writer_thread.join();
  bus_conn.reset();
  log::Info("folio-ingest stopped");
  return 0;
}
