// watch-bench: the author's loop, save -> page served, with `folio watch`
// running against a real nats-server, folio-ingest and folio-edge (the
// services pinned to one core; the driver and `folio watch` run where the
// driver runs, e.g. `taskset -c 1`).
//
//   watch-bench [--notes 10000] [--saves 100] [--gap-ms 200] [--debounce 50ms] [--cpu 0]
//
// The vault holds N notes bench/note_{i}.md of push-bench's shape. After
// `folio watch` has pushed it (and says "watching"), note_0 is saved
// --saves times, --gap-ms apart (one plain write of the whole file, as
// Obsidian does); each save is timed from just before the write to the
// first response of the edge whose body has the new revision and whose
// ETag differs from the previous one (the edge is polled every 1 ms).
// Prints p50/p99/max and the debounce; exits 1 if a save never shows.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_notes.h"
#include "cluster.h"
#include "folio/http/client.h"
#include "folio/testing/testing.h"

using namespace folio;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

using folio::bench::Note;

namespace {

void Write(const fs::path& file, const std::string& text) { std::ofstream(file, std::ios::binary) << text; }

bool LogHas(const fs::path& log, const std::string& needle) {
  std::ifstream in(log);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return all.find(needle) != std::string::npos;
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  int notes = 10000, saves = 100, gap_ms = 200;
  std::string debounce = "50ms", cpu = "0";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--notes") notes = std::stoi(v);
    else if (a == "--saves") saves = std::stoi(v);
    else if (a == "--gap-ms") gap_ms = std::stoi(v);
    else if (a == "--debounce") debounce = v;
    else if (a == "--cpu") cpu = v;
  }
  setenv("FOLIO_PIN_CPU", cpu.c_str(), 1);
  it::Cluster c;
  fs::path vault = fs::path(c.dir()) / "vault", log = fs::path(c.dir()) / "watch.log";
  fs::create_directories(vault / "bench");
  for (int i = 0; i < notes; ++i) Write(vault / "bench" / ("note_" + std::to_string(i) + ".md"), Note(i, 1));
  auto t_start = Clock::now();
  // Not pinned: folio watch is the author's process, beside the driver.
  testing::Process watch({testing::BinPath("folio"), "watch", vault.string(), "--server", c.ingest_url(), "--token",
                          it::kToken, "--debounce", debounce},
                         {}, log.string());
  while (!LogHas(log, "folio: watching")) {
    if (!watch.Running() || Clock::now() - t_start > std::chrono::minutes(5)) {
      fprintf(stderr, "folio watch did not start:\n%s\n", c.Logs().c_str());
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
  printf("vault of %d notes pushed by folio watch in %.0f ms\n", notes, ms(Clock::now() - t_start));
  const std::string url = c.edge_url() + "/bench/note-0";
  std::string etag;
  if (auto r = http::Get(url); r.ok()) etag = r->Header("ETag");
  std::vector<double> took;
  for (int s = 0; s < saves; ++s) {
    int rev = s + 2;
    std::string needle = "Revision " + std::to_string(rev) + ".";
    std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
    auto t0 = Clock::now();
    Write(vault / "bench" / "note_0.md", Note(0, rev));
    for (;;) {
      auto r = http::Get(url);
      if (r.ok() && r->status == 200 && r->Header("ETag") != etag && r->body.find(needle) != std::string::npos) {
        took.push_back(ms(Clock::now() - t0));
        etag = r->Header("ETag");
        break;
      }
      if (Clock::now() - t0 > std::chrono::seconds(30)) {
        fprintf(stderr, "save %d never showed on the edge\n%s\n", s, c.Logs().c_str());
        return 1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  printf("%d saves of one note in a %d-note vault, %d ms apart, debounce %s: save -> edge serves it: "
         "p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
         saves, notes, gap_ms, debounce.c_str(), Percentile(took, 0.5), Percentile(took, 0.99),
         *std::max_element(took.begin(), took.end()));
  // The watcher's own figure per push: walk + manifest delta + push reply.
  std::ifstream in(log);
  std::vector<double> push_ms;
  for (std::string line; std::getline(in, line);) {
    size_t open = line.rfind(" ("), close = line.find(" ms)");
    if (line.starts_with("folio: pushed ") && open != std::string::npos && close != std::string::npos) {
      push_ms.push_back(std::stod(line.substr(open + 2, close - open - 2)));
    }
  }
  if (push_ms.size() > 1) {
    push_ms.erase(push_ms.begin());  // the initial push
    printf("folio watch's own time per push (read, hash, request, reply): p50 %.0f ms, p99 %.0f ms\n",
           Percentile(push_ms, 0.5), Percentile(push_ms, 0.99));
  }
  return 0;
}
