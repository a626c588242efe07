// folio-search's configuration: every flag it takes beyond the common ones
// (core/service.h), with its default, and the checked values main() wires.
// Call from main() only.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "engine.h"
#include "folio/core/config.h"
#include "folio/core/service.h"
#include "folio/core/status.h"
#include "folio/vector/http_embedder.h"

namespace folio::search {

struct SearchConfig {
  ServiceBasics basics;        // --listen (default 127.0.0.1:8082), --admin-listen, --nats, ...
  // --data (./data/search), --related-k (10), --hnsw-threshold (20000),
  // --embed-batch (64).
  EngineOptions engine;
  size_t embed_dim = 384;      // --embed-dim: 8..8192
  // --embed-url (default "": the built-in hashed embedder), --embed-model
  // (""), the API key from the variable --embed-api-key-env names
  // (FOLIO_EMBED_API_KEY); dim and batch_size as above. Only with http_embedder.
  bool http_embedder = false;
  vector::HttpEmbedderOptions embed;
  int batch = 256;             // --batch: note-event messages per indexing batch, 1..4096
  size_t query_threads = 0;    // --query-threads (default 0 = CPUs available)
  // --replica-id (default "": the hostname, each character outside
  // [-_a-zA-Z0-9] as '-'). Names this replica's durable consumer of the
  // notes stream, "search-<replica-id>": replicas sharing one NATS need
  // distinct ids (each keeps its own index on its own --data), and a replica
  // restarted with the same id resumes where it stopped. 1..64 characters of
  // [-_a-zA-Z0-9].
  std::string replica_id;
};

// The durable consumer name of a replica: "search-" + replica_id.
std::string SearchDurable(std::string_view replica_id);

// Declares the common flags (AddServiceFlags) and folio-search's own.
void AddSearchFlags(Flags* flags);

// The checked configuration of parsed `flags`. kInvalidArgument naming the
// flag for a value out of range or malformed.
Result<SearchConfig> ReadSearchConfig(const Flags& flags, const ServiceBasics& basics);

}  // namespace folio::search
