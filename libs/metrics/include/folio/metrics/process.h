// ProcessCollector: the standard process_* metrics of a Prometheus client,
// which prometheus-cpp lacks, read from /proc/self at scrape time:
//   process_resident_memory_bytes, process_virtual_memory_bytes (gauges),
//   process_cpu_seconds_total (counter: user + system),
//   process_open_fds, process_max_fds (gauges; the soft RLIMIT_NOFILE),
//   process_start_time_seconds (gauge: Unix time the process started),
//   folio_memory_limit_bytes (gauge: the cgroup's memory limit, v2
//   memory.max or v1 memory.limit_in_bytes, at most /proc/meminfo's
//   MemTotal; the machine's memory when the cgroup sets none), so alerts
//   compare process_resident_memory_bytes with what the OOM killer allows.
// Every Registry includes it (metrics.h), so every service exports them.
//
// Threading: Collect() may run on any thread, concurrently; it reads a few
// small /proc files (microseconds) and allocates only its result. A value
// that cannot be read is left out of the result (never reported as 0).
#pragma once

#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

namespace folio::metrics {

class ProcessCollector final : public prometheus::Collectable {
 public:
  ProcessCollector();
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  double start_time_seconds_ = 0;  // 0: unknown (then not exported)
};

}  // namespace folio::metrics
