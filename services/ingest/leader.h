// Leadership of folio-ingest: one writer per deployment (issue 23).
//
// Every serving ingest holds or waits for the lease `leader` in the NATS KV
// bucket folio_ingest_lease (bus/kv_lease.h: compare-and-set on the key's
// revision; the holder renews every --lease-renew, followers take over
// after --lease-ttl without a renew; the holder stops writing
// --lease-ttl - 2 × --lease-renew after the start of its last good renew).
// The holder's id is --instance (default <hostname>-<pid>). A process that
// finds the lease under its own id takes it at once (its predecessor died):
// give each live process its own --instance, stable across its restarts
// (a StatefulSet pod's name), or leave the default.
//
// Lifecycle in main.cc:
//   1. Leadership::Start; unless the first look at the lease (within
//      --lease-renew + 2 s) makes this process the leader, a Standby serves the port (every API request:
//      503 not_leader naming the holder, with Retry-After; /readyz 503 "not
//      leader (held by X)"; /healthz and /livez 200; /livez, /readyz and
//      /metrics on --admin-listen when set) until this process leads. The
//      standby does not open --data, so it may share it with the leader.
//      The standby binds without SO_REUSEPORT: where the port is taken (a
//      leader on the same host and port) it serves nothing and just waits.
//   2. Leading: main opens --data (restoring first with
//      --restore-from-storage), drains and closes the standby, then binds
//      the port itself.
//   3. Serving: writes check leading() (LeaderFirst; the writer re-checks
//      before applying). While renews fail, writes get 503 not_leader and
//      /readyz is 503; they resume if the lease comes back at the same
//      revision. Taken over by another: OnTakenOver fires and main exits
//      (code 75) without publishing, so a supervisor restarts it as a
//      standby that reloads from its data when it leads again.
//
// Ownership: Leadership owns the KvLease (its own NATS connection and
// thread). Threading: leading(), holder(), NotLeader*() from any thread;
// WaitUntilLeading from main only; callbacks run on the lease thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "folio/bus/kv_lease.h"
#include "folio/core/service.h"
#include "folio/core/status.h"
#include "folio/http/admission.h"
#include "folio/http/server.h"
#include "folio/metrics/metrics.h"

namespace folio::ingest {

inline constexpr const char* kLeaseBucket = "folio_ingest_lease";

struct LeaseConfig {
  int64_t ttl_ms = 10'000;   // --lease-ttl (10s; 0 = no lease: this process always writes)
  int64_t renew_ms = 2'000;  // --lease-renew (2s); ttl must be at least 3 × renew
  std::string instance;      // --instance ("" = <hostname>-<pid>)
};

// <hostname>-<pid>.
std::string DefaultInstance();

class Leadership {
 public:
  // Starts the lease (it connects to --nats on its own thread).
  // kInvalidArgument for bad lease flags.
  static Result<std::unique_ptr<Leadership>> Start(const ServiceBasics& basics, const LeaseConfig& config);
  ~Leadership();  // releases the lease while leading

  bool leading() const { return lease_->leading(); }
  std::string holder() const { return lease_->holder(); }
  const std::string& instance() const { return lease_->options().holder; }
  // /readyz's reason while not leading: "not leader (held by X)", or why
  // this holder cannot write ("" while leading).
  std::string NotLeaderReason() const;
  // 503 {"error":{"code":"not_leader","message":"... held by X ..."}} with
  // Retry-After (the TTL in seconds, rounded up).
  http::Response NotLeaderResponse() const;

  // Blocks until this process leads (true), or Interrupt() or timeout_ms
  // (-1 = none) (false). Main only.
  bool WaitUntilLeading(int64_t timeout_ms = -1);
  int64_t renew_ms() const { return lease_->options().renew_ms; }
  void Interrupt();
  // `f` runs on the lease thread when another process takes the lease over
  // (not when renews merely fail); it must not block. nullptr clears it:
  // once that returns, `f` is not running and will not run.
  void OnTakenOver(std::function<void()> f);

 private:
  Leadership() = default;
  void OnChange(bool leading, const std::string& holder);

  std::unique_ptr<bus::KvLease> lease_;
  int64_t ttl_ms_ = 0;
  std::mutex mu_;
  std::condition_variable cv_;
  bool leading_seen_ = false;  // GUARDED_BY(mu_)
  bool interrupted_ = false;   // GUARDED_BY(mu_)
  std::function<void()> on_taken_over_;  // GUARDED_BY(mu_)
};

// `next`, behind a leadership check: a request while not leading is refused
// with NotLeaderResponse() before its body is read. leader null = `next`.
http::AdmissionCheck LeaderFirst(const Leadership* leader, http::AdmissionCheck next);

// folio_ingest_leader on `registry`: 1 while leader leads. REQUIRES: leader
// outlives the registry's scrapes.
void ExportLeaderGauge(metrics::Registry* registry, const Leadership* leader);

// The port while this process waits for the lease (see above). Owns its
// loop, thread and server. Start, then Stop from main (after the real
// server listens).
class Standby {
 public:
  explicit Standby(Leadership* leader);
  ~Standby();  // Stop()
  // Binds basics' host:port (no SO_REUSEPORT, see above) and, with
  // --admin-listen, the admin address (/livez 200, /readyz 503 with the
  // reason, /metrics with folio_ingest_leader 0), and serves on a thread of its own;
  // SIGTERM and SIGINT there Interrupt() the leadership's wait.
  // kUnavailable if the port cannot be bound: the thread still runs (for
  // the signals) and nothing is served.
  Status Start(const ServiceBasics& basics);
  // Drains (requests in flight are answered) and closes. Idempotent.
  void Stop();

 private:
  struct Impl;
  Leadership* leader_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace folio::ingest
