#include "config.h"

#include <algorithm>

#include "folio/bus/site_name.h"
#include "folio/core/secret.h"
#include "folio/ingest_api/limits.h"
#include "folio/site/csp.h"
#include "bundled_mermaid.h"
#include "storage_client.h"

namespace folio::ingest {

void AddIngestFlags(Flags* flags) {
  AddServiceFlags(flags, "127.0.0.1:8080");
  flags->Add("data", "./data/ingest", "directory for the SQLite database");
  AddSecretFlags(flags, "token", "API bearer token (default: read or create <data>/token)");
  flags->Add("site", "default", "site id of --token: namespace of keys and rows, [a-z0-9-]");
  flags->Add("site-name", "folio", "title shown on the pages of --site");
  flags->Add("host", "", "site add: host names of the site, comma-separated (a.example,www.a.example)");
  flags->Add("title", "", "site add: title shown on the site's pages (default: the site name)");
  flags->Add("private", "", "site set: on = only signed-in readers see the site (default off)");
  flags->Add("lang", "", "site set: the site's language tag (default en)");
  flags->Add("feed", "", "site set: RSS items carry the note's content or a summary (default content)");
  flags->Add("analytics", "", "site set: plausible, umami, goatcounter, google, custom or none (default none)");
  flags->Add("analytics-id", "", "site set: the analytics provider's domain, website id, code or measurement id");
  flags->Add("analytics-url", "", "site set: https URL of a custom or self-hosted analytics script");
  flags->Add("session-ttl", "", "site set: how long a reader stays signed in (default 7d)");
  flags->AddBool("owner", false, "site reader add: the reader is an owner (sees /_/stats)");
  flags->Add("max-body", "64MiB", "largest push body");
  flags->Add("max-inflight-body-bytes", "",
             "request bodies all connections may hold at once; past it a request gets 503 with Retry-After before"
             " its body is read (default: 4 × the largest push body, 256MiB; 344MiB with --storage); at least that"
             " largest body");
  // The defaults are the ingest API's limits (folio/ingest_api/limits.h), which clients assume too.
  flags->Add("max-note", std::to_string(ingest_api::kMaxNoteBytes >> 20) + "MiB", "largest single note");
  static_assert(ingest_api::kMaxNoteBytes % (1 << 20) == 0);
  flags->Add("max-notes", std::to_string(ingest_api::kMaxPushItems), "most notes (plus deletions) per push");
  flags->Add("render-threads", "0", "render threads (0 = CPUs available to the process)");
  flags->AddBool("strict-line-breaks", false,
                 "the default for sites whose pushes never said (folio push sends the vault's own Obsidian"
                 " \"Strict line breaks\"): join a paragraph's lines as CommonMark does; off: each newline is a"
                 " line break, Obsidian's default");
  flags->Add("recent-pages", "1",
             "pages of /_/recent (50 notes each, newest first); an edit moves its note to the top and so"
             " rewrites every one of them, so each page beyond the first costs every push one more message");
  flags->Add("feed-snapshot-bytes", "64MiB",
             "page feed: bytes of packs published since a site's last snapshot past which (and past the site's live"
             " page bytes) the site is written again as one snapshot and the packs before it are purged");
  flags->Add("base-url", "", "public URL of --site (https://notes.example.com): absolute links in RSS, sitemap, OG");
  flags->Add("mermaid-url", "auto",
             "mermaid script (one-file build) loaded only by pages with a diagram: \"auto\" = the bundled"
             " --mermaid-file, served by the site itself (needs --storage; without it, or without the file, the"
             " pinned CDN build); an https:// URL, which needs --mermaid-integrity; a path on the site (/...);"
             " \"\" = diagrams stay text");
  flags->Add("mermaid-integrity", "",
             "Subresource Integrity of --mermaid-url (sha384-...; default: that of the pinned CDN build)");
  flags->Add("mermaid-file", "",
             "the bundled mermaid.min.js --mermaid-url auto serves (default: mermaid.min.js next to this binary)");
  flags->Add("storage", "", "folio-storage URL (http://127.0.0.1:8083) or replicas separated by ',' (tried in turn):"
             " attachments go there; \"\" = SQLite and the bus");
  AddSecretFlags(flags, "storage-token",
                 "folio-storage's write token (it writes it to <its data>/write-token on its first start); required"
                 " with --storage");
  flags->Add("max-attachment", "", "largest attachment (default: 64MiB with --storage, else 1008KiB); --max-body grows to fit");
  flags->Add("backup-every", "0", "serve: back ingest.db up to --storage this often (6h; 0 = off)");
  flags->Add("backup-keep", "7", "backups kept in storage (the newest N) by backup and --backup-every");
  flags->Add("backup-key-file", "",
             "key that signs backups; restore refuses any backup it did not sign (default: <data>/backup.key, created"
             " on first use; keep a copy: restoring on another machine needs it)");
  flags->AddBool("restore-from-storage", false,
                 "serve: when --data holds no ingest.db, first restore the newest backup in --storage that"
                 " --backup-key-file signed; none there: start empty (making the key file if it is missing); some, but"
                 " no key or none that verifies: fail");
  flags->Add("lease-ttl", "10s",
             "one writer per deployment: the lease in NATS KV bucket folio_ingest_lease passes to a standby after"
             " this long without a renew; the holder stops writing TTL - 2 × --lease-renew after its last good"
             " renew (0 = no lease: always write)");
  flags->Add("lease-renew", "2s", "the lease holder renews (and a standby checks) this often; at most TTL / 3");
  flags->Add("instance", "",
             "this process's id in the lease (default: <hostname>-<pid>); a process finding the lease under its own id"
             " takes it at once, so no two live processes may share one (a StatefulSet pod name is right)");
  flags->Add("stage-max-bytes", "1GiB",
             "most bytes of staged batches (multi-batch imports: POST /api/v1/push?stage=) a site holds at once");
  flags->Add("stage-ttl", "1h", "a staged import without an upload for this long is dropped");
  flags->Add("blob-gc-every", "6h",
             "serve with --storage: delete blobs no attachment uses any more this often (0 = never)");
  flags->Add("blob-gc-grace", "168h",
             "how long a blob must have been unused before it is deleted; keep it longer than the span of your"
             " backups, so that a restored backup finds its attachments");
}

namespace {

// --mermaid-url auto: the pinned CDN build until main finds and uploads the
// bundled file (bundled_mermaid.h); *mermaid_file is that file's flag.
Status ReadMermaidSource(const Flags& flags, SiteOptions* out, std::string* mermaid_file) {
  out->mermaid_url = flags.Get("mermaid-url");
  out->mermaid_integrity = flags.Get("mermaid-integrity");
  mermaid_file->clear();
  if (out->mermaid_url == kMermaidAuto) {
    if (!out->mermaid_integrity.empty()) {
      return Status::Invalid("--mermaid-integrity is set but --mermaid-url is not: give the URL it belongs to");
    }
    out->mermaid_url = std::string(site::kMermaidUrl);
    *mermaid_file = flags.Get("mermaid-file").empty() ? BesideExecutable("mermaid.min.js") : flags.Get("mermaid-file");
  }
  if (out->mermaid_url == site::kMermaidUrl && out->mermaid_integrity.empty()) {
    out->mermaid_integrity = std::string(site::kMermaidIntegrity);
  }
  return site::CheckMermaidSource(out->mermaid_url, out->mermaid_integrity);
}

Status ReadSiteOptions(const Flags& flags, SiteOptions* out, std::string* mermaid_file) {
  if (!bus::IsValidSiteName(flags.Get("site"))) return Status::Invalid("--site must match [a-z0-9-]{1,63}");
  out->site = flags.Get("site");
  out->site_name = flags.Get("site-name");
  out->base_url = flags.Get("base-url");
  out->strict_line_breaks = flags.GetBool("strict-line-breaks");
  auto recent = flags.GetInt("recent-pages");
  if (!recent.ok() || *recent < 1 || *recent > 100) return Status::Invalid("--recent-pages must be in 1..100");
  out->recent_pages = static_cast<size_t>(*recent);
  auto snapshot_bytes = flags.GetBytes("feed-snapshot-bytes");
  if (!snapshot_bytes.ok() || *snapshot_bytes < 1) return Status::Invalid("--feed-snapshot-bytes must be positive");
  out->feed_snapshot_bytes = static_cast<int64_t>(*snapshot_bytes);
  if (Status s = ReadMermaidSource(flags, out, mermaid_file); !s.ok()) return s;
  auto storage = StorageAccessFromFlags(flags);
  if (!storage.ok()) return storage.status();
  out->storage = *storage;
  return Status::Ok();
}

Status ReadLimits(const Flags& flags, bool has_storage, IngestConfig* c) {
  auto max_body = flags.GetBytes("max-body");
  auto max_note = flags.GetBytes("max-note");
  auto max_notes = flags.GetInt("max-notes");
  auto threads = flags.GetInt("render-threads");
  for (const auto* r : {&max_body, &max_note, &max_notes, &threads}) {
    if (!r->ok()) return r->status();
  }
  c->render_threads = static_cast<size_t>(*threads);
  c->push_limits = PushLimits{static_cast<size_t>(*max_notes), static_cast<size_t>(*max_note)};
  if (const std::string& v = flags.Get("max-attachment"); !v.empty()) {
    auto max_att = flags.GetBytes("max-attachment");
    if (!max_att.ok()) return max_att.status();
    if (*max_att < 1) return Status::Invalid("--max-attachment must be positive");
    c->push_limits.max_attachment_bytes = static_cast<size_t>(*max_att);
  } else if (has_storage) {
    c->push_limits.max_attachment_bytes = 64u << 20;
  }
  // One attachment may travel alone, as base64 (4/3) in JSON.
  c->max_body = static_cast<size_t>(
      std::max<int64_t>(*max_body, static_cast<int64_t>(c->push_limits.max_attachment_bytes / 3 * 4 + (1 << 20))));
  return Status::Ok();
}

// After ReadLimits: the bound on bodies in flight, which must admit the
// largest body one push may have.
Status ReadBodyBudget(const Flags& flags, IngestConfig* c) {
  const uint64_t largest = c->max_body;
  if (flags.Get("max-inflight-body-bytes").empty()) {
    c->max_inflight_body_bytes = 4 * largest;
    return Status::Ok();
  }
  auto bytes = flags.GetBytes("max-inflight-body-bytes");
  if (!bytes.ok()) return bytes.status();
  if (*bytes < 0 || static_cast<uint64_t>(*bytes) < largest) {
    return Status::Invalid("--max-inflight-body-bytes (" + std::to_string(*bytes) +
                           ") is less than the largest push body (" + std::to_string(largest) +
                           " bytes: --max-body, grown to fit one base64 attachment), which could then never be"
                           " admitted; raise it, or lower --max-body / --max-attachment");
  }
  c->max_inflight_body_bytes = static_cast<uint64_t>(*bytes);
  return Status::Ok();
}

Status ReadSchedules(const Flags& flags, bool has_storage, IngestConfig* c) {
  auto every = flags.GetDurationMs("backup-every");
  auto keep = flags.GetInt("backup-keep");
  if (!every.ok()) return every.status();
  if (!keep.ok() || *keep < 1 || *keep > 10000) return Status::Invalid("--backup-keep must be in 1..10000");
  if (*every > 0 && !has_storage) return Status::Invalid("--backup-every needs --storage");
  c->backup_every_ms = std::max<int64_t>(*every, 0);
  c->backup_keep = static_cast<int>(*keep);
  c->backup_key_file = flags.Get("backup-key-file");
  auto gc_every = flags.GetDurationMs("blob-gc-every");
  auto gc_grace = flags.GetDurationMs("blob-gc-grace");
  if (!gc_every.ok()) return gc_every.status();
  if (!gc_grace.ok()) return gc_grace.status();
  if (*gc_every < 0 || *gc_grace < 0) return Status::Invalid("--blob-gc-every and --blob-gc-grace must be >= 0");
  c->blob_gc_every_ms = *gc_every;
  c->blob_gc_grace_ms = *gc_grace;
  auto stage_bytes = flags.GetBytes("stage-max-bytes");
  auto stage_ttl = flags.GetDurationMs("stage-ttl");
  if (!stage_bytes.ok()) return stage_bytes.status();
  if (!stage_ttl.ok()) return stage_ttl.status();
  if (*stage_bytes < 1 || *stage_ttl < 1) return Status::Invalid("--stage-max-bytes and --stage-ttl must be positive");
  c->stage = {*stage_bytes, *stage_ttl};
  return Status::Ok();
}

Status ReadLease(const Flags& flags, bool has_storage, IngestConfig* c) {
  auto ttl = flags.GetDurationMs("lease-ttl");
  auto renew = flags.GetDurationMs("lease-renew");
  if (!ttl.ok()) return ttl.status();
  if (!renew.ok()) return renew.status();
  if (*ttl < 0 || (*ttl > 0 && (*renew < 50 || *ttl < 3 * *renew))) {
    return Status::Invalid("--lease-ttl must be 0 (off) or at least 3 × --lease-renew, which is at least 50ms");
  }
  c->lease = {*ttl, *renew, flags.Get("instance")};
  c->restore_from_storage = flags.GetBool("restore-from-storage");
  if (c->restore_from_storage && !has_storage) return Status::Invalid("--restore-from-storage needs --storage");
  return Status::Ok();
}

}  // namespace

Result<IngestConfig> ReadIngestConfig(const Flags& flags, const ServiceBasics& basics) {
  IngestConfig c;
  c.basics = basics;
  c.data_dir = flags.Get("data");
  auto token = SecretFromFlags(flags, "token");  // --token, --token-file or FOLIO_TOKEN
  if (!token.ok()) return token.status();
  c.token = *token;
  if (Status s = ReadSiteOptions(flags, &c.site, &c.mermaid_file); !s.ok()) return s;
  const bool has_storage = !c.site.storage.url.empty();
  if (Status s = ReadLimits(flags, has_storage, &c); !s.ok()) return s;
  if (Status s = ReadBodyBudget(flags, &c); !s.ok()) return s;
  if (Status s = ReadSchedules(flags, has_storage, &c); !s.ok()) return s;
  if (Status s = ReadLease(flags, has_storage, &c); !s.ok()) return s;
  return c;
}

}  // namespace folio::ingest
