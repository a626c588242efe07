// DiskGauges: the file system holding a service's data directory on its
// /metrics, so that an alert warns while there is still room, before writes
// fail (the services' *_disk_full gauges only say that they already did):
//   folio_disk_size_bytes   (gauge: the file system's size)
//   folio_disk_free_bytes   (gauge: what an unprivileged process may still
//                            write, statvfs f_bavail, as `df` shows "Avail")
// refreshed every interval by a statvfs (core's DiskUsageOf) on a Refresher
// thread, never on an event loop. The first refresh happens in the
// constructor, so the gauges are there from the first scrape. While statvfs
// fails (the directory is gone) nothing is exported, rather than a 0 that
// would read as a full disk; the failure is logged once.
//
// Ownership: borrows the registry, which must outlive this object; owns its
// thread (stopped by the destructor). Threading: construct and destroy on
// one thread; the gauges are read by any scrape.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "folio/metrics/metrics.h"
#include "folio/metrics/refresher.h"

namespace folio::metrics {

class DiskGauges {
 public:
  static constexpr int64_t kDefaultIntervalMs = 15'000;  // Prometheus' usual scrape interval
  DiskGauges(Registry* registry, std::string dir, int64_t interval_ms = kDefaultIntervalMs);
  DiskGauges(const DiskGauges&) = delete;
  DiskGauges& operator=(const DiskGauges&) = delete;

 private:
  void Refresh();

  const std::string dir_;
  // Bytes, or -1 while unknown: read by the scraped gauges.
  std::atomic<double> size_{-1}, free_{-1};
  bool failing_ = false;  // the refresher's thread only: log a failure once
  std::unique_ptr<Refresher> refresher_;
};

}  // namespace folio::metrics
