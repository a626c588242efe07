// Observability against the real services (issue 10): nats-server, storage,
// ingest (with --storage), edge (with --storage) and search started for real.
//  - every service's /metrics passes `promtool check metrics` (Debian's
//    prometheus package; the case is skipped only where promtool is absent);
//  - every metric name the Grafana dashboard (deploy/grafana/dashboards/*.json)
//    and the alert rules (deploy/prometheus/alerts.yml) use is in the live
//    /metrics output of some service (a histogram's _bucket/_sum/_count as
//    exported), and the check itself reports a misspelled name;
//  - folio_ingest_outbox_oldest_seconds grows while NATS is away and returns
//    to 0 once the outbox has drained.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster.h"
#include "folio/http/client.h"

using namespace folio;
using namespace folio::it;

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every metric name in a text of PromQL (or a file holding some): the
// identifiers that start with folio_ or process_ (no label name, function or
// keyword of ours does), e.g. rate(folio_x_total[5m]) -> folio_x_total.
std::set<std::string> MetricNamesIn(const std::string& text) {
  std::set<std::string> out;
  auto ident = [](char ch) { return isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == ':'; };
  for (size_t i = 0; i < text.size();) {
    if (!ident(text[i]) || (i > 0 && ident(text[i - 1]))) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && ident(text[j])) ++j;
    std::string word = text.substr(i, j - i);
    if (word.rfind("folio_", 0) == 0 || word.rfind("process_", 0) == 0) out.insert(word);
    i = j;
  }
  return out;
}

// The metric names of a /metrics text: every sample's name (for a
// histogram: name_bucket, name_sum, name_count) and every # TYPE name.
void AddExported(const std::string& exposition, std::set<std::string>* names) {
  std::istringstream in(exposition);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      names->insert(line.substr(7, line.find(' ', 7) - 7));
    } else if (!line.empty() && line[0] != '#') {
      names->insert(line.substr(0, line.find_first_of("{ ")));
    }
  }
}

// The names used but not exported ("" if none).
std::string Missing(const std::set<std::string>& used, const std::set<std::string>& exported) {
  std::string missing;
  for (const std::string& n : used) {
    if (exported.count(n)) continue;
    missing += n + " ";
  }
  return missing;
}

// Every expression of the dashboards and the alert rules, as one text each.
std::map<std::string, std::string> DeployTexts() {
  std::map<std::string, std::string> texts;
  for (const auto& e : std::filesystem::directory_iterator(testing::SourcePath("deploy/grafana/dashboards"))) {
    if (e.path().extension() == ".json") texts[e.path().string()] = ReadFile(e.path().string());
  }
  std::string alerts = testing::SourcePath("deploy/prometheus/alerts.yml");
  texts[alerts] = ReadFile(alerts);
  return texts;
}

// Runs a shell command; its output (stdout and stderr) in *out, exit status returned.
int Run(const std::string& cmd, std::string* out) { return testing::RunShell(cmd, out); }

bool HavePromtool() {
  std::string out;
  return Run("command -v promtool", &out) == 0;
}

std::string Scrape(const std::string& base) {
  auto r = http::Get(base + "/metrics");
  return r.ok() && r->status == 200 ? r->body : std::string();
}

// The whole deployment with some traffic on each service, so that every
// labelled series the dashboard names exists.
struct LiveServices {
  Cluster c{{}, false};
  std::map<std::string, std::string> metrics;  // service -> its /metrics

  LiveServices() {
    c.StartStorage();
    c.AddIngestArgs(c.IngestStorageArgs());
    c.AddEdgeArgs(c.EdgeStorageArgs());
    c.StartIngest();
    c.StartEdge();
    c.StartSearch();
    REQUIRE(c.Push(PushBody({{"Hello.md", "# Hello\n\nobserved\n"}})).status == 200);
    REQUIRE(c.WaitForPage("/hello", 200, "observed").status == 200);
    CHECK(c.EdgeGet("/no-such-page").status == 404);
    (void)c.EdgeGet("/_/search?q=observed");
    (void)http::Get(c.search_url() + "/api/v1/search?q=observed");
    (void)c.StorageDo("GET", "/blobs");
    const std::map<std::string, std::string> urls = {
        {"ingest", c.ingest_url()}, {"edge", c.edge_url()}, {"search", c.search_url()}, {"storage", c.storage_url()}};
    // A request is observed once its answer is written: scrape until each
    // service shows its own earlier requests.
    for (const auto& [name, url] : urls) {
      std::string text;
      for (int i = 0; i < 100; ++i) {
        text = Scrape(url);
        // Ingest reads JetStream's usage on a thread of its own, at most a
        // second after its streams exist (issue 24).
        bool jetstream =
            name != "ingest" || text.find("folio_jetstream_stream_bytes{stream=\"notes\"}") != std::string::npos;
        if (text.find("folio_http_request_duration_seconds_bucket") != std::string::npos && jetstream) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      metrics[name] = text;
    }
  }
};

}  // namespace

TEST_CASE("promtool check metrics passes on every service's /metrics") {
  if (!HavePromtool()) {
    MESSAGE("promtool not installed (Debian package prometheus): skipped");
    return;
  }
  LiveServices live;
  for (const auto& [name, text] : live.metrics) {
    CAPTURE(name);
    REQUIRE(!text.empty());
    std::string path = live.c.dir() + "/" + name + ".metrics";
    std::ofstream(path) << text;
    std::string out;
    int rc = Run("promtool check metrics < " + path, &out);
    INFO("promtool says: " << out);
    CHECK(rc == 0);
    CHECK(out.empty());  // lint problems are printed (and exit 1); a clean text prints nothing
    // What every service exports.
    for (const char* m : {"process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds",
                          "process_max_fds", "process_start_time_seconds", "process_virtual_memory_bytes",
                          "folio_ready", "folio_http_request_duration_seconds_bucket"}) {
      CHECK_MESSAGE(text.find(std::string("\n") + m) != std::string::npos, m);
    }
  }
  CHECK(live.metrics["edge"].find("folio_http_request_duration_seconds_count{code=\"200\",route=\"page\"}") !=
        std::string::npos);
  CHECK(live.metrics["edge"].find("folio_http_request_duration_seconds_count{code=\"404\",route=\"page\"}") !=
        std::string::npos);
  CHECK(live.metrics["ingest"].find("folio_http_request_duration_seconds_count{code=\"200\",route=\"push\"}") !=
        std::string::npos);
  CHECK(live.metrics["storage"].find("route=\"list\"") != std::string::npos);
  // Issue 24: what the capacity alerts read. Every service: its memory
  // limit; the ones with a --data: its disk; ingest: JetStream's usage, with
  // the limits folio gives the notes stream.
  for (const auto& [name, text] : live.metrics) {
    CAPTURE(name);
    CHECK(text.find("\nfolio_memory_limit_bytes ") != std::string::npos);
    if (name == "edge") continue;
    CHECK(text.find("\nfolio_disk_free_bytes ") != std::string::npos);
    CHECK(text.find("\nfolio_disk_size_bytes ") != std::string::npos);
  }
  const std::string& ingest = live.metrics["ingest"];
  CHECK(ingest.find("\nfolio_jetstream_up 1\n") != std::string::npos);
  CHECK(ingest.find("folio_jetstream_stream_max_bytes{stream=\"notes\"} 2147483648\n") != std::string::npos);
  CHECK(ingest.find("folio_jetstream_stream_max_age_seconds{stream=\"related\"} 604800\n") != std::string::npos);
  CHECK(ingest.find("folio_jetstream_stream_bytes{stream=\"KV_pages\"}") != std::string::npos);
  CHECK(ingest.find("\nfolio_jetstream_account_storage_bytes ") != std::string::npos);
  CHECK(ingest.find("\nfolio_ingest_backup_last_success_timestamp_seconds 0\n") != std::string::npos);
  CHECK(live.metrics["search"].find("route=\"query\"") != std::string::npos);
}

TEST_CASE("metric names: every metric the dashboard and alert rules use is in the live /metrics") {
  LiveServices live;
  std::set<std::string> exported;
  for (const auto& [name, text] : live.metrics) {
    REQUIRE_MESSAGE(!text.empty(), name);
    AddExported(text, &exported);
  }
  for (const auto& [file, text] : DeployTexts()) {
    CAPTURE(file);
    std::set<std::string> used = MetricNamesIn(text);
    CHECK(used.size() >= 5);  // the extraction found the file's expressions
    CHECK_MESSAGE(Missing(used, exported).empty(), "not exported by any service: " << Missing(used, exported));
  }
}

TEST_CASE("metric names: the check reports a misspelled name, and accepts a histogram's series") {
  std::set<std::string> exported;
  AddExported(
      "# HELP folio_edge_pages Pages\n# TYPE folio_edge_pages gauge\nfolio_edge_pages 3\n"
      "# TYPE folio_x_seconds histogram\nfolio_x_seconds_bucket{le=\"+Inf\"} 1\nfolio_x_seconds_sum 0.1\n"
      "folio_x_seconds_count 1\n",
      &exported);
  std::set<std::string> used =
      MetricNamesIn("sum(rate(folio_x_seconds_bucket{job=\"edge\"}[5m])) / folio_x_seconds_count + folio_edge_pages");
  CHECK(used == std::set<std::string>{"folio_edge_pages", "folio_x_seconds_bucket", "folio_x_seconds_count"});
  CHECK(Missing(used, exported).empty());
  CHECK(Missing(MetricNamesIn("max(folio_edge_page) by (instance)"), exported) == "folio_edge_page ");
  // Names inside YAML and JSON strings are found too.
  CHECK(MetricNamesIn("expr: \"folio_edge_pagez > 0\"\n") == std::set<std::string>{"folio_edge_pagez"});
}

TEST_CASE("folio_ingest_outbox_oldest_seconds grows while NATS is away and is 0 once the outbox drains") {
  Cluster c;
  REQUIRE(c.Push(PushBody({{"A.md", "# A\n\nfirst\n"}})).status == 200);
  REQUIRE(c.WaitForPage("/a", 200, "first").status == 200);
  auto oldest = [&c]() -> double {
    std::string text = Scrape(c.ingest_url());
    size_t at = text.find("\nfolio_ingest_outbox_oldest_seconds ");
    return at == std::string::npos ? -1 : strtod(text.c_str() + at + 36, nullptr);
  };
  auto wait_for = [&](auto pred, int timeout_ms) {
    double v = oldest();
    for (int waited = 0; !pred(v) && waited < timeout_ms; waited += 100) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      v = oldest();
    }
    return v;
  };
  CHECK(wait_for([](double v) { return v == 0; }, 10000) == 0);

  c.nats().Stop();
  REQUIRE(c.Push(PushBody({{"B.md", "# B\n\nduring\n"}})).status == 200);  // committed, not published
  double first = wait_for([](double v) { return v >= 1; }, 20000);
  CHECK(first >= 1);
  double later = wait_for([first](double v) { return v >= first + 1; }, 20000);
  CHECK(later >= first + 1);

  c.nats().Start();
  CHECK(c.WaitForPage("/b", 200, "during", 30000).status == 200);
  CHECK(wait_for([](double v) { return v == 0; }, 30000) == 0);
  INFO(c.Logs());
}
