#include "config.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>

#include "folio/bus/related_schema.h"
#include "stemmer.h"

namespace folio::search {

void AddSearchFlags(Flags* flags) {
  AddServiceFlags(flags, "127.0.0.1:8082");
  flags->Add("data", "./data/search", "directory for the search database");
  flags->Add("embed-url", "", "OpenAI-compatible embeddings endpoint (http://host:port/v1/embeddings); "
                              "empty = the built-in hashed embedder");
  flags->Add("embed-model", "", "model name sent to --embed-url");
  flags->Add("embed-dim", "384", "vector length (of the --embed-url model, or of the built-in embedder)");
  flags->Add("embed-api-key-env", "FOLIO_EMBED_API_KEY", "environment variable holding the --embed-url API key");
  flags->Add("embed-batch", "64", "texts per embedding request");
  flags->Add("related-k", "10", "related notes per note");
  flags->Add("min-vector-score", "0.2",
             "hybrid search: a note the query's words do not find is shown only if its vector is at least this"
             " similar (0..1; set it for the model behind --embed-url)");
  flags->Add("hnsw-threshold", "20000", "vectors per site above which the index is HNSW instead of exact");
  flags->Add("batch", "256", "note-event messages per indexing batch (each up to 64 events)");
  flags->Add("query-threads", "0", "threads answering HTTP queries (0 = CPUs available)");
  flags->Add("language", "en",
             "language of notes without a `lang` frontmatter field (ISO 639-1): how words are stemmed");
  flags->Add("field-weights", "",
             "BM25F weights, e.g. title:6,aliases:5,anchors:3,headings:3,tags:3,path:2,body:1 (default: those)");
  flags->Add("vector-weight", "0.25",
             "hybrid search: weight of the vector similarities against the text scores' 1 (each scaled to 0..1)");
  flags->Add("feedback-weight", "0",
             "pseudo-relevance feedback: weight of the best notes' title and heading words added to a query (0 = off)");
  flags->Add("replica-id", "",
             "this replica's name: its notes consumer is search-<id>; distinct per replica sharing a NATS"
             " (default: the hostname)");
}

namespace {

bool IsIdChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

constexpr size_t kMaxReplicaId = 64;

// The hostname with characters a consumer name may not hold as '-'.
std::string DefaultReplicaId() {
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "default";
  std::string id(host);
  for (char& c : id) {
    if (!IsIdChar(c)) c = '-';
  }
  if (id.size() > kMaxReplicaId) id.resize(kMaxReplicaId);
  return id;
}

Result<std::string> ReadReplicaId(const std::string& flag) {
  if (flag.empty()) return DefaultReplicaId();
  if (flag.size() > kMaxReplicaId) return Status::Invalid("--replica-id must be at most 64 characters");
  for (char c : flag) {
    if (!IsIdChar(c)) return Status::Invalid("--replica-id may hold only [-_a-zA-Z0-9], not \"" + flag + "\"");
  }
  return flag;
}

// "title:6,body:1" over RankWeights' defaults.
Status ReadFieldWeights(const std::string& flag, RankWeights* w) {
  static constexpr std::string_view kNames[kFieldCount] = {"title", "aliases", "anchors", "headings",
                                                           "tags", "path", "body"};
  std::string_view rest = flag;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    size_t colon = item.find(':');
    const auto* name = std::find(std::begin(kNames), std::end(kNames), item.substr(0, colon));
    std::string value(colon == std::string_view::npos ? "" : item.substr(colon + 1));
    char* end = nullptr;
    double v = std::strtod(value.c_str(), &end);
    if (name == std::end(kNames) || value.empty() || *end != '\0' || !(v >= 0 && v <= 100)) {
      return Status::Invalid("--field-weights: \"" + std::string(item) +
                             "\" is not field:weight with a field of title, aliases, anchors, headings, tags, path,"
                             " body and a weight in 0..100");
    }
    w->weight[name - std::begin(kNames)] = v;
  }
  return Status::Ok();
}

}  // namespace

std::string SearchDurable(std::string_view replica_id) { return "search-" + std::string(replica_id); }

Result<SearchConfig> ReadSearchConfig(const Flags& flags, const ServiceBasics& basics) {
  auto dim = flags.GetInt("embed-dim");
  auto embed_batch = flags.GetInt("embed-batch");
  auto related_k = flags.GetInt("related-k");
  auto threshold = flags.GetInt("hnsw-threshold");
  auto batch = flags.GetInt("batch");
  auto query_threads = flags.GetInt("query-threads");
  for (const auto* r : {&dim, &embed_batch, &related_k, &threshold, &batch, &query_threads}) {
    if (!r->ok()) return r->status();
  }
  if (*dim < 8 || *dim > 8192) return Status::Invalid("--embed-dim must be in 8..8192");
  if (*related_k < 1 || *related_k > bus::kMaxRelatedK) {
    return Status::Invalid("--related-k must be in 1.." + std::to_string(bus::kMaxRelatedK));
  }
  if (*batch < 1 || *batch > 4096) return Status::Invalid("--batch must be in 1..4096");
  if (*embed_batch < 1 || *embed_batch > 4096) return Status::Invalid("--embed-batch must be in 1..4096");
  const std::string& min_vec = flags.Get("min-vector-score");
  char* end = nullptr;
  double min_vector_score = std::strtod(min_vec.c_str(), &end);
  if (min_vec.empty() || end == nullptr || *end != '\0' || !(min_vector_score >= 0 && min_vector_score <= 1)) {
    return Status::Invalid("--min-vector-score must be a number in 0..1, not \"" + min_vec + "\"");
  }
  auto replica_id = ReadReplicaId(flags.Get("replica-id"));
  if (!replica_id.ok()) return replica_id.status();
  SearchConfig c;
  c.engine.language = Stemmer::Normalize(flags.Get("language"));
  if (!Stemmer::Supported(c.engine.language)) {
    return Status::Invalid("--language \"" + flags.Get("language") + "\" is not a language the stemmer knows (en, de, fr, es, it, pt, nl, sv, da, no, fi, ru, ...)");
  }
  if (Status s = ReadFieldWeights(flags.Get("field-weights"), &c.engine.rank); !s.ok()) return s;
  const std::string& vw = flags.Get("vector-weight");
  double vector_weight = std::strtod(vw.c_str(), &end);
  if (vw.empty() || *end != '\0' || !(vector_weight >= 0 && vector_weight <= 10)) {
    return Status::Invalid("--vector-weight must be a number in 0..10, not \"" + vw + "\"");
  }
  c.engine.fusion_vector_weight = vector_weight;
  const std::string& fw = flags.Get("feedback-weight");
  double feedback_weight = std::strtod(fw.c_str(), &end);
  if (fw.empty() || *end != '\0' || !(feedback_weight >= 0 && feedback_weight <= 1)) {
    return Status::Invalid("--feedback-weight must be a number in 0..1, not \"" + fw + "\"");
  }
  c.engine.feedback_weight = feedback_weight;
  c.replica_id = std::move(*replica_id);
  c.basics = basics;
  c.engine.hybrid_min_vector_score = static_cast<float>(min_vector_score);
  c.engine.data_dir = flags.Get("data");
  c.engine.related_k = static_cast<size_t>(*related_k);
  c.engine.hnsw_threshold = static_cast<size_t>(*threshold);
  c.engine.embed_batch = static_cast<size_t>(*embed_batch);
  c.embed_dim = static_cast<size_t>(*dim);
  c.http_embedder = !flags.Get("embed-url").empty();
  if (c.http_embedder) {
    c.embed.url = flags.Get("embed-url");
    c.embed.model = flags.Get("embed-model");
    c.embed.dim = c.embed_dim;
    c.embed.batch_size = static_cast<size_t>(*embed_batch);
    if (const char* key = std::getenv(flags.Get("embed-api-key-env").c_str())) c.embed.api_key = key;
  }
  c.batch = static_cast<int>(*batch);
  c.query_threads = static_cast<size_t>(*query_threads);
  return c;
}

}  // namespace folio::search
