// propagation-bench: the author's whole wait for one changed note, push
// request -> every edge serving it, against a real nats-server -js,
// folio-ingest and TWO folio-edge processes (all pinned to --cpu; the
// driver runs where it is started, e.g. `taskset -c 1`).
//
//   propagation-bench [--notes 3000] [--pushes 200] [--gap-ms 20] [--cpu 0]
//                     [--csv FILE] [--samples FILE] [--trace FILE]   (--cpu "": nothing pinned)
//
// The site holds N notes bench/note_{i}.md of push-bench's shape, imported
// in one push. Then --pushes single-note pushes, --gap-ms apart, each
// changing one note's "Revision". For each push, timed from just before the
// request is sent: the push's response, and the first answer of edge A and
// of edge B with a new ETag. The edges are polled in turn over one
// keep-alive connection each with `If-None-Match: <old ETag>` (a 304 is a
// few dozen bytes), so a sample's resolution is one round trip to the other
// edge. Prints p50/p99/max of: push response, edge A, edge B, both (end to
// end) and both minus the response (the part after it); appends them to
// --csv and every push's figures to --samples. Also prints how many
// conditional GETs a push took after its response (about one per edge means
// the edges had the page before the response arrived), the means of
// ingest's own took_ms and phases_ms, each service's CPU time per push and
// the page records (KV puts) a push published. --trace writes each push's
// send time (Unix us, CLOCK_REALTIME) with its figures, to line the slow
// ones up with a trace of the services (strace -ttt, perf sched). Exits 1 if a page never changes
// within 5 s.
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_notes.h"
#include "cluster.h"
#include "folio/core/json.h"

using namespace folio;
using Clock = std::chrono::steady_clock;

using folio::bench::Body;
using folio::bench::Note;
using folio::bench::Url;

namespace {

// A blocking HTTP/1.1 keep-alive connection to one edge: just enough to send
// a GET and read a Content-Length answer (the edge always sends one).
// Not for general use: no chunked bodies, no bounds beyond the edge's own.
class Conn {
 public:
  explicit Conn(int port) : port_(port) {}
  ~Conn() { Close(); }
  // GET path (gzip accepted, optional If-None-Match); fills *status and
  // *etag. Reconnects once if the connection was closed.
  bool Get(const std::string& path, const std::string& inm, int* status, std::string* etag) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      if (fd_ < 0 && !Connect()) return false;
      std::string req = "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip\r\n";
      if (!inm.empty()) req += "If-None-Match: " + inm + "\r\n";
      req += "\r\n";
      if (send(fd_, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size()) &&
          ReadResponse(status, etag)) {
        return true;
      }
      Close();
    }
    return false;
  }

 private:
  bool Connect() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port_));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return true;
    Close();
    return false;
  }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    buf_.clear();
  }
  bool Fill() {
    char tmp[65536];
    ssize_t n = recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) return false;
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }
  static std::string HeaderValue(const std::string& head, const char* name) {
    size_t p = 0;
    size_t len = strlen(name);
    while ((p = head.find("\r\n", p)) != std::string::npos) {
      p += 2;
      if (head.size() >= p + len + 1 && strncasecmp(head.c_str() + p, name, len) == 0 && head[p + len] == ':') {
        size_t v = head.find_first_not_of(' ', p + len + 1);
        return head.substr(v, head.find("\r\n", v) - v);
      }
    }
    return "";
  }
  bool ReadResponse(int* status, std::string* etag) {
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return false;
    }
    std::string head = buf_.substr(0, end + 2);
    *status = atoi(head.c_str() + 9);
    *etag = HeaderValue(head, "etag");
    std::string cl = HeaderValue(head, "content-length");  // a 304 has no body whatever it says
    size_t total = end + 4 + static_cast<size_t>(cl.empty() || *status == 304 ? 0 : std::stoul(cl));
    while (buf_.size() < total) {
      if (!Fill()) return false;
    }
    buf_.erase(0, total);
    return true;
  }

  int port_;
  int fd_ = -1;
  std::string buf_;
};

int PortOf(const std::string& url) { return std::stoi(url.substr(url.rfind(':') + 1)); }

// The pids of this process's children named `comm`.
std::vector<int> ChildPids(const std::string& comm) {
  std::vector<int> out;
  DIR* d = opendir("/proc");
  while (dirent* e = d ? readdir(d) : nullptr) {
    int pid = atoi(e->d_name);
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    size_t close_paren = line.rfind(')');
    if (close_paren == std::string::npos || line.find("(" + comm + ")") == std::string::npos) continue;
    if (atoi(line.c_str() + close_paren + 4) == getpid()) out.push_back(pid);  // ") S <ppid>"
  }
  if (d) closedir(d);
  return out;
}

// Pins every thread of the children named `comm` (nats-server, which the
// cluster helper starts unpinned) to `cpu`.
void PinChildren(const std::string& comm, int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  for (int pid : ChildPids(comm)) {
    DIR* t = opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
    while (dirent* te = t ? readdir(t) : nullptr) {
      if (int tid = atoi(te->d_name); tid > 0) sched_setaffinity(tid, sizeof set, &set);
    }
    if (t) closedir(t);
  }
}

// User plus system CPU time of the children named `comm`, in ms (clock-tick
// resolution, 10 ms: used over the whole loop).
double ChildrenCpuMs(const std::string& comm) {
  double ticks = 0;
  for (int pid : ChildPids(comm)) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(stat, line);
    std::istringstream rest(line.substr(line.rfind(')') + 2));
    std::string field;
    for (int i = 3; i <= 15 && rest >> field; ++i) {
      if (i >= 14) ticks += atof(field.c_str());  // utime (14), stime (15)
    }
  }
  return ticks * 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// The last sequence of the pages bucket's stream (KV_pages), from
// nats-server's monitoring: how many page records have been published.
double PagesLastSeq(it::Cluster& c) {
  std::string jsz = c.nats().Monitor("/jsz?streams=true");
  size_t p = jsz.find("\"KV_pages\"");
  p = p == std::string::npos ? p : jsz.find("\"last_seq\":", p);
  return p == std::string::npos ? 0 : atof(jsz.c_str() + p + 11);
}

double Percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

std::string Today() {
  char buf[16];
  time_t now = time(nullptr);
  strftime(buf, sizeof buf, "%Y-%m-%d", gmtime(&now));
  return buf;
}

struct Sample {
  double push_ms, a_ms, b_ms;
  std::string phases;  // the reply's phases_ms ("hash=0 meta=1 ..."), whole ms
  double took_ms = 0;  // the reply's took_ms (ingest's own time), whole ms
  int polls = 0;       // conditional GETs sent after the response
  int64_t t0_unix_us = 0;  // when the push was sent (CLOCK_REALTIME), to line samples up with traces
};

// The string value of "key":"..." in a JSON reply; "" if absent.
std::string JsonString(const std::string& body, const std::string& key) {
  size_t p = body.find("\"" + key + "\":\"");
  if (p == std::string::npos) return "";
  p += key.size() + 4;
  return body.substr(p, body.find('"', p) - p);
}

double JsonNumber(const std::string& body, const std::string& key) {
  size_t p = body.find("\"" + key + "\":");
  return p == std::string::npos ? 0 : atof(body.c_str() + p + key.size() + 3);
}

// Mean per phase over the pushes ("render 0.40 ms"), in first-seen order.
// Whole-ms phase figures make these coarse: a mean of 0.4 is 40% of pushes
// at 1 ms or more.
void PrintPhases(const std::vector<Sample>& s) {
  std::vector<std::pair<std::string, double>> sums;
  double took = 0;
  for (const Sample& x : s) {
    took += x.took_ms;
    std::istringstream in(x.phases);
    for (std::string kv; in >> kv;) {
      size_t eq = kv.find('=');
      if (eq == std::string::npos) continue;
      std::string name = kv.substr(0, eq);
      auto it = std::find_if(sums.begin(), sums.end(), [&](auto& p) { return p.first == name; });
      if (it == sums.end()) it = sums.insert(sums.end(), {name, 0.0});
      it->second += atof(kv.c_str() + eq + 1);
    }
  }
  double n = static_cast<double>(s.size()), polls = 0, polling_ms = 0;
  for (const Sample& x : s) {
    polls += x.polls;
    polling_ms += std::max(x.a_ms, x.b_ms) - x.push_ms;
  }
  printf("polling: %.1f conditional GETs per push after the response, one every %.0f us (the resolution)\n",
         polls / n, polls > 0 ? polling_ms * 1000 / polls : 0.0);
  printf("ingest's own account (took_ms, phases_ms; whole ms, means): took %.2f;", took / n);
  for (auto& [name, sum] : sums) printf(" %s %.2f", name.c_str(), sum / n);
  printf("\n");
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// One push of note i at revision rev; polls both edges until each serves a
// new ETag. Exits on failure.
Sample TimedPush(it::Cluster& c, Conn* edges[2], int i, int rev) {
  std::string path = Url(i), old[2];
  for (int k = 0; k < 2; ++k) {
    int st = 0;
    if (!edges[k]->Get(path, "", &st, &old[k]) || st != 200) {
      fprintf(stderr, "edge %c does not serve %s (status %d)\n", 'A' + k, path.c_str(), st);
      exit(1);
    }
  }
  std::string body = Body({i}, rev);
  const int64_t t0_unix_us =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto t0 = Clock::now();
  auto r = c.Push(body);
  auto t1 = Clock::now();
  if (r.status != 200) {
    fprintf(stderr, "push failed: %d %s\n", r.status, r.body.c_str());
    exit(1);
  }
  Clock::time_point seen[2] = {};
  int polls = 0;
  bool done[2] = {false, false};
  while (!done[0] || !done[1]) {
    for (int k = 0; k < 2; ++k) {
      if (done[k]) continue;
      int st = 0;
      std::string etag;
      ++polls;
      if (!edges[k]->Get(path, old[k], &st, &etag)) {
        fprintf(stderr, "edge %c stopped answering\n", 'A' + k);
        exit(1);
      }
      if (st == 200 && !etag.empty() && etag != old[k]) {
        seen[k] = Clock::now();
        done[k] = true;
      }
    }
    if (Clock::now() - t0 > std::chrono::seconds(5)) {
      fprintf(stderr, "note %d revision %d not served by both edges within 5 s\n%s\n", i, rev, c.Logs().c_str());
      exit(1);
    }
  }
  return {Ms(t1 - t0), Ms(seen[0] - t0), Ms(seen[1] - t0), JsonString(r.body, "phases_ms"),
          JsonNumber(r.body, "took_ms"), polls, t0_unix_us};
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  int notes = 3000, pushes = 200, gap_ms = 20;
  std::string cpu = "0";
  std::string csv = "loadtest/results/propagation-bench.csv";
  std::string samples_csv = "loadtest/results/propagation-samples.csv";
  std::string trace_file;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i], v = argv[i + 1];
    if (a == "--notes") notes = std::max(1, std::stoi(v));
    else if (a == "--pushes") pushes = std::max(1, std::stoi(v));
    else if (a == "--gap-ms") gap_ms = std::max(0, std::stoi(v));
    else if (a == "--cpu") cpu = v;
    else if (a == "--csv") csv = v;
    else if (a == "--samples") samples_csv = v;
    else if (a == "--trace") trace_file = v;
    else {
      fprintf(stderr, "unknown flag %s\n", a.c_str());
      return 2;
    }
  }
  const char* commit = getenv("FOLIO_COMMIT");
  std::string date = Today(), rev_id = commit && *commit ? commit : "unknown";
  setenv("FOLIO_PIN_CPU", cpu.c_str(), 1);  // "" = unpinned (the smoke test)
  it::Cluster c;
  if (!cpu.empty()) PinChildren("nats-server", std::stoi(cpu));
  c.StartEdge2();
  std::vector<int> all(static_cast<size_t>(notes));
  for (int i = 0; i < notes; ++i) all[static_cast<size_t>(i)] = i;
  auto t0 = Clock::now();
  auto r = c.Push(Body(all, 1));
  if (r.status != 200) {
    fprintf(stderr, "import failed: %d %s\n", r.status, r.body.c_str());
    return 1;
  }
  std::string last = Url(notes - 1);
  for (const std::string& base : {c.edge_url(), c.edge2_url()}) {
    if (it::Cluster::WaitForPageOn(base, last, 200, "Revision 1.", 60000).status != 200) {
      fprintf(stderr, "import never showed on %s\n%s\n", base.c_str(), c.Logs().c_str());
      return 1;
    }
  }
  printf("imported %d notes in %.0f ms; %d single-note pushes, %d ms apart, two edges\n", notes, Ms(Clock::now() - t0),
         pushes, gap_ms);
  Conn a(PortOf(c.edge_url())), b(PortOf(c.edge2_url()));
  Conn* edges[2] = {&a, &b};
  std::vector<Sample> s;
  const char* kServices[] = {"folio-ingest", "nats-server", "folio-edge"};
  double cpu_before[3];
  for (int k = 0; k < 3; ++k) cpu_before[k] = ChildrenCpuMs(kServices[k]);
  double seq_before = PagesLastSeq(c);
  for (int k = 0; k < pushes; ++k) {
    int note = static_cast<int>((static_cast<long>(k) * 7919) % notes);  // spread over the site
    s.push_back(TimedPush(c, edges, note, k + 2));
    std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
  }
  printf("page records published per push: %.1f\n", (PagesLastSeq(c) - seq_before) / pushes);
  printf("CPU per push (user+system over the loop):");
  for (int k = 0; k < 3; ++k) {
    printf(" %s %.2f ms%s", kServices[k], (ChildrenCpuMs(kServices[k]) - cpu_before[k]) / pushes,
           k == 2 ? " (both, with the polls they answer)\n" : ",");
  }
  std::vector<double> push, ea, eb, both, after;
  for (const Sample& x : s) {
    push.push_back(x.push_ms);
    ea.push_back(x.a_ms);
    eb.push_back(x.b_ms);
    both.push_back(std::max(x.a_ms, x.b_ms));
    after.push_back(std::max(x.a_ms, x.b_ms) - x.push_ms);
  }
  bool new_csv = !std::ifstream(csv).good();
  std::ofstream out(csv, std::ios::app);
  if (new_csv) out << "date,commit,notes,pushes,metric,p50_ms,p99_ms,max_ms\n";
  printf("%-16s %8s %8s %8s\n", "metric", "p50 ms", "p99 ms", "max ms");
  std::pair<const char*, std::vector<double>*> rows[] = {
      {"push_response", &push}, {"edge_a", &ea}, {"edge_b", &eb}, {"both_edges", &both}, {"after_response", &after}};
  for (auto& [name, v] : rows) {
    double p50 = Percentile(*v, 0.5), p99 = Percentile(*v, 0.99), mx = *std::max_element(v->begin(), v->end());
    printf("%-16s %8.2f %8.2f %8.2f\n", name, p50, p99, mx);
    char line[256];
    snprintf(line, sizeof line, "%s,%s,%d,%d,%s,%.3f,%.3f,%.3f\n", date.c_str(), rev_id.c_str(), notes, pushes, name,
             p50, p99, mx);
    out << line;
  }
  bool new_samples = !std::ifstream(samples_csv).good();
  std::ofstream so(samples_csv, std::ios::app);
  if (new_samples) so << "date,commit,i,push_ms,edge_a_ms,edge_b_ms\n";
  for (size_t k = 0; k < s.size(); ++k) {
    char line[160];
    snprintf(line, sizeof line, "%s,%s,%zu,%.3f,%.3f,%.3f\n", date.c_str(), rev_id.c_str(), k, s[k].push_ms,
             s[k].a_ms, s[k].b_ms);
    so << line;
  }
  if (!trace_file.empty()) {
    std::ofstream tr(trace_file);
    tr << "i,t0_unix_us,push_ms,edge_a_ms,edge_b_ms,took_ms\n";
    for (size_t k = 0; k < s.size(); ++k) {
      tr << k << ',' << s[k].t0_unix_us << ',' << s[k].push_ms << ',' << s[k].a_ms << ',' << s[k].b_ms << ','
         << s[k].took_ms << '\n';
    }
  }
  PrintPhases(s);
  printf("target: both edges p99 <= 3 ms\ncsv: %s, %s\n", csv.c_str(), samples_csv.c_str());
  return 0;
}
