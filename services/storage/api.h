// folio-storage's HTTP API over one block journal (libs/journal).
//
// Every route needs a bearer token (auth.h, tokens.h): the write token for
// all of them, or the read token for GET and HEAD of /blobs/sha256/<hex>
// (what edges do). No or an unknown token: 401 with "WWW-Authenticate:
// Bearer"; the read token anywhere else: 403. An upload (the PUT routes,
// the only ones that take a body, streamed) is checked by its route's
// http::AdmissionCheck before its body is read or counted against the body
// budget: a refusal stores nothing and closes the connection unread. Any
// other request with a body is refused with 413 before the body is read,
// token or not (main serves with ServerOptions::max_body_bytes = 0).
// /livez, /readyz and /metrics are open.
//
//   PUT    /blobs/sha256/<hex>   body streamed in; its SHA-256 must equal <hex>
//                                (else 400, nothing kept); Content-Type kept.
//                                201 new, 200 already present (body not read)
//   GET    /blobs/sha256/<hex>   streamed out; ETag "<hex>", If-None-Match -> 304,
//   HEAD                         Range: bytes=a-b / a- / -n -> 206 (416 if unsatisfiable),
//                                Cache-Control: public, max-age=31536000, immutable.
//                                <hex> may also be a prefix of 16..63 digits (an
//                                edge knows only an asset URL's 16): the first blob
//                                with that prefix, 404 if none (its ETag names it)
//   DELETE /blobs/sha256/<hex>   204, 404 if absent
//   GET    /blobs?prefix=<hex prefix>&after=<hex>&limit=N     JSON listing
//   PUT    /objects/<name>[?keep=N]   a named object (backups); with keep, only the
//                                newest N objects of the name's folder are kept
//   GET/HEAD/DELETE /objects/<name>, GET /objects?prefix=&after=&limit=
//
// Every error is a JSON body {"error":{"code","message"}} with a 4xx/5xx.
// GET/HEAD send their status line only after the first piece of the body
// (one byte for HEAD) was read and its checksum verified: a damaged blob is
// answered 500 data_loss ("blob <key> is damaged on disk"), never 200/206.
// Damage found later in a large body can only cut that response; the
// version is remembered (DamagedBlobs) and answered 500 up front from then
// on, and a PUT of the same content replaces it. A full disk answers 507
// no_space ("nothing was kept"), and further PUTs get 507 before their body
// is read until space returns. Once a write or fsync failed (the journal
// refuses writes until a restart), writes answer 503 unavailable "storage
// cannot write (...); it must be restarted; nothing was kept": the
// journal's error, with its paths, is only logged. Blob responses carry
// Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline';
// sandbox and X-Content-Type-Options: nosniff.
//
// Replicated (ctx.replica set: --replicated): writes and deletes are also
// recorded in JetStream before they are answered, listings, prefix lookups
// and "already present" answer the cluster-wide view, and a GET of what
// the journal lacks is fetched through (replication.h). A PUT whose
// JetStream acks fail answers 503 unavailable (retry it).
//
// Threading: handlers run on the loop thread; journal calls that touch the
// disk (Append of full blocks, Commit's fdatasync, ReadAt, Delete) run on
// the I/O pool and post back. Upload bodies are paused while a block is
// being written, so an upload holds at most UploadHoldBytes in memory.
#pragma once

#include <cstdint>
#include <memory>

#include "folio/core/disk_space.h"
#include "folio/core/thread_pool.h"
#include "folio/http/loop.h"
#include "folio/http/server.h"
#include "folio/journal/journal.h"
#include "folio/metrics/metrics.h"
#include "auth.h"
#include "replication.h"

namespace folio::storage {

struct ApiOptions {
  uint64_t max_blob_bytes = 1ull << 30;   // largest PUT body (1 GiB)
  size_t write_chunk_bytes = 1u << 20;    // bytes buffered before a write on the I/O pool
  size_t read_chunk_bytes = 256u << 10;   // first piece of a GET, read and verified before the status line
};

struct ApiContext {
  http::Loop* loop;
  ThreadPool* io;
  journal::Journal* journal;
  metrics::Registry* registry;
  ApiOptions options;
  // The journal's disk: while full, PUTs are refused with 507 before their
  // body is read. Marked by writes failing with kNoSpace, cleared by a
  // successful write (or by main's periodic DiskFull::Recheck). May be null.
  DiskFull* disk = nullptr;
  TokenHashes tokens;  // who may call (auth.h); REQUIRES: both set
  Replica* replica = nullptr;  // null (default): single box, no NATS
};

// What one upload holds of its body at most, whatever its length: the
// chunk being appended on the I/O pool, the next one filling, and the
// server's window plus one read (ServerOptions::stream_body_budget_bytes).
inline uint64_t UploadHoldBytes(const ApiOptions& o) { return 2 * uint64_t{o.write_chunk_bytes} + (128u << 10); }

// Mounts the routes (and a fallback that answers 401 before 404) on
// router. ctx must outlive the router's use.
void MountApi(http::Router* router, ApiContext* ctx);

// For /readyz: "" when writes work (and, replicated, the replica is ready:
// Replica::NotReadyReason); else why not ("disk full: ..." while the
// disk is full; "a write or fsync failed: restart needed ..." once the
// journal refuses writes for good: its error, which names the data
// directory, is logged, not sent).
std::string NotReadyReason(const ApiContext& ctx);

}  // namespace folio::storage
