// folio-edge's configuration: every flag it takes beyond the common ones
// (core/service.h), with its default, and the checked values main() wires.
// Call from main() only.
#pragma once

#include <cstddef>
#include <string>

#include "folio/core/config.h"
#include "folio/core/service.h"
#include "folio/core/status.h"
#include "asset_store.h"
#include "search_backend.h"
#include "signins.h"

namespace folio::edge {

struct EdgeConfig {
  ServiceBasics basics;            // --listen (default 127.0.0.1:8081), --admin-listen, --nats, ...
  std::string site = "default";    // --site: served when the Host header names no known site
  size_t threads = 1;              // --threads (default 0 = CPUs available to the process)
  SearchOptions search;            // --search-threads (8), --search-max-in-flight (64), --search-timeout-ms (2000)
  bool has_storage = false;        // --storage given (default "": /assets/ misses are 404)
  AssetOptions assets;             // --storage, --storage-token, --asset-cache (256MiB); only with has_storage
  SigninOptions signin;            // --secure-cookies (false), --trusted-proxies ("")
};

// Declares the common flags (AddServiceFlags) and folio-edge's own.
void AddEdgeFlags(Flags* flags);

// The checked configuration of parsed `flags`. kInvalidArgument naming the
// flag for a value out of range or malformed, or --storage without
// --storage-token.
Result<EdgeConfig> ReadEdgeConfig(const Flags& flags, const ServiceBasics& basics);

}  // namespace folio::edge
