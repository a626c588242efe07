#include "config.h"

#include <algorithm>
#include <utility>

#include "folio/bus/site_name.h"
#include "folio/core/secret.h"
#include "folio/core/text.h"

namespace folio::edge {

void AddEdgeFlags(Flags* flags) {
  AddServiceFlags(flags, "127.0.0.1:8081");
  flags->Add("site", "default", "site served when the Host header names no known site");
  flags->Add("threads", "0", "serving threads (0 = CPUs available to the process)");
  flags->Add("search-threads", "8", "threads making search requests to the search service");
  flags->Add("search-max-in-flight", "64", "searches in flight at once; more are answered 503");
  flags->Add("search-timeout-ms", "2000", "how long a search may take before the reader gets 503");
  flags->Add("storage", "",
             "folio-storage URL (http://127.0.0.1:8083), or replicas separated by ',' (tried in turn when one"
             " fails): /assets/ misses are fetched from it; \"\" = off");
  AddSecretFlags(flags, "storage-token",
                 "folio-storage's read token (it writes it to <its data>/read-token on its first start); required"
                 " with --storage");
  flags->Add("asset-cache", "256MiB", "bytes of assets kept in memory (objects over 1/8 of it are served, not kept)");
  flags->AddBool("secure-cookies", false,
             "mark every private-site session cookie Secure (else only requests with X-Forwarded-Proto: https get"
             " Secure cookies)");
  flags->Add("trusted-proxies", "",
             "comma-separated peer addresses (your TLS proxy's) whose X-Forwarded-For names the client for"
             " sign-in rate limits; \"\" = the peer address counts");
}

namespace {

Status ReadSearchOptions(const Flags& flags, SearchOptions* out) {
  auto search_threads = flags.GetInt("search-threads");
  auto search_max = flags.GetInt("search-max-in-flight");
  auto search_timeout = flags.GetInt("search-timeout-ms");
  for (const Status* st : {&search_threads.status(), &search_max.status(), &search_timeout.status()}) {
    if (!st->ok()) return *st;
  }
  if (*search_threads < 1 || *search_threads > 256) return Status::Invalid("--search-threads must be in 1..256");
  if (*search_max < 0 || *search_max > 100'000) return Status::Invalid("--search-max-in-flight must be in 0..100000");
  if (*search_timeout < 1 || *search_timeout > 60'000) return Status::Invalid("--search-timeout-ms must be in 1..60000");
  out->threads = static_cast<size_t>(*search_threads);
  out->max_in_flight = static_cast<size_t>(*search_max);
  out->timeout_ms = *search_timeout;
  return Status::Ok();
}

Status ReadAssetOptions(const Flags& flags, AssetOptions* out) {
  auto cache = flags.GetBytes("asset-cache");
  if (!cache.ok()) return cache.status();
  auto urls = storage_client::NormalizeUrlList(flags.Get("storage"), "--storage");
  if (!urls.ok()) return urls.status();
  out->storage_url = std::move(urls).value();
  auto token = SecretFromFlags(flags, "storage-token");
  if (!token.ok()) return token.status();
  if (token->empty()) {
    return Status::Invalid("--storage needs --storage-token (or --storage-token-file, FOLIO_STORAGE_TOKEN): "
                           "folio-storage's read token, which it writes to <its data>/read-token on its "
                           "first start");
  }
  out->storage_token = *token;
  out->cache_bytes = static_cast<size_t>(std::max<int64_t>(*cache, 0));
  return Status::Ok();
}

}  // namespace

Result<EdgeConfig> ReadEdgeConfig(const Flags& flags, const ServiceBasics& basics) {
  EdgeConfig c;
  c.basics = basics;
  auto threads = flags.GetInt("threads");
  if (!threads.ok()) return threads.status();
  c.threads = *threads > 0 ? static_cast<size_t>(*threads) : AvailableCpus();
  if (Status s = ReadSearchOptions(flags, &c.search); !s.ok()) return s;
  c.site = flags.Get("site");
  if (!bus::IsValidSiteName(c.site)) return Status::Invalid("--site must match [a-z0-9-]{1,63}");
  c.signin.secure_cookies = flags.GetBool("secure-cookies");
  for (std::string_view proxies = flags.Get("trusted-proxies"); !proxies.empty();) {
    size_t comma = proxies.find(',');
    std::string_view one = TrimAsciiSpace(proxies.substr(0, comma));
    proxies = comma == std::string_view::npos ? std::string_view() : proxies.substr(comma + 1);
    if (!one.empty()) c.signin.trusted_proxies.emplace_back(one);
  }
  c.has_storage = !flags.Get("storage").empty();
  if (c.has_storage) {
    if (Status s = ReadAssetOptions(flags, &c.assets); !s.ok()) return s;
  }
  return c;
}

}  // namespace folio::edge
