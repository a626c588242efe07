#include "folio/core/service.h"

#include <sched.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "folio/core/log.h"
#include "folio/core/secret.h"

namespace folio {

namespace {

constexpr int64_t kMaxNatsReplicas = 5;  // JetStream refuses more

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// One NATS server URL: [scheme://][user[:pass]@]host[:port].
Status CheckNatsUrl(std::string_view url) {
  auto bad = [url](const std::string& why) {
    return Status::Invalid("bad NATS server URL \"" + std::string(url) + "\": " + why +
                           " (expected nats://HOST:PORT; separate several with commas)");
  };
  if (url.empty()) return Status::Invalid("empty NATS server URL in the list (expected nats://HOST:PORT,...)");
  std::string_view rest = url;
  if (size_t sep = rest.find("://"); sep != std::string_view::npos) {
    std::string_view scheme = rest.substr(0, sep);
    if (scheme != "nats" && scheme != "tls") return bad("the scheme must be nats:// or tls://");
    rest.remove_prefix(sep + 3);
  }
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) rest.remove_prefix(at + 1);
  if (rest.find_first_of(" \t/?#") != std::string_view::npos) return bad("no spaces, paths or queries");
  std::string_view host = rest, port;
  if (!rest.empty() && rest.front() == '[') {  // [IPv6]:port
    size_t close = rest.find(']');
    if (close == std::string_view::npos) return bad("unclosed [");
    host = rest.substr(0, close + 1);
    rest.remove_prefix(close + 1);
    if (!rest.empty() && rest.front() != ':') return bad("junk after ]");
    if (!rest.empty()) port = rest.substr(1);
  } else if (size_t colon = rest.rfind(':'); colon != std::string_view::npos) {
    host = rest.substr(0, colon);
    port = rest.substr(colon + 1);
    if (host.find(':') != std::string_view::npos) return bad("put an IPv6 address in [brackets]");
  }
  if (host.empty() || host == "[]") return bad("no host");
  if (rest.find(':') != std::string_view::npos || !port.empty()) {
    int p = 0;
    bool digits = !port.empty() && port.size() <= 5;
    for (char c : port) {
      if (c < '0' || c > '9') digits = false;
      else p = p * 10 + (c - '0');
    }
    if (!digits || p < 1 || p > 65535) return bad("the port must be a number in 1..65535");
  }
  return Status::Ok();
}

}  // namespace

void AddServiceFlags(Flags* flags, const std::string& default_listen) {
  flags->Add("listen", default_listen, "HTTP listen address HOST:PORT");
  flags->Add("admin-listen", "",
             "HOST:PORT that alone serves /metrics, /livez and /readyz (\"\" = the --listen address serves them)");
  flags->Add("nats", "nats://127.0.0.1:4222",
             "NATS server URL, or a comma-separated list of a cluster's servers (nats://a:4222,nats://b:4222)");
  flags->Add("nats-replicas", "1",
             "replicas (1..5) of the JetStream bucket and streams this service creates; at most the number of"
             " NATS servers in the cluster (3 for a 3-node cluster); an existing one with fewer is scaled up");
  flags->Add("nats-user", "", "NATS user of this service (deploy/NATS.md; \"\" = connect without one)");
  AddSecretFlags(flags, "nats-password", "password of --nats-user");
  flags->Add("nats-ca", "",
             "PEM file of the CA of the NATS servers' certificates: connect with TLS and verify them (\"\" = plain)");
  flags->Add("log-format", "text", "log lines as text or json");
}

int FailStartup(const Status& s) {
  log::Error("startup failed", {{"error", s.message()}});
  return 1;
}

Result<std::unique_ptr<FileLock>> LockServiceData(const std::string& data_dir, std::string_view lock_name,
                                                 std::string_view service) {
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);
  if (ec) return Status::Unavailable("cannot create --data " + data_dir + ": " + ec.message());
  auto lock = LockFile(data_dir + "/" + std::string(lock_name));
  if (!lock.ok()) {
    return Status(lock.status().code(), lock.status().message() + ": another " + std::string(service) +
                                            " uses this --data; stop it first");
  }
  return lock;
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
  std::vector<std::string> urls;
  if (Status s = SplitNatsUrls(out->nats_url, &urls); !s.ok()) return usage_error("--nats: " + s.message());
  auto replicas = flags->GetInt("nats-replicas");
  if (!replicas.ok() || *replicas < 1 || *replicas > kMaxNatsReplicas) {
    return usage_error("--nats-replicas must be an integer in 1.." + std::to_string(kMaxNatsReplicas) +
                       " (JetStream's limit), not \"" + flags->Get("nats-replicas") + "\"");
  }
  out->nats_replicas = static_cast<int>(*replicas);
  auto password = SecretFromFlags(*flags, "nats-password");
  if (!password.ok()) return usage_error(password.status().message());
  out->nats_user = flags->Get("nats-user");
  out->nats_password = *password;
  if (out->nats_user.empty() != out->nats_password.empty()) {
    return usage_error(out->nats_user.empty()
                           ? "--nats-password is set but --nats-user is not (FOLIO_NATS_USER): give both or neither"
                           : "--nats-user " + out->nats_user +
                                 " needs its password: --nats-password-file (or FOLIO_NATS_PASSWORD)");
  }
  // The user names the client's reply subjects (_INBOX.<user>.*), which
  // the server's permissions grant to that user alone.
  for (char c : out->nats_user) {
    if (c == '.' || c == '*' || c == '>' || c <= ' ' || c == 127) {
      return usage_error("--nats-user \"" + out->nats_user +
                         "\" must be one NATS subject token: no dots, wildcards (* >) or spaces");
    }
  }
  out->nats_ca = flags->Get("nats-ca");
  return -1;
}

size_t AvailableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return static_cast<size_t>(CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

Status SplitNatsUrls(std::string_view list, std::vector<std::string>* out) {
  std::vector<std::string> urls;
  size_t start = 0;
  while (true) {
    size_t comma = list.find(',', start);
    std::string_view entry = TrimSpaces(list.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (Status s = CheckNatsUrl(entry); !s.ok()) return s;
    urls.emplace_back(entry);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  *out = std::move(urls);
  return Status::Ok();
}

}  // namespace folio
