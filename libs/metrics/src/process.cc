#include "folio/metrics/process.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace folio::metrics {

namespace {

// /proc/self/stat's fields from the 3rd (state) on: the 2nd, (comm), may
// hold spaces and parentheses, so the split starts after its last ')'.
struct Stat {
  double utime_ticks = 0, stime_ticks = 0, start_ticks = 0, vsize = 0, rss_pages = 0;
};

bool ReadSmallFile(const char* path, std::string* out) {
  FILE* f = fopen(path, "re");
  if (f == nullptr) return false;
  char buf[4096];
  size_t n;
  out->clear();
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0) out->append(buf, n);
  fclose(f);
  return !out->empty();
}

bool ReadStat(Stat* st) {
  std::string s;
  if (!ReadSmallFile("/proc/self/stat", &s)) return false;
  size_t close = s.rfind(')');
  if (close == std::string::npos) return false;
  const char* p = s.c_str() + close + 1;
  // Field numbers as in proc(5): 3 state ... 14 utime, 15 stime, 22
  // starttime, 23 vsize, 24 rss.
  for (int field = 3; field <= 24; ++field) {
    while (*p == ' ') ++p;
    if (*p == '\0') return false;
    char* end = nullptr;
    double v = field == 3 ? 0 : strtod(p, &end);
    if (field == 14) st->utime_ticks = v;
    if (field == 15) st->stime_ticks = v;
    if (field == 22) st->start_ticks = v;
    if (field == 23) st->vsize = v;
    if (field == 24) st->rss_pages = v;
    while (*p != ' ' && *p != '\0') ++p;
  }
  return true;
}

// Seconds since the epoch at boot ("btime" in /proc/stat), or 0.
double BootTime() {
  std::string s;
  if (!ReadSmallFile("/proc/stat", &s)) return 0;
  size_t at = s.find("\nbtime ");
  return at == std::string::npos ? 0 : strtod(s.c_str() + at + 7, nullptr);
}

// Open descriptors, not counting the one that lists them; -1 if unknown.
int OpenFds() {
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n - 1;
}

// The memory this process may use before the kernel's OOM killer ends it:
// its cgroup's limit (v2 memory.max, else v1 memory.limit_in_bytes; "max"
// or v1's huge "unlimited" value means none), capped by the machine's
// MemTotal. 0 if neither can be read.
double MemoryLimitBytes() {
  std::string s;
  double total = 0;
  if (ReadSmallFile("/proc/meminfo", &s)) {
    size_t at = s.find("MemTotal:");
    if (at != std::string::npos) total = strtod(s.c_str() + at + 9, nullptr) * 1024;  // in kB
  }
  double limit = 0;
  if (ReadSmallFile("/sys/fs/cgroup/memory.max", &s) ||
      ReadSmallFile("/sys/fs/cgroup/memory/memory.limit_in_bytes", &s)) {
    limit = s.rfind("max", 0) == 0 ? 0 : strtod(s.c_str(), nullptr);
  }
  if (limit <= 0 || (total > 0 && limit > total)) return total;
  return limit;
}

prometheus::MetricFamily One(const char* name, const char* help, prometheus::MetricType type, double v) {
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter) {
    m.counter.value = v;
  } else {
    m.gauge.value = v;
  }
  return prometheus::MetricFamily{name, help, type, {m}};
}

}  // namespace

ProcessCollector::ProcessCollector() {
  Stat st;
  long ticks = sysconf(_SC_CLK_TCK);
  double boot = BootTime();
  if (ReadStat(&st) && ticks > 0 && boot > 0) start_time_seconds_ = boot + st.start_ticks / static_cast<double>(ticks);
}

std::vector<prometheus::MetricFamily> ProcessCollector::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> out;
  Stat st;
  long ticks = sysconf(_SC_CLK_TCK);
  long page = sysconf(_SC_PAGESIZE);
  if (ReadStat(&st) && ticks > 0 && page > 0) {
    out.push_back(One("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                      MetricType::Counter, (st.utime_ticks + st.stime_ticks) / static_cast<double>(ticks)));
    out.push_back(One("process_resident_memory_bytes", "Resident memory size in bytes.", MetricType::Gauge,
                      st.rss_pages * static_cast<double>(page)));
    out.push_back(One("process_virtual_memory_bytes", "Virtual memory size in bytes.", MetricType::Gauge, st.vsize));
  }
  if (double limit = MemoryLimitBytes(); limit > 0) {
    out.push_back(One("folio_memory_limit_bytes",
                      "Memory the process may use: its cgroup's limit (memory.max), at most the machine's MemTotal",
                      MetricType::Gauge, limit));
  }
  if (int fds = OpenFds(); fds >= 0) {
    out.push_back(One("process_open_fds", "Number of open file descriptors.", MetricType::Gauge, fds));
  }
  if (rlimit rl{}; getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    double max = rl.rlim_cur == RLIM_INFINITY ? -1 : static_cast<double>(rl.rlim_cur);
    if (max >= 0) out.push_back(One("process_max_fds", "Maximum number of open file descriptors.", MetricType::Gauge, max));
  }
  if (start_time_seconds_ > 0) {
    out.push_back(One("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
                      MetricType::Gauge, start_time_seconds_));
  }
  return out;
}

}  // namespace folio::metrics
