#include "config.h"

#include <string>

#include "api.h"
#include "folio/core/secret.h"

namespace folio::storage {

void AddStorageFlags(Flags* flags) {
  AddServiceFlags(flags, "127.0.0.1:8083");
  flags->Add("data", "./data/storage", "directory of the block journal");
  flags->Add("max-blob", "1GiB", "largest blob or object");
  flags->Add("segment-size", "64MiB", "size at which a journal segment file is sealed");
  flags->Add("io-threads", "8", "threads doing disk work (concurrent writers share fsyncs)");
  flags->Add("max-inflight-body-bytes", "128MiB",
             "upload bodies held in memory at once (an upload holds about 2 MiB of its body however long it is);"
             " past it an upload gets 503 with Retry-After before its body is read");
  flags->AddBool("replicated", false,
                 "replicate blobs and objects on NATS JetStream (--nats, --nats-replicas); every replica serves"
                 " every blob; needs --write-token and --read-token (default: off, a single box, even when --nats"
                 " or FOLIO_NATS is set: a shared environment file names NATS for every service)");
  AddSecretFlags(flags, "write-token",
                 "bearer token for everything: ingest's --storage-token (default: generated on the first start,"
                 " written once to <data>/write-token)");
  AddSecretFlags(flags, "read-token",
                 "bearer token for GET/HEAD of blobs only: edges' --storage-token (default: generated on the first"
                 " start, written once to <data>/read-token)");
}

Result<StorageConfig> ReadStorageConfig(const Flags& flags, const ServiceBasics& basics) {
  auto max_blob = flags.GetBytes("max-blob");
  auto segment = flags.GetBytes("segment-size");
  auto io_threads = flags.GetInt("io-threads");
  auto inflight = flags.GetBytes("max-inflight-body-bytes");
  for (const auto* r : {&max_blob, &segment, &inflight}) {
    if (!r->ok()) return r->status();
  }
  if (const uint64_t one = UploadHoldBytes(ApiOptions{}); *inflight < 0 || static_cast<uint64_t>(*inflight) < one) {
    return Status::Invalid("--max-inflight-body-bytes must be at least " + std::to_string(one) +
                           " bytes: what one upload holds of its body, or no large upload could be admitted");
  }
  if (!io_threads.ok()) return io_threads.status();
  if (*io_threads < 1 || *io_threads > 256) return Status::Invalid("--io-threads must be in 1..256");
  StorageConfig c;
  c.basics = basics;
  c.data_dir = flags.Get("data");
  c.journal.segment_bytes = static_cast<uint64_t>(*segment);
  c.journal.max_blob_bytes = static_cast<uint64_t>(*max_blob);
  c.io_threads = static_cast<size_t>(*io_threads);
  c.max_inflight_body_bytes = static_cast<uint64_t>(*inflight);
  c.tokens.data_dir = c.data_dir;
  auto write = SecretFromFlags(flags, "write-token");
  if (!write.ok()) return write.status();
  auto read = SecretFromFlags(flags, "read-token");
  if (!read.ok()) return read.status();
  c.tokens.write_token = *write;
  c.tokens.read_token = *read;
  c.replicated = flags.GetBool("replicated");
  if (c.replicated && (c.tokens.write_token.empty() || c.tokens.read_token.empty())) {
    return Status::Invalid("--replicated needs --write-token and --read-token (or their"
                           " -file flags or environment):"
                           " every replica must accept the same tokens, and a generated one would exist on one"
                           " replica only");
  }
  return c;
}

}  // namespace folio::storage
