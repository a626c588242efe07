// push-bench: reproduces the anchor's import/sync benchmark against a real
// nats-server, folio-ingest and folio-edge, the services pinned to one core.
//
//   push-bench [--sizes 10,100,1000,10000] [--cpu 0] [--csv FILE]
//   push-bench --growth N [--reps 3] [--bound 2] [--cpu 0]
//
// For each N: notes bench/note_{i}.md (~400 bytes: frontmatter title, H1,
// "Revision R.", a paragraph with [[bench/note_0]], a three-item list, a
// small js fence, a closing paragraph). Scenarios: all N in one push (first
// import); one note changed (median of 3); N/10 changed in one push (median
// of 3); then RSS of ingest and edge. Each push is timed from request to
// response (committed and acknowledged by JetStream) and to the moment the
// edge serves the last changed page.
//
// --growth N: the guard that an import's per-note cost does not grow with the
// vault (growth_check.cc): imports N notes, and 10*N notes in ten pushes of N,
// and exits 1 when a cost per note at 10*N exceeds --bound times that at N.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "bench_notes.h"
#include "growth_check.h"
#include "cluster.h"
#include "folio/core/json.h"
#include "json_util.h"

using namespace folio;
using Clock = std::chrono::steady_clock;

using folio::bench::Body;
using folio::bench::Note;

namespace {

// The phases_ms of the last push ingest logged ("" if none).
std::string LastPhases(const std::string& log_path) {
  std::ifstream in(log_path);
  std::string line, last;
  while (std::getline(in, line)) {
    size_t at = line.find("phases_ms=\"");
    if (at == std::string::npos) continue;
    at += 11;
    last = line.substr(at, line.find('"', at) - at);
  }
  return last;
}

// "messages M, bytes B" of a stream from the server's /jsz.
std::string StreamSize(it::Cluster& c, const std::string& stream) {
  std::string jsz = c.nats().Monitor("/jsz?accounts=true&streams=true");
  size_t at = jsz.find("\"" + stream + "\"");
  if (at == std::string::npos) return "?";
  auto field = [&](const std::string& key) {
    size_t k = jsz.find("\"" + key + "\":", at);
    if (k == std::string::npos) return std::string("?");
    k = jsz.find_first_not_of(' ', k + key.size() + 3);
    return jsz.substr(k, jsz.find_first_of(",}\n", k) - k);
  };
  return field("messages") + " msgs, " + field("bytes") + " bytes";
}

long RssKb(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Timing {
  double push_ms;     // request to response
  double visible_ms;  // request to the edge serving the new revision
};

Timing TimedPush(it::Cluster& c, const std::vector<int>& ids, int rev) {
  std::string body = Body(ids, rev);
  auto t0 = Clock::now();
  auto r = c.Push(body);
  auto t1 = Clock::now();
  if (r.status != 200) {
    fprintf(stderr, "push failed: %d %s\n", r.status, r.body.c_str());
    exit(1);
  }
  std::string needle = "Revision " + std::to_string(rev) + ".";
  // URL rule: "_" becomes "-" (bench/note_7.md -> /bench/note-7).
  auto page = c.WaitForPage("/bench/note-" + std::to_string(ids.back()), 200, needle, 60000);
  if (page.body.find(needle) == std::string::npos) {
    fprintf(stderr, "edge never showed %s\n", needle.c_str());
    exit(1);
  }
  auto t2 = Clock::now();
  auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  return {ms(t1 - t0), ms(t2 - t0)};
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  std::vector<int> sizes = {10, 100, 1000, 10000};
  std::string cpu = "0";
  std::string csv = "loadtest/results/push-bench.csv";
  std::string commit = "unknown";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--growth") return folio::bench::GrowthCheck(argc, argv);
  }
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--sizes") {
      sizes.clear();
      std::stringstream ss(argv[i + 1]);
      for (std::string t; std::getline(ss, t, ',');) sizes.push_back(std::stoi(t));
    } else if (a == "--cpu") {
      cpu = argv[i + 1];
    } else if (a == "--csv") {
      csv = argv[i + 1];
    } else if (a == "--commit") {
      commit = argv[i + 1];
    }
  }
  setenv("FOLIO_PIN_CPU", cpu.c_str(), 1);
  // Appends: one row per size, stamped with the day and the commit measured.
  const bool fresh = !std::filesystem::exists(csv) || std::filesystem::file_size(csv) == 0;
  std::ofstream out(csv, std::ios::app);
  char day[16];
  const time_t now = time(nullptr);
  strftime(day, sizeof day, "%Y-%m-%d", gmtime(&now));
  if (fresh) out << "date,commit,notes,first_import_ms,first_import_visible_ms,one_changed_ms,one_changed_visible_ms,"
         "tenth_changed_ms,tenth_changed_visible_ms,ingest_rss_mb,edge_rss_mb\n";
  printf("%8s %14s %14s %14s %14s %14s %14s %10s %10s\n", "notes", "import ms", "(visible)", "1 changed",
         "(visible)", "N/10 changed", "(visible)", "ingest MB", "edge MB");
  for (int n : sizes) {
    it::Cluster c;
    std::vector<int> all(n);
    for (int i = 0; i < n; ++i) all[i] = i;
    const pid_t pids[3] = {c.nats().pid(), c.ingest_pid(), c.edge_pid()};
    double cpu0[3];
    for (int k = 0; k < 3; ++k) cpu0[k] = folio::bench::ProcessCpuMs(pids[k]);
    Timing first = TimedPush(c, all, 1);
    // The edge may still apply what follows the last note (listings).
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    double cpu[3];
    for (int k = 0; k < 3; ++k) cpu[k] = folio::bench::ProcessCpuMs(pids[k]) - cpu0[k];
    printf("import of %d: CPU ms nats-server %.0f, ingest %.0f, edge %.0f; ingest phases_ms: %s\n", n, cpu[0], cpu[1],
           cpu[2], LastPhases(c.dir() + "/ingest.log").c_str());
    printf("streams after import: KV_pages %s; notes %s\n", StreamSize(c, "KV_pages").c_str(),
           StreamSize(c, "notes").c_str());
    std::vector<double> one_p, one_v, tenth_p, tenth_v;
    int rev = 2;
    for (int k = 0; k < 3; ++k, ++rev) {
      Timing t = TimedPush(c, {0}, rev);
      one_p.push_back(t.push_ms);
      one_v.push_back(t.visible_ms);
    }
    printf("1 changed (last of 3): ingest phases_ms: %s\n", LastPhases(c.dir() + "/ingest.log").c_str());
    for (int k = 0; k < 3; ++k, ++rev) {
      std::vector<int> ids;
      for (int i = 1; i <= std::max(1, n / 10); ++i) ids.push_back(i + (k * 7) % std::max(1, n - n / 10));
      std::sort(ids.begin(), ids.end());
      ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
      Timing t = TimedPush(c, ids, rev);
      tenth_p.push_back(t.push_ms);
      tenth_v.push_back(t.visible_ms);
    }
    printf("N/10 changed (last of 3): ingest phases_ms: %s\n", LastPhases(c.dir() + "/ingest.log").c_str());
    double ingest_mb = RssKb(c.ingest_pid()) / 1024.0, edge_mb = RssKb(c.edge_pid()) / 1024.0;
    printf("%8d %14.1f %14.1f %14.1f %14.1f %14.1f %14.1f %10.1f %10.1f\n", n, first.push_ms, first.visible_ms,
           Median(one_p), Median(one_v), Median(tenth_p), Median(tenth_v), ingest_mb, edge_mb);
    fflush(stdout);
    out << day << "," << commit << "," << n << "," << first.push_ms << "," << first.visible_ms << "," << Median(one_p) << "," << Median(one_v)
        << "," << Median(tenth_p) << "," << Median(tenth_v) << "," << ingest_mb << "," << edge_mb << "\n";
  }
  printf("anchor (trip2g, N=10000, one core): import 13770 ms, one changed 382 ms, N/10 changed 2303 ms, RSS 1050 MB\n");
  printf("csv: %s\n", csv.c_str());
  return 0;
}
