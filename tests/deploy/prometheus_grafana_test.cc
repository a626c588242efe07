// The Prometheus and Grafana files under deploy/ checked with the tools
// operators use (label "deploy"):
//  - promtool check config / check rules / test rules (Debian's prometheus
//    package; each case is skipped only where promtool is absent);
//  - every alert (alerts.yml, and alerts-kubernetes.yml, which needs
//    kube-state-metrics) carries a severity, a summary, a description and a
//    runbook_url whose anchor is a section of docs/runbooks.md, and its test
//    file has a case where it fires and one where it does not;
//  - the Grafana dashboard is valid JSON of a current schema, each panel
//    queries the provisioned datasource, and has the issue's rows;
//  - the provisioning points at http://prometheus:9090 and the dashboards.
// That every metric named there exists is checked against the live services
// in tests/integration/observability_test.cc.
#include <doctest/doctest.h>
#include <simdjson.h>

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <utility>
#include <sstream>
#include <string>

#include "folio/testing/testing.h"

using namespace folio;

namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int Run(const std::string& cmd, std::string* out) { return testing::RunShell(cmd, out); }

bool HavePromtool() {
  std::string out;
  if (Run("command -v promtool", &out) == 0) return true;
  MESSAGE("promtool not installed (Debian package prometheus): skipped");
  return false;
}

std::string Prom(const std::string& file) { return testing::SourcePath("deploy/prometheus/" + file); }

// The rule files and their unit tests.
const std::pair<const char*, const char*> kRuleFiles[] = {{"alerts.yml", "alerts_test.yml"},
                                                          {"alerts-kubernetes.yml", "alerts-kubernetes_test.yml"}};

// The alert names of a rule file ("- alert: Name" lines).
std::set<std::string> AlertNames(const std::string& file = "alerts.yml") {
  std::set<std::string> names;
  std::istringstream in(ReadFile(Prom(file)));
  std::string line;
  while (std::getline(in, line)) {
    size_t at = line.find("- alert: ");
    if (at != std::string::npos) names.insert(line.substr(at + 9));
  }
  return names;
}

}  // namespace

TEST_CASE("deploy: promtool check config passes on prometheus.yml (and the rules it loads)") {
  if (!HavePromtool()) return;
  std::string out;
  int rc = Run("promtool check config " + Prom("prometheus.yml"), &out);
  INFO(out);
  CHECK(rc == 0);
  CHECK(out.find("1 rule files found") != std::string::npos);
}

TEST_CASE("deploy: promtool check rules passes on alerts.yml and alerts-kubernetes.yml") {
  if (!HavePromtool()) return;
  for (const auto& [file, tests] : kRuleFiles) {
    CAPTURE(file);
    std::string out;
    int rc = Run("promtool check rules " + Prom(file), &out);
    INFO(out);
    CHECK(rc == 0);
    CHECK(out.find("SUCCESS: " + std::to_string(AlertNames(file).size()) + " rules found") != std::string::npos);
  }
}

TEST_CASE("deploy: promtool test rules passes on alerts_test.yml and alerts-kubernetes_test.yml") {
  if (!HavePromtool()) return;
  for (const auto& [file, tests] : kRuleFiles) {
    CAPTURE(tests);
    std::string out;
    int rc = Run("promtool test rules " + Prom(tests), &out);
    INFO(out);
    CHECK(rc == 0);
    CHECK(out.find("SUCCESS") != std::string::npos);
  }
}

// The anchors of docs/runbooks.md's "## Name" sections, as GitHub makes
// them (lower case).
std::set<std::string> RunbookAnchors() {
  std::set<std::string> anchors;
  std::istringstream in(ReadFile(testing::SourcePath("docs/runbooks.md")));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) != 0) continue;
    std::string a;
    for (char ch : line.substr(3)) {
      if (isalnum(static_cast<unsigned char>(ch))) a += static_cast<char>(tolower(static_cast<unsigned char>(ch)));
      else if (ch == ' ' || ch == '-') a += '-';
    }
    anchors.insert(a);
  }
  return anchors;
}

TEST_CASE("deploy: every alert has severity, summary, description, a runbook, and tests that fire it and do not") {
  std::set<std::string> anchors = RunbookAnchors();
  for (const auto& [file, test_file] : kRuleFiles) {
    CAPTURE(file);
    std::set<std::string> names = AlertNames(file);
    REQUIRE(names.size() >= 3);
    std::string rules = ReadFile(Prom(file));
    std::string tests = ReadFile(Prom(test_file));
    for (const std::string& name : names) {
      CAPTURE(name);
      size_t at = rules.find("- alert: " + name + "\n");
      REQUIRE(at != std::string::npos);
      std::string rule = rules.substr(at, rules.find("- alert: ", at + 1) - at);
      CHECK(rule.find("severity: critical") + rule.find("severity: warning") != 2 * std::string::npos);
      CHECK(rule.find("summary: \"") != std::string::npos);
      CHECK(rule.find("description: \"") != std::string::npos);
      // Its runbook: a section of docs/runbooks.md named for it.
      std::string lower;
      for (char ch : name) lower += static_cast<char>(tolower(static_cast<unsigned char>(ch)));
      CHECK(rule.find("runbook_url: \"https://github.com/folio/folio/blob/main/docs/runbooks.md#" + lower + "\"") !=
            std::string::npos);
      CHECK_MESSAGE(anchors.count(lower) == 1, "docs/runbooks.md has no section ## " << name);
      // A case that expects it to fire, and one that expects silence.
      std::string key = "alertname: " + name + "\n";
      bool fires = false, silent = false;
      for (size_t t = tests.find(key); t != std::string::npos; t = tests.find(key, t + 1)) {
        std::string next = tests.substr(t + key.size(), 60);
        size_t e = next.find("exp_alerts:");
        if (e == std::string::npos) continue;
        (next.compare(e, 14, "exp_alerts: []") == 0 ? silent : fires) = true;
      }
      CHECK_MESSAGE(fires, "no test case where " << name << " fires");
      CHECK_MESSAGE(silent, "no test case where " << name << " stays silent");
    }
  }
}

TEST_CASE("deploy: the Grafana dashboard is valid JSON on the provisioned datasource, with the issue's rows") {
  std::string path = testing::SourcePath("deploy/grafana/dashboards/folio.json");
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  REQUIRE_MESSAGE(parser.load(path).get(doc) == simdjson::SUCCESS, "not valid JSON: " << path);
  int64_t schema = 0;
  REQUIRE(doc["schemaVersion"].get(schema) == simdjson::SUCCESS);
  CHECK(schema >= 36);  // Grafana 9.3 and later
  std::string_view uid;
  CHECK(doc["uid"].get(uid) == simdjson::SUCCESS);
  simdjson::dom::array panels;
  REQUIRE(doc["panels"].get(panels) == simdjson::SUCCESS);
  std::set<std::string> rows;
  int queries = 0;
  for (simdjson::dom::element p : panels) {
    std::string_view type, title;
    REQUIRE(p["type"].get(type) == simdjson::SUCCESS);
    REQUIRE(p["title"].get(title) == simdjson::SUCCESS);
    CAPTURE(title);
    if (type == "row") {
      rows.insert(std::string(title));
      continue;
    }
    simdjson::dom::array targets;
    REQUIRE(p["targets"].get(targets) == simdjson::SUCCESS);
    CHECK(targets.size() >= 1);
    for (simdjson::dom::element t : targets) {
      std::string_view expr, ds;
      CHECK(t["expr"].get(expr) == simdjson::SUCCESS);
      CHECK(!expr.empty());
      CHECK(t["datasource"]["uid"].get(ds) == simdjson::SUCCESS);
      CHECK(ds == "${datasource}");  // the variable, not a hard-coded uid (issue 24)
      ++queries;
    }
  }
  CHECK(queries >= 30);
  // Variables: the datasource (any Prometheus, the provisioned one by
  // default), and job, instance and site, which the queries filter on.
  simdjson::dom::array vars;
  REQUIRE(doc["templating"]["list"].get(vars) == simdjson::SUCCESS);
  std::set<std::string> names;
  for (simdjson::dom::element v : vars) {
    std::string_view name, type;
    REQUIRE(v["name"].get(name) == simdjson::SUCCESS);
    REQUIRE(v["type"].get(type) == simdjson::SUCCESS);
    names.insert(std::string(name));
    if (name == "datasource") {
      std::string_view q;
      CHECK(type == "datasource");
      CHECK((v["query"].get(q) == simdjson::SUCCESS && q == "prometheus"));
    }
  }
  for (const char* want : {"datasource", "job", "instance", "site"}) CHECK_MESSAGE(names.count(want) == 1, want);
  std::string text = ReadFile(path);
  CHECK(text.find("\"uid\": \"prometheus\"") == std::string::npos);
  CHECK(text.find(R"(instance=~\"$instance\")") != std::string::npos);  // as JSON escapes it
  for (const char* want :
       {"Readers (edge)", "Authors (ingest)", "Search", "Storage", "Bus (NATS)", "Processes", "Capacity"}) {
    CHECK_MESSAGE(rows.count(want) == 1, "missing row " << want);
  }
}

TEST_CASE("deploy: Grafana provisioning names the compose Prometheus and the dashboard folder") {
  std::string ds = ReadFile(testing::SourcePath("deploy/grafana/provisioning/datasources/prometheus.yml"));
  CHECK(ds.find("url: http://prometheus:9090") != std::string::npos);
  CHECK(ds.find("uid: prometheus") != std::string::npos);  // the uid the dashboard's panels use
  CHECK(ds.find("type: prometheus") != std::string::npos);
  std::string dash = ReadFile(testing::SourcePath("deploy/grafana/provisioning/dashboards/folio.yml"));
  CHECK(dash.find("type: file") != std::string::npos);
  CHECK(dash.find("path: /etc/grafana/dashboards") != std::string::npos);
}
