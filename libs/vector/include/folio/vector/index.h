// Vector indexes: nearest-neighbour search by cosine similarity.
//
// Vectors are expected L2-normalised (as Embedder produces them), so cosine is
// the dot product; the index stores and scores whatever it is given. Ids are
// caller-chosen uint64 (e.g. note id << 8 | chunk number); Upsert of a known
// id replaces its vector.
//
// Implementations: ExactIndex (brute force, exact; best for small sites),
// HnswIndex (approximate, hnswlib graph; for large ones) and AutoIndex (exact
// until a size threshold, then HNSW).
//
// Thread-safety (all three): const methods (Search, size, Save, ForEach) may
// run concurrently with each other; Upsert, Remove, Load and setters need
// exclusive access. The caller holds the lock (e.g. a std::shared_mutex:
// shared for queries, unique for updates).
//
// File format (Save/Load; shared by all implementations; little-endian):
//   offset  size          field
//   0       8             magic "FOLIOVEC"
//   8       4   u32       format version (1)
//   12      4   u32       dim
//   16      8   u64       count
//   24      8*count u64   ids
//   ...     4*dim*count   f32 vectors, row-major, in id order of the ids array
//   end-4   4   u32       CRC-32 (IEEE, as zlib crc32) of every byte before it
// Files hold vectors only; HnswIndex rebuilds its graph on Load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "folio/core/status.h"

namespace folio::vector {

struct Hit {
  uint64_t id = 0;
  float score = 0;  // dot product; 1 = same direction
  bool operator==(const Hit&) const = default;
};

class VectorIndex {
 public:
  virtual ~VectorIndex();

  virtual size_t dim() const = 0;
  // Number of live (searchable) vectors.
  virtual size_t size() const = 0;

  // Inserts or replaces the vector for id.
  // Fails with kInvalidArgument if v.size() != dim() or v has NaN/Inf.
  virtual Status Upsert(uint64_t id, std::span<const float> v) = 0;
  // Removes id; returns false if it was not present.
  virtual bool Remove(uint64_t id) = 0;
  // The k best hits, sorted by score descending, ties by id ascending; fewer
  // than k if the index is smaller. REQUIRES: query.size() == dim() (otherwise
  // returns no hits).
  virtual std::vector<Hit> Search(std::span<const float> query, size_t k) const = 0;
  // Inserts or replaces ids[i] with row i of data (ids.size() x dim()), as
  // Upsert of each in order would. Checks every vector first: on failure
  // nothing changes. HnswIndex inserts on several threads.
  // REQUIRES: ids unique.
  virtual Status UpsertMany(std::span<const uint64_t> ids, std::span<const float> data);
  // Search for each row of queries (rows of dim() floats): out[i] is what
  // Search(row i, k) returns. ExactIndex scans its vectors once per block of
  // queries instead of once per query (several times faster on large sets).
  virtual std::vector<std::vector<Hit>> SearchMany(std::span<const float> queries, size_t k) const;
  // Calls fn for every live vector, in unspecified order.
  virtual void ForEach(const std::function<void(uint64_t id, std::span<const float> v)>& fn) const = 0;
  // The stored vector of id (valid until the next non-const call), or an
  // empty span if id is not present.
  virtual std::span<const float> Get(uint64_t id) const = 0;

  // Writes the file atomically (temp file, fsync, rename).
  // Fails with kUnavailable on I/O errors.
  Status Save(const std::string& path) const;
  // Replaces the contents with the file's. Fails with kNotFound if missing,
  // kInvalidArgument if corrupt (bad magic, version, size, checksum, duplicate
  // ids, non-finite values) or if the file's dim differs from dim(). On
  // failure the index is unchanged.
  Status Load(const std::string& path);

 protected:
  // Replaces all contents (used by Load). ids are unique; data is ids.size()*dim().
  virtual void Reset(std::vector<uint64_t> ids, std::vector<float> data) = 0;
};

// Exact search: one contiguous float array (row per id) plus an id array;
// a scan with an auto-vectorised dot product and a bounded top-k heap.
// Remove swaps the last row into the hole. ~O(n*dim) per query.
class ExactIndex final : public VectorIndex {
 public:
  explicit ExactIndex(size_t dim);  // REQUIRES: dim > 0
  size_t dim() const override { return dim_; }
  size_t size() const override { return ids_.size(); }
  Status Upsert(uint64_t id, std::span<const float> v) override;
  bool Remove(uint64_t id) override;
  std::vector<Hit> Search(std::span<const float> query, size_t k) const override;
  std::vector<std::vector<Hit>> SearchMany(std::span<const float> queries, size_t k) const override;
  void ForEach(const std::function<void(uint64_t, std::span<const float>)>& fn) const override;
  std::span<const float> Get(uint64_t id) const override;

  // Row access for rebuilds: ids()[i] has vector data()[i*dim, (i+1)*dim).
  const std::vector<uint64_t>& ids() const { return ids_; }
  const std::vector<float>& data() const { return data_; }

 protected:
  void Reset(std::vector<uint64_t> ids, std::vector<float> data) override;

 private:
  size_t dim_;
  std::vector<uint64_t> ids_;
  std::vector<float> data_;                    // ids_.size() * dim_
  std::unordered_map<uint64_t, size_t> row_;   // id -> row
};

struct HnswOptions {
  size_t m = 16;                 // graph degree (hnswlib M); default 16
  size_t ef_construction = 200;  // build-time beam width; default 200
  // Query beam width (>= k is used); default 192: recall@10 0.97 at p50 ~0.7 ms on
  // 100k x 384-d hashed note vectors (64 gives 0.89, 128 0.95); see vector-bench.
  size_t ef_search = 192;
  size_t initial_capacity = 1024;  // grows by doubling; default 1024
  size_t build_threads = 0;      // threads for bulk builds (Load, rebuilds); 0 = hardware
  uint64_t seed = 100;           // level generator seed; default 100 (hnswlib's)
};

class HnswGraph;  // hnswlib wrapper; defined in src/hnsw_index.cc

// Approximate search with an HNSW graph (hnswlib 0.6.2, inner product).
// hnswlib 0.6.2 has no replace_deleted, so an update marks the old graph node
// deleted and adds the new vector under a fresh internal label; when deleted
// nodes outnumber live ones (and exceed 1024) the graph is rebuilt from the
// live vectors. Memory: about dim*4 + m*8 + ~40 bytes per node.
class HnswIndex final : public VectorIndex {
 public:
  explicit HnswIndex(size_t dim, HnswOptions options = {});  // REQUIRES: dim > 0
  ~HnswIndex() override;
  size_t dim() const override { return dim_; }
  size_t size() const override { return label_of_.size(); }
  Status Upsert(uint64_t id, std::span<const float> v) override;
  // Marks replaced ids deleted, grows the graph once, then adds the rows on
  // options.build_threads threads (hnswlib's addPoint is thread-safe for
  // distinct labels).
  Status UpsertMany(std::span<const uint64_t> ids, std::span<const float> data) override;
  bool Remove(uint64_t id) override;
  std::vector<Hit> Search(std::span<const float> query, size_t k) const override;
  void ForEach(const std::function<void(uint64_t, std::span<const float>)>& fn) const override;
  std::span<const float> Get(uint64_t id) const override;

  // Bulk build: replaces the contents with rows of `data` (ids.size() x dim),
  // inserting on options.build_threads threads. REQUIRES: ids unique, finite.
  void Build(const std::vector<uint64_t>& ids, std::span<const float> data);
  void set_ef_search(size_t ef);  // REQUIRES: exclusive access
  size_t ef_search() const { return options_.ef_search; }
  size_t deleted_nodes() const;   // graph nodes marked deleted, awaiting rebuild

 protected:
  void Reset(std::vector<uint64_t> ids, std::vector<float> data) override;

 private:
  void Compact();

  size_t dim_;
  HnswOptions options_;
  std::unique_ptr<HnswGraph> graph_;
  std::unordered_map<uint64_t, size_t> label_of_;  // id -> live internal label
  std::vector<uint64_t> id_of_;                    // label -> id (dead labels too)
};

struct AutoOptions {
  size_t threshold = 20000;  // switch to HNSW when size() exceeds this; default 20,000
  HnswOptions hnsw;          // used after the switch
};

// Exact below the threshold; when an Upsert takes size() above it, builds an
// HnswIndex from the exact vectors once and drops the exact copy. It stays
// HNSW afterwards (no switching back on removes); Load picks exact or HNSW by
// the file's count.
//
// The switch builds a graph of every vector, seconds at the default
// threshold. A caller whose writes all come from one thread, and whose
// readers share the index under a shared lock, can build that graph ahead
// without blocking readers: WouldSwitch(n) under any lock, PrepareHnsw()
// (const) under the shared lock, then AdoptHnsw() under the exclusive lock
// before the writes. A mutation between the two voids the prepared graph
// (AdoptHnsw then does nothing and the next write switches as usual).
class AutoIndex final : public VectorIndex {
 public:
  explicit AutoIndex(size_t dim, AutoOptions options = {});
  size_t dim() const override { return dim_; }
  size_t size() const override;
  Status Upsert(uint64_t id, std::span<const float> v) override;
  Status UpsertMany(std::span<const uint64_t> ids, std::span<const float> data) override;
  bool Remove(uint64_t id) override;
  std::vector<Hit> Search(std::span<const float> query, size_t k) const override;
  std::vector<std::vector<Hit>> SearchMany(std::span<const float> queries, size_t k) const override;
  void ForEach(const std::function<void(uint64_t, std::span<const float>)>& fn) const override;
  std::span<const float> Get(uint64_t id) const override;

  bool is_hnsw() const { return hnsw_ != nullptr; }

  // True if still exact and `added` more vectors would take it over the threshold.
  bool WouldSwitch(size_t added) const { return !hnsw_ && exact_->size() + added > options_.threshold; }
  struct Prepared {
    std::unique_ptr<HnswIndex> index;
    uint64_t generation = 0;  // of the contents it was built from
  };
  // An HNSW copy of the current (exact) contents. nullptr index if already HNSW.
  Prepared PrepareHnsw() const;
  // Switches to the prepared graph if nothing changed since PrepareHnsw();
  // returns whether it did.
  bool AdoptHnsw(Prepared prepared);

 protected:
  void Reset(std::vector<uint64_t> ids, std::vector<float> data) override;

 private:
  void SwitchToHnsw();

  size_t dim_;
  AutoOptions options_;
  uint64_t generation_ = 0;  // bumped by every mutation
  std::unique_ptr<ExactIndex> exact_;  // exactly one of exact_, hnsw_ is set
  std::unique_ptr<HnswIndex> hnsw_;
};

// The score Search gives b for query a (their dot product; cosine for
// normalised vectors), computed the same way. REQUIRES: a.size() == b.size().
float Score(std::span<const float> a, std::span<const float> b);

// Sorts hits by score descending, then id ascending (the order Search returns).
void SortHits(std::vector<Hit>* hits);

}  // namespace folio::vector
