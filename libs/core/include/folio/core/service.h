// The start-up every folio service shares: the common flags (--listen,
// --admin-listen, --nats, --nats-replicas, --nats-user, --nats-password[-file],
// --nats-ca, --log-format), parsing argv + environment,
// configuring the logger, the exit on a start-up error, the lock on a
// one-writer data folder, and the CPU count the process may use. Call from main() only.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/config.h"
#include "folio/core/files.h"
#include "folio/core/status.h"

namespace folio {

struct ServiceBasics {
  std::string host;      // from --listen
  int port = 0;
  // From --nats (default "nats://127.0.0.1:4222"): one NATS server URL or a
  // comma-separated list of the servers of one cluster, as given (checked
  // by SplitNatsUrls; libs/bus splits it again when it connects).
  std::string nats_url;
  // From --nats-replicas (default 1, 1..5): replicas of the JetStream bucket
  // and streams a service creates (bus::BusOptions::replicas).
  int nats_replicas = 1;
  // From --nats-user and --nats-password / --nats-password-file /
  // FOLIO_NATS_PASSWORD (default "": no user, the server must allow
  // anonymous clients). Both or neither (deploy/NATS.md: a user per service).
  std::string nats_user;
  std::string nats_password;
  // From --nats-ca (default ""): a PEM file of the CA that signed the NATS
  // servers' certificates; set, the client requires TLS and verifies them.
  std::string nats_ca;
  // From --admin-listen (default ""): the address that alone serves
  // /metrics, /livez and /readyz (libs/metrics OpsEndpoints). admin_port < 0:
  // not set, and they are served on the public port.
  std::string admin_host;
  int admin_port = -1;
  bool has_admin() const { return admin_port >= 0; }
};

// Declares --listen (with this default), --admin-listen, --nats,
// --nats-replicas, --nats-user, --nats-password, --nats-password-file,
// --nats-ca and --log-format.
void AddServiceFlags(Flags* flags, const std::string& default_listen);

// Parses flags, configures logging, splits --listen and --admin-listen (a
// usage error when both name the same port), reads the NATS password (a
// usage error naming the flag when its file is missing or empty, when both
// --nats-password and its -file are given, or when only one of the user and
// the password is). Returns -1 to go on;
// otherwise the exit code main() should return (0 after --help, 2 on a
// usage error, both already printed).
int ParseServiceFlags(Flags* flags, int argc, const char* const* argv, ServiceBasics* out);

// Logs "startup failed" with s's message and returns 1, the exit status of
// a service that cannot start: `if (!s.ok()) return FailStartup(s);`.
int FailStartup(const Status& s);

// A service with state that must have one writer (ingest, search) runs one
// process per --data: creates the folder if missing and takes an exclusive
// lock on <data_dir>/<lock_name> (kept while the returned lock lives). The
// public port is shared (SO_REUSEPORT), so only this keeps a second process
// off the same data. On failure the message names `service` and says to
// stop the other process first.
Result<std::unique_ptr<FileLock>> LockServiceData(const std::string& data_dir, std::string_view lock_name,
                                                 std::string_view service);

// Splits a --nats value ("nats://a:4222,nats://b:4222"; spaces around
// entries are ignored) into its URLs. Each entry is [nats|tls]://HOST[:PORT]
// or HOST[:PORT] (NATS.c then assumes nats://), optionally with user info
// ("nats://user:pass@host:4222"); PORT in 1..65535. kInvalidArgument naming
// the first bad entry (empty list, empty entry, unknown scheme, no host, bad
// port); *out is then unchanged.
Status SplitNatsUrls(std::string_view list, std::vector<std::string>* out);

// CPUs this process may run on (sched_getaffinity), at least 1: honours
// taskset and container CPU sets, unlike hardware_concurrency().
size_t AvailableCpus();

}  // namespace folio
