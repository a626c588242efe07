#include "folio/metrics/disk.h"

#include <cmath>
#include <utility>

#include "folio/core/disk_space.h"
#include "folio/core/log.h"

namespace folio::metrics {

DiskGauges::DiskGauges(Registry* registry, std::string dir, int64_t interval_ms) : dir_(std::move(dir)) {
  Refresh();  // the gauges are there from the first scrape
  auto read = [](const std::atomic<double>& v) {
    double x = v.load(std::memory_order_relaxed);
    return x < 0 ? std::nan("") : x;
  };
  registry->AddScrapedGauge("folio_disk_size_bytes", "Size of the file system holding the data directory (--data)",
                            [this, read] { return read(size_); });
  registry->AddScrapedGauge("folio_disk_free_bytes",
                            "Bytes still writable by the service on the file system holding the data directory"
                            " (statvfs f_bavail)",
                            [this, read] { return read(free_); });
  refresher_ = std::make_unique<Refresher>(interval_ms, [this] {
    Refresh();
    return true;  // a missing directory is not retried sooner
  });
}

void DiskGauges::Refresh() {
  Result<DiskUsage> u = DiskUsageOf(dir_);
  if (!u.ok()) {
    size_.store(-1);
    free_.store(-1);
    if (!failing_) {
      log::Warn("cannot read the data disk's free space", {{"dir", dir_}, {"error", u.status().message()}});
    }
    failing_ = true;
    return;
  }
  failing_ = false;
  size_.store(static_cast<double>(u->size_bytes));
  free_.store(static_cast<double>(u->available_bytes));
}

}  // namespace folio::metrics
