// Engine: folio-search's model of every site it indexes: vectors in memory
// (a note index and a chunk index per site), the full-text index and note
// texts in SQLite (SearchStore), and each note's related list.
//
// Writes: Apply() takes a batch of note events from the "notes" stream,
// embeds what changed (a note whose title, tags and text hash the same as
// before is not embedded again), commits it to SQLite in one transaction,
// updates the in-memory indexes, and recomputes the related lists the batch
// can change: the changed notes' own lists and the lists naming a changed
// note (it may leave them) by a search; the lists a changed note enters (it
// scores above their k-th entry) by merging it in. On an exact index the
// lists it enters are found by scoring it against every note, so the lists
// stay exactly what a full recomputation gives; on HNSW by probing its
// nearest neighbours. It returns the lists that changed, which the caller publishes
// and then confirms with MarkPublished(). Nothing about related notes is
// computed per query.
//
// Reads: Search() and Related() answer queries from the in-memory indexes
// plus a per-thread read connection for texts and full text.
//
// Threading: Apply, MarkPublished, PendingUpdates and Load run on one thread
// (the consumer). Search and Related may run on any number of other threads
// at the same time: the indexes are behind a shared_mutex (shared for
// queries, exclusive only while a committed batch is swapped in).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <thread>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "folio/bus/note_schema.h"
#include "folio/bus/related_schema.h"
#include "folio/bus/search_schema.h"
#include "folio/core/status.h"
#include "folio/core/thread_pool.h"
#include "folio/vector/embedder.h"
#include "folio/vector/index.h"
#include "fulltext.h"
#include "store.h"

namespace folio::search {

struct EngineOptions {
  std::string data_dir;            // holds search.db
  size_t related_k = 10;           // length of each note's related list
  float related_min_score = 0.1f;  // notes less similar than this are not "related"
  // A hybrid search shows a note the words of the query do not find only if
  // its vector is at least this similar: a nonsense query ("zzqxvw") then
  // finds nothing instead of the nearest of unrelated notes. 0.2 suits the
  // built-in embedder: random letters score up to ~0.14 against the example
  // vault and ~0.18 against synthetic notes, while the vector-only hits of
  // real queries score 0.2-0.3. A model behind --embed-url needs its own value.
  float hybrid_min_vector_score = 0.2f;
  size_t hnsw_threshold = 20000;   // vectors per site index before it switches to HNSW
  size_t hnsw_ef_search = 192;     // query beam width of HNSW indexes; default 192 (recall@10 ~0.97 at 100k notes)
  // Build beam width of the section (chunk) HNSW index; default 100. Note
  // vectors keep hnswlib's 200 (related lists and recall figures depend on
  // them); sections are one signal of several in a search and outnumber
  // notes ~7 to 1, so their inserts dominate an import.
  size_t chunk_ef_construction = 100;
  size_t chunk_chars = 1500;       // notes longer than this are also embedded by section
  size_t embed_batch = 64;         // texts per Embed call
  // The language of notes without `lang`: Snowball stemming of the site's
  // words and of queries (an ISO 639-1 code Stemmer::Supported knows).
  std::string language = "en";
  RankWeights rank;                // BM25F field weights (fulltext.h)
  // Hybrid fusion: the text scores scaled by the best one, the similarities
  // from the lowest to the highest of the candidates, summed with these
  // weights (chosen on loadtest/search-eval: reciprocal rank fusion and
  // heavier vector weights rank the built-in embedder's loose matches too
  // high, README "Search quality").
  double fusion_text_weight = 1.0, fusion_vector_weight = 0.25;
  // Pseudo-relevance feedback: the title and heading words most typical of
  // the best `feedback_docs` notes join the query as one more, optional
  // word at feedback_weight. Off (0) by default: on search-eval it lowers
  // top-3 by 2-7 points.
  size_t feedback_docs = 3, feedback_words = 4;
  double feedback_weight = 0.0;
  // Full-text search lists the notes that hold every word (common ones
  // aside) before the others. Off by default: a reader's question rarely has
  // all its words in the note that answers it (search-eval: -4 points).
  bool all_words_first = false;
};

struct ApplyStats {
  size_t events = 0;
  size_t embedded_notes = 0;   // notes whose vectors were computed
  size_t embedded_texts = 0;   // texts sent to the embedder (notes + chunks)
  size_t unchanged = 0;        // events whose content was already indexed
  size_t deleted = 0;
  size_t related_recomputed = 0;  // lists recomputed by a search
  size_t related_merged = 0;      // lists that only gained entries (a merge, no search)
  size_t related_changed = 0;     // lists whose note sequence changed
  double embed_ms = 0, commit_ms = 0, related_ms = 0;
};

class Engine {
 public:
  // Opens the store and loads every stored vector and related list into
  // memory (no embedding). Fails if the store cannot be opened. If the
  // embedder differs from the one that made the stored vectors (another
  // Describe()), every note is embedded again from its stored text.
  static Result<std::unique_ptr<Engine>> Open(EngineOptions options, vector::Embedder* embedder,
                                              ThreadPool* pool);
  ~Engine();

  // Applies events in order (later versions win; an event older than what
  // is stored is skipped, so redelivery is harmless). A restored mark
  // (bus::NoteEvent::restored) forgets the site's stored versions, so the
  // events after it apply whatever their version, and returns every related
  // list of the site to publish again (a restored ingest may hold older ones). On failure (embedder
  // down, disk error) nothing is changed and the same batch can be retried.
  // Returns the related lists to publish.
  Result<std::vector<bus::RelatedUpdate>> Apply(std::span<const bus::NoteEvent> events, ApplyStats* stats);
  // Related lists computed but not yet confirmed published (after a crash or
  // a failed publish): what the caller must (re)publish.
  Result<std::vector<bus::RelatedUpdate>> PendingUpdates();
  // Confirms that updates returned by Apply/PendingUpdates were published.
  Status MarkPublished(const std::vector<bus::RelatedUpdate>& updates);

  // Any thread.
  bus::SearchReply Search(const bus::SearchQuery& q);
  bus::SearchReply Related(const bus::RelatedQuery& q);

  size_t notes() const { return notes_count_.load(); }
  // True when an upgrade emptied the full-text index: the caller must read
  // the notes stream again from its start, then call ReplayStarted().
  bool NeedsReplay() const { return needs_replay_.load(); }
  Status ReplayStarted();
  size_t vectors() const { return vectors_count_.load(); }
  // Every site's vocabulary: distinct words, and its memory (estimate).
  size_t vocabulary_words() const;
  size_t vocabulary_bytes() const;

  struct Site;  // per-site in-memory state (engine_internal.h)

 private:
  // Private types and helpers of the engine*.cc files: engine_internal.h.
  struct ApplyWork;
  struct RelatedPlan;
  struct ReaderConn;
  using ChangedNotes = std::map<Site*, std::unordered_set<int64_t>>;

  Engine(EngineOptions options, vector::Embedder* embedder, ThreadPool* pool, std::unique_ptr<SearchStore> store);
  Status Load();
  Status Reembed();
  // Apply's two kinds of step: note events (no restored mark among them), and one restored mark.
  Status ApplyNotes(std::span<const bus::NoteEvent> events, ApplyStats* stats,
                    std::vector<bus::RelatedUpdate>* updates);
  Status ApplyRestored(const bus::NoteEvent& mark, std::vector<bus::RelatedUpdate>* updates);
  Site* SiteFor(const std::string& site);  // creates; REQUIRES: exclusive lock
  Site* FindSite(std::string_view site) const;  // nullptr if none; REQUIRES: a lock on mu_
  void CountVectors();  // refreshes notes_count_, vectors_count_; REQUIRES: a lock on mu_
  ReaderConn* Reader();  // this thread's read connection; nullptr if it cannot be opened

  // Apply's steps (engine_apply.cc), on the consumer thread. Plan: the latest
  // event per note that changes something. Embed: vectors of the notes whose
  // content hash changed (no lock held). Commit: one SQLite transaction, rolled
  // back on failure. SwapIn: the batch into memory, a slice at a time under
  // the exclusive lock; returns the notes whose related lists may change.
  Result<std::vector<ApplyWork>> PlanApply(std::span<const bus::NoteEvent> events, ApplyStats* stats);
  Status EmbedWork(std::vector<ApplyWork>* work, ApplyStats* stats);
  Result<std::vector<std::vector<float>>> EmbedTexts(const std::vector<std::string>& texts);
  Status CommitWork(std::vector<ApplyWork>* work);
  Status CommitNote(ApplyWork* w);
  // Words the vocabulary loses and gains with w (the stored note's, the event's).
  Status DiffWords(ApplyWork* w);
  // The link texts of note `path` as its anchors field holds them.
  Result<std::string> Anchors(const std::string& site, const std::string& path, const std::string& title);
  Status UpdateAnchors(const std::string& site, const std::vector<std::string>& targets);
  void LoadWords();  // every site's vocabulary from the store (Load)
  ChangedNotes SwapIn(std::vector<ApplyWork>* work, ApplyStats* stats);
  void SwapSlice(std::span<ApplyWork> slice, std::span<Site* const> site_of, ChangedNotes* changed,
                 ApplyStats* stats);

  // Related lists (engine_related.cc), on the consumer thread.
  // Recomputes related lists of `changed` notes (and those they enter or
  // leave) in `site`; stores changed lists; appends them to *out.
  Status UpdateRelated(Site* site, const std::unordered_set<int64_t>& changed, bool all,
                       std::vector<bus::RelatedUpdate>* out, ApplyStats* stats);
  // The lists `changed` makes UpdateRelated set, with their fresh contents.
  // REQUIRES: a lock on mu_.
  RelatedPlan PlanRelated(const Site& site, const std::unordered_set<int64_t>& changed, bool all);
  // Stores the lists of plan whose notes changed (`publish`), clears the
  // dirty flag of `changed`; one transaction, rolled back on failure.
  Status StoreRelated(const Site& site, RelatedPlan* plan, const std::vector<int64_t>& publish,
                      const std::unordered_set<int64_t>& changed);
  // Swaps plan's lists into `site` (exclusive lock); the update naming `publish`.
  bus::RelatedUpdate InstallRelated(Site* site, std::string site_name, const std::unordered_set<int64_t>& changed,
                                    const std::vector<int64_t>& publish, RelatedPlan* plan);
  Status RecomputeDirty(std::vector<bus::RelatedUpdate>* out);
  Status AppendUnpublished(std::vector<bus::RelatedUpdate>* out);

  EngineOptions options_;
  vector::Embedder* embedder_;
  ThreadPool* pool_;
  std::unique_ptr<SearchStore> store_;
  std::string embedder_id_;

  mutable std::shared_mutex mu_;
  std::map<std::string, std::unique_ptr<Site>, std::less<>> sites_;  // GUARDED_BY(mu_)
  std::atomic<size_t> notes_count_{0}, vectors_count_{0};
  std::atomic<bool> needs_replay_{false};

  std::unique_ptr<FullTextIndex> fts_;  // on store_'s connection; the consumer thread only

  std::mutex readers_mu_;
  std::vector<std::unique_ptr<ReaderConn>> readers_;  // one per querying thread, found by thread id
  std::vector<std::thread::id> reader_threads_;
};

// What is embedded for a note as a whole: title (twice, it matters most),
// tags and text.
std::string NoteEmbedText(const bus::NoteEvent& e);

}  // namespace folio::search
