// push-bench --growth (growth_check.h).
#include "growth_check.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_notes.h"
#include "cluster.h"

namespace folio::bench {
namespace {

// What one import cost, in total: ingest's CPU ms and each phase's ms, in
// wall time ("apply") and in the writer thread's CPU time ("cpu:apply"),
// summed over the log lines of its pushes.
struct Cost {
  double cpu_ms = 0;
  std::map<std::string, double> phases;
};

// Adds the phases of every push line of ingest's log to *out: `field`
// ("phases_ms" or "phases_cpu_ms"), each phase named `prefix` + its name.
void AddPhases(const std::string& log_path, const std::string& field, const std::string& prefix,
               std::map<std::string, double>* out) {
  std::ifstream in(log_path);
  const std::string key = " " + field + "=\"";
  for (std::string line; std::getline(in, line);) {
    size_t at = line.find(key);
    if (at == std::string::npos) continue;
    at += key.size();
    std::stringstream ss(line.substr(at, line.find('"', at) - at));
    for (std::string kv; ss >> kv;) {
      size_t eq = kv.find('=');
      if (eq != std::string::npos) (*out)[prefix + kv.substr(0, eq)] += std::atof(kv.c_str() + eq + 1);
    }
  }
}

// `notes` notes imported into a fresh cluster in pushes of `batch`.
Cost Import(int notes, int batch) {
  it::Cluster c;
  const double cpu0 = ProcessCpuMs(c.ingest_pid());
  for (int from = 0; from < notes; from += batch) {
    std::vector<int> ids;
    for (int i = from; i < std::min(notes, from + batch); ++i) ids.push_back(i);
    auto r = c.Push(Body(ids, 1));
    if (r.status != 200) {
      fprintf(stderr, "push failed: %d %s\n", r.status, r.body.c_str());
      exit(2);
    }
  }
  // The writer's work after the last reply (the heap hand-back) counts too.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Cost cost;
  cost.cpu_ms = ProcessCpuMs(c.ingest_pid()) - cpu0;
  AddPhases(c.dir() + "/ingest.log", "phases_ms", "", &cost.phases);
  AddPhases(c.dir() + "/ingest.log", "phases_cpu_ms", "cpu:", &cost.phases);
  return cost;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace

double ProcessCpuMs(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::stringstream ss(stat.substr(close + 2));
  std::string f;
  double utime = 0, stime = 0;
  for (int field = 3; ss >> f; ++field) {  // fields 14 and 15: utime, stime
    if (field == 14) utime = std::stod(f);
    if (field == 15) {
      stime = std::stod(f);
      break;
    }
  }
  return (utime + stime) * 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
}

int GrowthCheck(int argc, char** argv) {
  int n = 2000, reps = 3;
  double bound = 2.0;
  std::string cpu = "0";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--growth") n = std::atoi(argv[i + 1]);
    if (a == "--reps") reps = std::atoi(argv[i + 1]);
    if (a == "--bound") bound = std::atof(argv[i + 1]);
    if (a == "--cpu") cpu = argv[i + 1];
  }
  if (!cpu.empty()) setenv("FOLIO_PIN_CPU", cpu.c_str(), 1);
  // Per size, per figure ("cpu" and each phase): the per-note µs of each rep.
  std::map<int, std::map<std::string, std::vector<double>>> per_note;
  std::map<int, std::map<std::string, std::vector<double>>> totals;
  for (int r = 0; r < reps; ++r) {
    for (int size : {n, 10 * n}) {  // alternating, so a noisy spell hits both
      Cost c = Import(size, n);
      per_note[size]["cpu"].push_back(c.cpu_ms * 1000 / size);
      totals[size]["cpu"].push_back(c.cpu_ms);
      for (const auto& [k, ms] : c.phases) {
        per_note[size][k].push_back(ms * 1000 / size);
        totals[size][k].push_back(ms);
      }
      printf("rep %d, %d notes: ingest CPU %.0f ms\n", r + 1, size, c.cpu_ms);
    }
  }
  // Asserted: ingest's CPU (the whole import) and the writer's CPU in the
  // phases that write the model and the store. The others are printed.
  const std::vector<std::string> asserted = {"cpu", "cpu:apply", "cpu:commit"};
  printf("%-14s %14s %14s %8s\n", "per note", (std::to_string(n) + " µs").c_str(),
         (std::to_string(10 * n) + " µs").c_str(), "ratio");
  bool ok = true;
  for (const auto& [k, small] : per_note[n]) {
    const double a = Median(small), b = Median(per_note[10 * n][k]);
    // A phase too small to measure at N (under 20 ms for the import) is not judged.
    const bool measurable = Median(totals[n][k]) >= 20;
    const double ratio = a > 0 ? b / a : 0;
    const bool checked = measurable && std::find(asserted.begin(), asserted.end(), k) != asserted.end();
    const bool fail = checked && ratio > bound;
    ok = ok && !fail;
    printf("%-14s %14.1f %14.1f %8.2f%s\n", k.c_str(), a, b, ratio,
           fail ? "  FAIL" : checked ? "  (asserted)" : measurable ? "" : "  (too small to measure)");
  }
  printf("growth check (bound %.2f, medians of %d): %s\n", bound, reps, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace folio::bench
