// folio-storage's API (api.h): metrics, the damaged-blob set and the
// mapping of journal errors to what a client is told.
#include "api_internal.h"
#include "folio/core/log.h"

namespace folio::storage::api_internal {

Status ObjectName(std::string_view encoded, std::string* name) {
  if (!PercentDecode(encoded, name)) return Status::Invalid("object name is not valid percent-encoding");
  if (name->empty() || name->size() > kMaxObjectName) {
    return Status::Invalid("object name must be 1.." + std::to_string(kMaxObjectName) + " bytes");
  }
  if (Status s = CheckVaultPath(*name); !s.ok()) return Status::Invalid("object name: " + s.message());
  return Status::Ok();
}

Metrics::Metrics(metrics::Registry* r)
    : puts(r->NewCounter("folio_storage_requests_total", "Requests by operation", {{"op", "put"}})),
      gets(r->NewCounter("folio_storage_requests_total", "Requests by operation", {{"op", "get"}})),
      deletes(r->NewCounter("folio_storage_requests_total", "Requests by operation", {{"op", "delete"}})),
      lists(r->NewCounter("folio_storage_requests_total", "Requests by operation", {{"op", "list"}})),
      rejected(r->NewCounter("folio_storage_rejected_uploads_total", "Uploads refused (hash mismatch, limits, errors)")),
      bytes_in(r->NewCounter("folio_storage_bytes_received_total", "Blob bytes committed")),
      bytes_out(r->NewCounter("folio_storage_bytes_sent_total", "Blob bytes read for responses")),
      corrupt_reads(r->NewCounter("folio_storage_corrupt_reads_total",
                                  "Blob reads that failed their checksum (damaged data on disk)")),
      refused_full(r->NewCounter("folio_storage_disk_full_refusals_total",
                                 "Writes refused with 507 because the disk is full")),
      put_seconds(r->NewHistogram("folio_storage_put_seconds", "Time from the end of an upload to its durable commit",
                                  {0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.05, 0.1, 1})) {}

Metrics* M(ApiContext* ctx) {
  static Metrics* m = new Metrics(ctx->registry);  // one registry per process
  return m;
}

DamagedBlobs& Damaged() {
  static DamagedBlobs* d = new DamagedBlobs();  // one journal per process
  return *d;
}

Status DamagedStatus(const std::string& key) {
  return Status::DataLoss("blob " + key + " is damaged on disk (checksum mismatch)");
}

Status ReadFailed(ApiContext* ctx, const std::string& key, uint64_t seq, const Status& s, std::string_view what) {
  if (s.code() != Code::kDataLoss) {
    log::Error("blob read failed", {{"key", key}, {"error", s.message()}, {"request", what}});
    return s;
  }
  M(ctx)->corrupt_reads.Increment();
  if (Damaged().Add(key, seq)) {
    log::Error("blob is damaged on disk; its reads now fail", {{"key", key}, {"error", s.message()}});
  }
  return DamagedStatus(key);
}

void ObserveWrite(ApiContext* ctx, const Status& s) {
  if (ctx->disk != nullptr) ctx->disk->Observe(s);
}

Status DiskFullStatus(const std::string& what) {
  return Status::NoSpace("the disk is full: " + what +
                         " was not stored (nothing was kept); writes resume by themselves once space returns");
}

Status WriteFailedStatus(ApiContext* ctx, const Status& s, const std::string& what) {
  if (s.code() == Code::kNoSpace) return DiskFullStatus(what);
  if (ctx->journal->WriteError().ok()) return s;
  return Status::Unavailable(
      "storage cannot write (a previous write or fsync failed); it must be restarted; nothing was kept");
}

}  // namespace folio::storage::api_internal
