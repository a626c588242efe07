// KvLease: a single-holder lease kept in a NATS KV bucket, so that of several
// processes pointed at one NATS only one acts (folio-ingest: one writer per
// deployment, issue 23).
//
// The lease is one key (options.key) of bucket options.bucket (history 1,
// file storage, options.replicas replicas), whose value is the holder's id.
// Every change is a compare-and-set on the key's revision:
//   - acquire: kvStore_Create when the key is absent or deleted; kvStore_Update
//     at the revision seen when that revision is released (value "") or has
//     not changed for ttl_ms as measured on this process's monotonic clock
//     since it first saw it (no wall clocks are compared across machines),
//     or holds this process's own id: an id names one live process at a
//     time (a restarted container or StatefulSet pod takes its lease back
//     at once), so two live processes must never share one;
//   - renew: kvStore_Update at the holder's last revision every renew_ms; a
//     "wrong last sequence" answer means another process took it over;
//   - release (destructor, while leading): kvStore_Update to "" at the last
//     revision, so a follower takes over at its next check, not after ttl_ms.
// Safety: leading() is true only until step_down_ms (= ttl_ms - 2 * renew_ms)
// after the start of the last renew that succeeded. A follower's ttl_ms starts
// when it first sees that renew's revision, which is after the renew started,
// so the old holder has stopped ttl_ms - step_down_ms = 2 * renew_ms before a
// follower can take over (assuming both clocks run at about the same rate).
// leading() reads the clock itself: a lease thread stuck in a NATS call cannot
// keep leading() true.
//
// Ownership: owns its own NATS connection (a Bus: renewals never queue behind
// the service's publishes) and one thread that connects (retrying), acquires
// and renews. Threading: leading(), holder() from any thread; on_change runs
// on the lease thread; the destructor from the thread that started it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "folio/bus/bus.h"
#include "folio/core/status.h"

namespace folio::bus {

struct LeaseOptions {
  std::string bucket = "folio_lease";  // KV bucket, [-_a-zA-Z0-9]+
  std::string key = "leader";          // the lease's key in it
  std::string holder;                  // this process's id (required, non-empty; unique among live processes)
  int replicas = 1;                    // of the bucket when this process creates it; 1..5
  int64_t ttl_ms = 10'000;             // unchanged this long -> followers take over
  int64_t renew_ms = 2'000;            // renew (holder) / check (follower) every this long
};

class KvLease {
 public:
  // What changed: leading now (true) or not; holder = who holds it ("" unknown
  // or free). Called on the lease thread; must not block long.
  using OnChange = std::function<void(bool leading, const std::string& holder)>;

  // Starts the lease thread; it connects with bus_options (retrying every
  // renew_ms while NATS is away) and tries to acquire at once.
  // kInvalidArgument if holder is empty, the bucket or key name is invalid,
  // replicas is outside 1..5, or ttl_ms < 3 * renew_ms or renew_ms < 50.
  static Result<std::unique_ptr<KvLease>> Start(const BusOptions& bus_options, LeaseOptions options,
                                                OnChange on_change);
  // Stops the thread; while leading, releases the lease first (one attempt).
  ~KvLease();

  // True while this process holds the lease and is inside its safe window
  // (see above). Any thread; one clock read.
  bool leading() const;
  // The holder last seen: this process's id while leading, another's, or ""
  // if unknown (not connected yet) or free. Any thread.
  std::string holder() const;
  const LeaseOptions& options() const;

  struct Impl;

 private:
  explicit KvLease(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace folio::bus
