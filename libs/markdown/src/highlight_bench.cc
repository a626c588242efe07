// highlight-bench: the cost of highlighting push-bench's fence (a two-line
// js snippet, different in every note) and of rendering the whole note; and
// a check that FastRules colour real source trees as Source-highlight does.
//
//   highlight-bench [N [fast]]                time N notes (default 10000);
//                                             "fast": FastRules only
//   highlight-bench --compare LANG FILE...    FastRules vs the library's own
//                                             rules on each file; exit 1 on
//                                             any difference
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "folio/markdown/render.h"
#include "highlight.h"

// CPU time of this thread: the machine may be shared, wall time is noisier.
struct Clock {
  using time_point = std::chrono::nanoseconds;
  static time_point now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
  }
};
using folio::markdown::HighlightCodeWithRules;

namespace {

double UsPer(Clock::time_point t0, int n) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / n;
}

int Compare(const char* lang, int nfiles, char** files) {
  int differ = 0, same = 0;
  for (int i = 0; i < nfiles; ++i) {
    std::ifstream in(files[i], std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string code = ss.str();
    if (code.size() > folio::markdown::kMaxHighlightBytes) continue;
    auto fast = HighlightCodeWithRules(lang, code, true);
    auto plain = HighlightCodeWithRules(lang, code, false);
    if (fast != plain) {
      ++differ;
      fprintf(stderr, "DIFFERENT: %s\n", files[i]);
    } else {
      ++same;
    }
  }
  printf("%s: %d files identical, %d different\n", lang, same, differ);
  return differ == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && std::strcmp(argv[1], "--compare") == 0) return Compare(argv[2], argc - 3, argv + 3);
  int n = argc > 1 ? std::atoi(argv[1]) : 10000;
  if (n <= 0) n = 10000;
  std::vector<std::string> codes, notes;
  for (int i = 0; i < n; ++i) {
    std::string code = "const x = " + std::to_string(i) + ";\nconsole.log(x * 2);\n";
    notes.push_back("---\ntitle: Bench note " + std::to_string(i) + "\n---\n# Bench note " + std::to_string(i) +
                    "\n\nRevision 1.\n\nThis note links to [[bench/note_0]] and carries a little text so that it "
                    "looks like a real note.\n\n- first item\n- second item\n- third item\n\n```js\n" + code +
                    "```\n\nA closing paragraph with a few more words.\n");
    codes.push_back(std::move(code));
  }
  size_t bytes = 0;
  double us[2] = {0, 0};
  const bool fast_only = argc > 2 && std::strcmp(argv[2], "fast") == 0;  // for profiling FastRules alone
  for (bool fast : {false, true}) {
    if (fast_only && !fast) continue;
    bytes += HighlightCodeWithRules("js", "warm up;\n", fast).value_or("").size();  // loads the definition
    auto t0 = Clock::now();
    for (const std::string& c : codes) bytes += HighlightCodeWithRules("js", c, fast).value_or("").size();
    us[fast ? 1 : 0] = UsPer(t0, n);
  }
  // HighlightCode: FastRules plus the cache (each fence new to it).
  auto t_cached = Clock::now();
  for (const std::string& c : codes) bytes += folio::markdown::HighlightCode("js", c + "x;\n").value_or("").size();
  const double cached_us = UsPer(t_cached, n);
  // RenderNote: the fence in an unknown language (no highlighting), then
  // highlighted (each fence new to the cache), then again (cache hits).
  double render_us[3];
  for (int pass = 0; pass < 3; ++pass) {
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) {
      std::string note = notes[i];
      if (pass == 0) note.replace(note.find("```js"), 5, "```zz");
      bytes += folio::markdown::RenderNote(note, "bench/note.md", {}).html.size();
    }
    render_us[pass] = UsPer(t0, n);
  }
  printf("notes %d: highlight %.2f us (Source-highlight's rules), %.2f us (FastRules and line cache), %.2f us (the same through the fence cache, all misses); RenderNote %.2f us "
         "plain, %.2f us highlighted, %.2f us from the cache (%zu bytes out)\n",
         n, us[0], us[1], cached_us, render_us[0], render_us[1], render_us[2], bytes);
  return 0;
}
