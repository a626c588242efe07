// folio-ingest's configuration: every flag it takes beyond the common ones
// (core/service.h), with its default, and the checked values the serving
// main() wires. The site, backup and restore commands read the flags they
// need themselves (site_command.h, backup.h). Call from main() only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "folio/core/config.h"
#include "folio/core/service.h"
#include "folio/core/status.h"
#include "leader.h"
#include "push_request.h"
#include "site_options.h"
#include "stage.h"

namespace folio::ingest {

struct IngestConfig {
  ServiceBasics basics;        // --listen (default 127.0.0.1:8080), --admin-listen, --nats, ...
  std::string data_dir;        // --data (default ./data/ingest): the SQLite database
  std::string token;           // --token (default "": read or create <data>/token)
  // --site ("default"), --site-name ("folio"), --base-url (""),
  // --mermaid-url ("auto": the pinned CDN build here; main switches to the
  // bundled file, bundled_mermaid.h), --mermaid-integrity (that of the pinned
  // URL when it is the one), --storage and --storage-token ("": none).
  SiteOptions site;
  // --mermaid-url auto: --mermaid-file (default mermaid.min.js next to the
  // binary), the bundled mermaid to serve from the site; "" otherwise.
  std::string mermaid_file;
  // --max-notes (20000), --max-note (4MiB), --max-attachment (64MiB with
  // --storage, else 1008KiB).
  PushLimits push_limits;
  size_t max_body = 64u << 20;  // --max-body (64MiB), grown to fit one base64 attachment
  // --max-inflight-body-bytes (default 4 × max_body: 256MiB, 344MiB with
  // --storage): request bodies all connections hold at once; past it 503
  // with Retry-After before a body is read (http/body_budget.h).
  // At least max_body, or the largest push could never be admitted.
  uint64_t max_inflight_body_bytes = 4 * (uint64_t{64} << 20);
  size_t render_threads = 0;    // --render-threads (0 = CPUs available to the process)
  int64_t backup_every_ms = 0;  // --backup-every (0 = off); needs --storage
  int backup_keep = 7;          // --backup-keep: 1..10000
  std::string backup_key_file;  // --backup-key-file ("" = <data>/backup.key)
  int64_t blob_gc_every_ms = 6 * 3600 * 1000;     // --blob-gc-every (6h; 0 = never); only with --storage
  int64_t blob_gc_grace_ms = 168 * 3600 * 1000LL;  // --blob-gc-grace (168h)
  StageLimits stage;            // --stage-max-bytes (1GiB), --stage-ttl (1h)
  // --lease-ttl (10s; 0 = no lease), --lease-renew (2s), --instance
  // (<hostname>-<pid>): one writer per deployment (leader.h).
  LeaseConfig lease;
  // --restore-from-storage (false): started without <data>/ingest.db,
  // restore the newest backup in --storage signed by the backup key first
  // (see main.cc's RestoreIfEmpty); needs --storage.
  bool restore_from_storage = false;
};

// Declares the common flags (AddServiceFlags) and folio-ingest's own (also
// those of its commands: --host, --title, --backup-*).
void AddIngestFlags(Flags* flags);

// The checked configuration of parsed `flags` for serving. kInvalidArgument
// naming the flag for a value out of range or malformed (also a bad
// --mermaid-url/--mermaid-integrity pair, --storage without its token,
// --backup-every or --restore-from-storage without --storage,
// --max-inflight-body-bytes below the largest push body, --lease-ttl below
// 3 × --lease-renew).
Result<IngestConfig> ReadIngestConfig(const Flags& flags, const ServiceBasics& basics);

}  // namespace folio::ingest
