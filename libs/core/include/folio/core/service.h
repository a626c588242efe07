// The start-up every folio service shares: the common flags (--listen,
// --admin-listen, --nats, --log-format), parsing argv + environment,
// configuring the logger, and the CPU count the process may use. Call from
// main() only.
#pragma once

#include <cstddef>
#include <string>

#include "folio/core/config.h"

namespace folio {

struct ServiceBasics {
  std::string host;      // from --listen
  int port = 0;
  std::string nats_url;  // from --nats
  // From --admin-listen (default ""): the address that alone serves
  // /metrics, /livez and /readyz (libs/metrics OpsEndpoints). admin_port < 0:
  // not set, and they are served on the public port.
  std::string admin_host;
  int admin_port = -1;
  bool has_admin() const { return admin_port >= 0; }
};

// Declares --listen (with this default), --admin-listen, --nats and --log-format.
void AddServiceFlags(Flags* flags, const std::string& default_listen);

// Parses flags, configures logging, splits --listen and --admin-listen (a
// usage error when both name the same port). Returns -1 to go on;
// otherwise the exit code main() should return (0 after --help, 2 on a
// usage error, both already printed).
int ParseServiceFlags(Flags* flags, int argc, const char* const* argv, ServiceBasics* out);

// CPUs this process may run on (sched_getaffinity), at least 1: honours
// taskset and container CPU sets, unlike hardware_concurrency().
size_t AvailableCpus();

}  // namespace folio
