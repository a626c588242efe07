// Whether the folio-storage ingest was told to use (--storage) takes writes,
// for ingest's /readyz (issue 22: ingest said ready while its storage had
// never started).
//
// The rule: storage missing makes ingest "ready, degraded", not "not ready".
// A load balancer uses /readyz to decide whether to send requests here; the
// one ingest has no replica to send them to instead, readers never talk to
// it, and pushes without attachments (most of an author's day), manifests
// and exports work without storage. Taking ingest out would fail those too.
// So /readyz stays 200 and says what is missing and what still works
// ({"status":"ready","degraded":"storage at ... unreachable: ..."}),
// folio_degraded and folio_ingest_storage_up tell dashboards and alerts, and
// the log says when it changes. Pushes with attachments fail with 503 (the
// CLI retries them) until storage answers.
//
// How: a one-item listing (GET /blobs?limit=1 with ingest's write token)
// every 2 s with a 1 s timeout, on a thread of its own (the HTTP client
// blocks). Not storage's /readyz: with --admin-listen that is not on the
// port ingest talks to. So "missing" is: unreachable, refusing ingest's
// token, or failing (5xx); a full disk is not seen here (uploads then get
// 507, which names it).
//
// Ownership: owns its thread, stopped and joined by the destructor.
// Threading: Degraded() and up() from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "storage_client.h"

namespace folio::ingest {

class StorageProbe {
 public:
  // storage.url "" = no storage (never degraded, no thread).
  explicit StorageProbe(StorageAccess storage);
  ~StorageProbe();
  StorageProbe(const StorageProbe&) = delete;
  StorageProbe& operator=(const StorageProbe&) = delete;

  // Starts probing (the first probe at once). Call once.
  void Start();
  // "" while storage's last answer was 200 (or there is no storage);
  // otherwise what is missing and what still works, for /readyz.
  std::string Degraded() const;
  // Whether storage's last answer was 200 (true without storage).
  bool up() const { return up_.load(); }

 private:
  void Run();
  // One probe: "" if storage is ready, else why not.
  std::string Probe() const;
  void Record(std::string why);

  const std::string url_;
  const std::string token_;
  std::atomic<bool> up_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::string reason_;  // GUARDED_BY(mu_)
  bool stop_ = false;   // GUARDED_BY(mu_)
  bool first_ = true;    // the probe thread's: no outcome recorded yet
  std::thread thread_;
};

}  // namespace folio::ingest
