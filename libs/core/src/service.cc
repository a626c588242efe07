#include "folio/core/service.h"

#include <sched.h>

#include <cstdio>
#include <thread>

#include "folio/core/log.h"

namespace folio {

void AddServiceFlags(Flags* flags, const std::string& default_listen) {
  flags->Add("listen", default_listen, "HTTP listen address HOST:PORT");
  flags->Add("admin-listen", "",
             "HOST:PORT that alone serves /metrics, /livez and /readyz (\"\" = the --listen address serves them)");
  flags->Add("nats", "nats://127.0.0.1:4222", "NATS server URL");
  flags->Add("log-format", "text", "log lines as text or json");
}

int ParseServiceFlags(Flags* flags, int argc, const char* const* argv, ServiceBasics* out) {
  const char* prog = argc > 0 ? argv[0] : "folio";
  auto usage_error = [prog](const std::string& m) {
    fprintf(stderr, "%s: %s\n", prog, m.c_str());
    return 2;
  };
  if (Status s = flags->Parse(argc, argv); !s.ok()) {
    if (s.code() == Code::kNotFound) {  // --help
      fputs(s.message().c_str(), stdout);
      return 0;
    }
    return usage_error(s.message());
  }
  log::Format fmt;
  if (!log::ParseFormat(flags->Get("log-format"), &fmt)) return usage_error("--log-format must be text or json");
  log::Configure(log::Level::kInfo, fmt);
  if (Status s = ParseHostPort(flags->Get("listen"), &out->host, &out->port); !s.ok()) {
    return usage_error("--listen: " + s.message());
  }
  if (const std::string& admin = flags->Get("admin-listen"); !admin.empty()) {
    if (Status s = ParseHostPort(admin, &out->admin_host, &out->admin_port); !s.ok()) {
      return usage_error("--admin-listen: " + s.message());
    }
    if (out->admin_port != 0 && out->admin_port == out->port) {
      return usage_error("--admin-listen must use another port than --listen");
    }
  }
  out->nats_url = flags->Get("nats");
  return -1;
}

size_t AvailableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return static_cast<size_t>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace folio
