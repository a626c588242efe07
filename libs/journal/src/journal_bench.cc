// journal-bench: numbers behind the journal's design choices (not a test).
//
//   journal-bench [--quick] [--sync] [--dir DIR]
//
// --sync: raw 4 KiB write+sync variants (the choice documented in
// group_commit.cc). Otherwise: CRC-32C throughput, Put latency of a lone
// writer, group commit with 1..16 threads, write amplification by blob size,
// verified read throughput, open time from a checkpoint vs a full scan.
// DIR defaults to $TMPDIR or /tmp (put it on the disk you care about).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "folio/core/log.h"
#include "folio/journal/crc32c.h"
#include "folio/journal/journal.h"

using namespace folio;
using namespace folio::journal;
using Clock = std::chrono::steady_clock;

namespace {

double Since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

std::string Bytes(size_t n, uint64_t seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((seed + i) * 2654435761u >> 13);
  return s;
}

struct Percentiles {
  double p50, p99;
};

Percentiles Pct(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v[v.size() * 99 / 100]};
}

std::unique_ptr<Journal> Open(const std::string& dir, Options o = {}) {
  o.background = false;
  Result<std::unique_ptr<Journal>> j = Journal::Open(dir, o);
  if (!j.ok()) {
    std::fprintf(stderr, "open: %s\n", j.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(j).value();
}

void Check(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    std::exit(1);
  }
}

void SyncVariants(const std::string& dir, int n) {
  std::printf("## 4 KiB write + sync, %d each\n", n);
  const std::string buf(4096, 'x'), path = dir + "/sync-bench";
  struct Variant {
    const char* name;
    bool o_append, fsync_not_data, fallocate, prezero;
  };
  for (const Variant& v : {Variant{"append pwrite@offset + fdatasync", false, false, false, false},
                           Variant{"append O_APPEND write + fdatasync", true, false, false, false},
                           Variant{"append pwrite@offset + fsync", false, true, false, false},
                           Variant{"fallocate'd + pwrite + fdatasync", false, false, true, false},
                           Variant{"pre-zeroed + pwrite + fdatasync", false, false, false, true}}) {
    unlink(path.c_str());
    int fd = open(path.c_str(), O_RDWR | O_CREAT | (v.o_append ? O_APPEND : 0), 0644);
    if (fd < 0) return;
    const off_t span = static_cast<off_t>(n) * 4096;
    if (v.fallocate && fallocate(fd, 0, 0, span) != 0) std::perror("fallocate");
    if (v.prezero) {
      std::string zeros(1 << 20, '\0');
      for (off_t at = 0; at < span; at += static_cast<off_t>(zeros.size())) {
        if (pwrite(fd, zeros.data(), zeros.size(), at) < 0) std::perror("pwrite");
      }
    }
    if (v.fallocate || v.prezero) fsync(fd);
    std::vector<double> us;
    for (int i = 0; i < n; ++i) {
      auto t0 = Clock::now();
      ssize_t w = v.o_append ? write(fd, buf.data(), buf.size()) : pwrite(fd, buf.data(), buf.size(), i * 4096);
      if (w != 4096) std::perror("write");
      if (v.fsync_not_data) {
        fsync(fd);
      } else {
        fdatasync(fd);
      }
      us.push_back(Since(t0));
    }
    close(fd);
    unlink(path.c_str());
    Percentiles p = Pct(us);
    std::printf("%-38s p50 %6.0f us  p99 %6.0f us\n", v.name, p.p50, p.p99);
  }
}

void CrcSpeed() {
  std::string data = Bytes(8 << 20, 1);
  auto run = [&](const char* name, uint32_t (*f)(uint32_t, const void*, size_t)) {
    auto t0 = Clock::now();
    uint32_t crc = 0;
    for (int i = 0; i < 16; ++i) crc += f(0, data.data(), data.size());
    double mbps = 16.0 * data.size() / Since(t0);
    std::printf("crc32c %-9s %7.0f MB/s (%08x)\n", name, mbps, crc);
  };
  run("portable", crc32c::ExtendPortable);
  if (crc32c::HardwareAvailable()) run("sse4.2", crc32c::ExtendHardware);
}

void LoneWriter(const std::string& base, int n) {
  std::printf("## lone writer: Put latency (one fdatasync each)\n");
  for (size_t size : {size_t{4096}, size_t{64} << 10, size_t{1} << 20}) {
    std::string dir = base + "/lone-" + std::to_string(size);
    auto j = Open(dir);
    std::string data = Bytes(size, 7);
    std::vector<double> us;
    uint64_t f0 = j->stats().fsyncs;
    for (int i = 0; i < n; ++i) {
      auto t0 = Clock::now();
      Check(j->Put("k" + std::to_string(i), "", data));
      us.push_back(Since(t0));
    }
    Percentiles p = Pct(us);
    std::printf("Put %8zu B: p50 %6.0f us  p99 %6.0f us  fsyncs/put %.2f\n", size, p.p50, p.p99,
                static_cast<double>(j->stats().fsyncs - f0) / n);
    j.reset();
    std::filesystem::remove_all(dir);
  }
}

void GroupCommit(const std::string& base, int per_thread) {
  std::printf("## group commit: 4 KiB puts\n");
  for (int threads : {1, 2, 4, 8, 16}) {
    std::string dir = base + "/group-" + std::to_string(threads);
    auto j = Open(dir);
    std::string data = Bytes(4096, 3);
    Stats s0 = j->stats();
    auto t0 = Clock::now();
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) {
      ts.emplace_back([&, t] {
        for (int i = 0; i < per_thread; ++i) Check(j->Put(std::to_string(t) + "/" + std::to_string(i), "", data));
      });
    }
    for (std::thread& t : ts) t.join();
    double secs = Since(t0) / 1e6;
    Stats s1 = j->stats();
    int puts = threads * per_thread;
    std::printf("%2d threads: %7.0f puts/s, %5llu fdatasyncs for %d puts (%.1f puts/sync)\n", threads, puts / secs,
                static_cast<unsigned long long>(s1.fsyncs - s0.fsyncs), puts,
                static_cast<double>(puts) / static_cast<double>(s1.fsyncs - s0.fsyncs));
    j.reset();
    std::filesystem::remove_all(dir);
  }
}

void Amplification(const std::string& base, uint64_t total) {
  std::printf("## write amplification (64-char keys, checkpoint included)\n");
  for (size_t size : {size_t{4} << 10, size_t{16} << 10, size_t{64} << 10, size_t{1} << 20, size_t{10} << 20}) {
    std::string dir = base + "/wa-" + std::to_string(size);
    auto j = Open(dir);
    std::string data = Bytes(size, 5);
    for (uint64_t i = 0; i * size < total; ++i) {
      char key[80];
      std::snprintf(key, sizeof key, "%064llu", static_cast<unsigned long long>(i));
      Check(j->Put(key, "application/octet-stream", data));
    }
    Check(j->Checkpoint());
    Stats s = j->stats();
    std::printf("blob %8zu B: %.4f (written %llu, blobs %llu, checkpoint %llu)\n", size, s.write_amplification(),
                static_cast<unsigned long long>(s.bytes_written), static_cast<unsigned long long>(s.blob_bytes),
                static_cast<unsigned long long>(s.checkpoint_bytes));
    j.reset();
    std::filesystem::remove_all(dir);
  }
}

void ReadsAndOpen(const std::string& base, int blobs) {
  std::printf("## reads and recovery\n");
  std::string dir = base + "/reads";
  {
    auto j = Open(dir);
    Check(j->Put("big", "", Bytes(64 << 20, 9)));
    std::string out;
    auto t0 = Clock::now();
    Result<BlobReader> r = j->Get("big");
    Check(r.status());
    for (uint64_t at = 0; at < r->size(); at += 1 << 20) Check(r->ReadAt(at, 1 << 20, &out));
    std::printf("ReadAt 1 MiB pieces, CRC-verified (page cache): %.0f MB/s\n", 64.0 * (1 << 20) / Since(t0));
    std::string small = Bytes(4096, 2);
    for (int i = 0; i < blobs; ++i) Check(j->Put("s" + std::to_string(i), "", small));
  }
  auto t0 = Clock::now();
  auto j = Open(dir);
  std::printf("open with checkpoint, %d blobs: %.1f ms (scanned %llu B)\n", blobs + 1, Since(t0) / 1000,
              static_cast<unsigned long long>(j->stats().scanned_bytes));
  j.reset();
  std::filesystem::remove(dir + "/CHECKPOINT");
  t0 = Clock::now();
  j = Open(dir);
  std::printf("open by full scan,     %d blobs: %.1f ms (scanned %llu B)\n", blobs + 1, Since(t0) / 1000,
              static_cast<unsigned long long>(j->stats().scanned_bytes));
  j.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, sync_only = false;
  const char* tmp = std::getenv("TMPDIR");
  std::string dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick") {
      quick = true;
    } else if (a == "--sync") {
      sync_only = true;
    } else if (a == "--dir" && i + 1 < argc) {
      dir = argv[++i];
    } else {
      std::fprintf(stderr, "usage: journal-bench [--quick] [--sync] [--dir DIR]\n");
      return 2;
    }
  }
  log::Configure(log::Level::kWarn, log::Format::kText);
  std::string base = dir + "/journal-bench-" + std::to_string(getpid());
  std::filesystem::create_directories(base);
  SyncVariants(base, quick ? 200 : 1000);
  if (!sync_only) {
    CrcSpeed();
    LoneWriter(base, quick ? 100 : 500);
    GroupCommit(base, quick ? 50 : 200);
    Amplification(base, quick ? (16u << 20) : (64u << 20));
    ReadsAndOpen(base, quick ? 2000 : 20000);
  }
  std::filesystem::remove_all(base);
  return 0;
}
