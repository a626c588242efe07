// page-gzip-bench: the cost of a note page's gzip body, per page, as ingest
// builds it: push-bench's note rendered and laid out,
// then compressed by zlib (GzipCompressor) at levels 1, 4, 6 and 9 and by
// igzip (GzipAssembler, MakePageRecord's way) at levels 0 to 3. Thread CPU
// time; every output is inflated and checked.
//
//   page-gzip-bench [--pages N] [--note FILE.md] [--csv FILE --commit REV] | --dump FILE
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "folio/core/gzip.h"
#include "folio/markdown/render.h"
#include "folio/site/layout.h"

using namespace folio;

namespace {

double CpuUs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

std::string g_note;  // --note FILE: this markdown (numbered per page) instead of push-bench's

// As loadtest/push_bench.cc writes note i.
std::string Note(int i) {
  if (!g_note.empty()) return "# Note " + std::to_string(i) + "\n\n" + g_note;
  return "---\ntitle: Bench note " + std::to_string(i) + "\n---\n# Bench note " + std::to_string(i) +
         "\n\nRevision 0.\n\nThis note links to [[bench/note_0]] and carries a little text so that it looks "
         "like a real note.\n\n- first item\n- second item\n- third item\n\n```js\nconst x = " +
         std::to_string(i) + ";\nconsole.log(x * 2);\n```\n\nA closing paragraph with a few more words.\n";
}

struct Page {
  std::string html;
};

Page Build(int i) {
  markdown::RenderOptions opt;
  markdown::RenderResult r = markdown::RenderNote(Note(i), "bench/note_" + std::to_string(i) + ".md", opt);
  site::NotePage p;
  p.url = "/bench/note_" + std::to_string(i);
  p.title = r.title;
  p.body_html = r.html;
  p.description = r.text.substr(0, 160);
  p.updated = "2026-12-03";
  p.words = 40;
  p.breadcrumbs = {{"bench", "/bench", ""}};
  p.backlinks = {{"Bench note 0", "/bench/note_0", ""}};
  p.backlinks_total = 1;
  Page out;
  out.html = site::AssembleNotePage(p);
  return out;
}


}  // namespace

int main(int argc, char** argv) {
  int n = 2000;
  const char* csv = nullptr;
  std::string commit = "unknown";
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--pages") && i + 1 < argc) n = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv = argv[++i];
    else if (!strcmp(argv[i], "--commit") && i + 1 < argc) commit = argv[++i];
    else if (!strcmp(argv[i], "--note") && i + 1 < argc) {
      FILE* f = fopen(argv[++i], "r");
      if (!f) return 1;
      char buf[4096];
      size_t got;
      while ((got = fread(buf, 1, sizeof buf, f)) > 0) g_note.append(buf, got);
      fclose(f);
    }
    else if (!strcmp(argv[i], "--dump") && i + 1 < argc) {  // one page's HTML, to look at
      FILE* f = fopen(argv[++i], "w");
      if (!f) return 1;
      const std::string html = Build(1).html;
      fwrite(html.data(), 1, html.size(), f);
      fclose(f);
      return 0;
    }
    else {
      fprintf(stderr, "usage: page-gzip-bench [--pages N] [--note FILE.md] [--csv FILE --commit REV] | --dump FILE\n");
      return 2;
    }
  }
  std::vector<Page> pages;
  size_t identity = 0;
  for (int i = 0; i < n; ++i) {
    pages.push_back(Build(i));
    identity += pages.back().html.size();
  }
  printf("%d pages, %.0f bytes each\n", n, double(identity) / n);
  char date[16];
  const time_t now = time(nullptr);
  strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
  FILE* out = csv ? fopen(csv, "a") : nullptr;
  if (out && ftell(out) == 0) fprintf(out, "date,commit,note,method,level,pages,identity_bytes,gzip_bytes,us_per_page\n");
  std::string gz, back;
  static constexpr int kLevels[2][4] = {{1, 4, 6, 9}, {0, 1, 2, 3}};  // zlib's, igzip's
  for (int assembled = 0; assembled < 2; ++assembled) {
    for (int level : kLevels[assembled]) {
      GzipCompressor whole(level);
      GzipAssembler parts(level);
      double best = 1e18;
      size_t bytes = 0;
      for (int round = 0; round < 3; ++round) {  // the best of three: the machine is shared
        bytes = 0;
        const double t0 = CpuUs();
        for (const Page& p : pages) {
          if (assembled) {
            const GzipPart part{p.html};
            parts.Assemble({&part, 1}, &gz);
          } else {
            whole.Compress(p.html, &gz);
          }
          bytes += gz.size();
        }
        best = std::min(best, (CpuUs() - t0) / n);
      }
      for (const Page& p : pages) {  // every output inflates to the page
        const GzipPart part{p.html};
        if (assembled) parts.Assemble({&part, 1}, &gz); else whole.Compress(p.html, &gz);
        if (!GzipDecompress(gz, &back).ok() || back != p.html) {
          fprintf(stderr, "level %d: a page does not inflate to itself\n", level);
          return 1;
        }
      }
      const char* method = assembled ? "igzip" : "zlib";
      printf("level %d %-9s %6.2f us/page  %7.0f bytes/page  ratio %.3f\n", level, method, best, double(bytes) / n,
             double(bytes) / double(identity));
      if (out) {
        fprintf(out, "%s,%s,%s,%s,%d,%d,%zu,%zu,%.2f\n", date, commit.c_str(), g_note.empty() ? "push-bench" : "file", method, level, n,
                identity, bytes, best);
      }
    }
  }
  if (out) fclose(out);
  return 0;
}
