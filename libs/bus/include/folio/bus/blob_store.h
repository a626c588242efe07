// JetStream as the replicated store under folio-storage (issue 23): a
// chunk stream, a metadata KV bucket, and the calls storage makes on them.
// JetStream is the only replication; storage keeps a local journal copy.
//
//   stream FOLIO_BLOBS     subjects "folio.blob.>", file storage, limits
//                          retention, --nats-replicas replicas. One upload's
//                          bytes are the messages of one subject
//                          "folio.blob.<kind>.<id>.<upload>" in order, each at
//                          most kBlobChunkBytes (NATS' max payload is 1 MB).
//   bucket FOLIO_BLOB_META history 1, same replicas: one key per blob or
//                          object, its value says which subject holds it
//                          (storage's replication.h owns the value format).
//
// Why a stream + KV and not NATS' object store: NATS.c 3.4.1 has no object
// store API, and the KV watcher (bus.h) already gives every replica the
// metadata in order with deletes, which is what fill and delete need.
//
// Ownership: a Publisher owns its own JetStream context (so its acks and
// failures are its own, not those of other uploads on the same Bus); it
// must be destroyed before its Bus. Threading: blocking calls; run them on
// an I/O pool, never on a loop thread. A Publisher is used by one thread at
// a time; the free functions are thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "folio/bus/bus.h"
#include "folio/core/status.h"

namespace folio::bus {

inline constexpr std::string_view kBlobStream = "FOLIO_BLOBS";
inline constexpr std::string_view kBlobSubjectPrefix = "folio.blob.";
inline constexpr std::string_view kBlobMetaBucket = "FOLIO_BLOB_META";
inline constexpr size_t kBlobChunkBytes = 512u << 10;

// Creates (or accepts, scaling replicas up like EnsureSchema) the stream and
// the bucket above with the Bus's replicas. kUnavailable as EnsureSchema
// when the cluster cannot place them (callers retry).
Status EnsureBlobStore(Bus* bus);

// Async JetStream publishes whose acks are awaited together (Wait).
class Publisher {
 public:
  // kUnavailable if the JetStream context cannot be made.
  static Result<std::unique_ptr<Publisher>> Create(Bus* bus);
  ~Publisher();
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  // Queue one message; failures surface in Wait. kTooLarge over the
  // server's max payload; kInvalidArgument for a bad subject or key.
  Status Publish(std::string_view subject, std::string_view data);
  Status KvPut(std::string_view bucket, std::string_view key, std::string_view value);
  Status KvDelete(std::string_view bucket, std::string_view key);
  // Returns once every message queued since the last Wait is stored (with
  // its replicas acknowledged). kUnavailable naming the first failure, or
  // when timeout_ms passes first.
  Status Wait(int64_t timeout_ms);

  struct Impl;

 private:
  explicit Publisher(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Reads the first `count` messages stored on `subject` of `stream` in order,
// handing each one's data to on_message (a non-OK result stops the read and
// is returned). Messages still being stored are waited for, at most
// timeout_ms in all: kDeadlineExceeded then (e.g. the subject was purged).
Status ReadSubject(Bus* bus, std::string_view stream, std::string_view subject, uint64_t count,
                   int64_t timeout_ms, const std::function<Status(std::string_view)>& on_message);

// Removes every message of `stream` on `subject` (wildcards allowed). One
// JetStream API request; kUnavailable if it fails.
Status PurgeSubject(Bus* bus, std::string_view stream, std::string_view subject);

}  // namespace folio::bus
