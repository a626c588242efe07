// folio-storage's configuration: every flag it takes beyond the common ones
// (core/service.h), with its default, and the checked values main() wires.
// Call from main() only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "folio/core/config.h"
#include "folio/core/service.h"
#include "folio/core/status.h"
#include "folio/journal/journal.h"
#include "tokens.h"

namespace folio::storage {

struct StorageConfig {
  ServiceBasics basics;          // --listen (default 127.0.0.1:8083), --admin-listen, --nats, ...
  std::string data_dir;          // --data (default ./data/storage): the block journal
  // --segment-size (64MiB) and --max-blob (1GiB: largest blob or object).
  journal::Options journal;
  size_t io_threads = 8;         // --io-threads: 1..256
  // --max-inflight-body-bytes (128MiB): upload bodies held at once; an
  // upload holds UploadHoldBytes (about 2 MiB) of its body however long it
  // is, a smaller one its length: ~60 large uploads, or thousands of 4 KiB
  // ones. Past it 503 with Retry-After before the body is read. At least
  // UploadHoldBytes, or no large upload could ever be admitted.
  uint64_t max_inflight_body_bytes = uint64_t{128} << 20;
  // --data, and --write-token / --read-token (or their -file flags and
  // environment); "" = generated on the first start (tokens.h).
  TokenConfig tokens;
  // --replicated (default false): replicate on NATS JetStream
  // (replication.h) through --nats with --nats-replicas replicas. Off, a
  // single box that never talks to NATS, as before, even when --nats or
  // FOLIO_NATS is set (systemd's common.env and k8s's folio-env name NATS
  // for every service). On, both tokens must be given: every replica must
  // accept the same ones, and a generated one would exist on one replica
  // only.
  bool replicated = false;
};

// Declares the common flags (AddServiceFlags) and folio-storage's own.
void AddStorageFlags(Flags* flags);

// The checked configuration of parsed `flags`. kInvalidArgument naming the
// flag for a value out of range or malformed (--max-inflight-body-bytes
// below what one upload holds; --replicated without both tokens); a token
// file's read error.
Result<StorageConfig> ReadStorageConfig(const Flags& flags, const ServiceBasics& basics);

}  // namespace folio::storage
