// FullTextIndex: folio-search's keyword search, an SQLite FTS5 table inside
// the search service's database. One table serves every site:
//
//   fts2(site UNINDEXED, title, aliases, anchors, headings, tags, path, body)
//   rowid = the caller's note id
//   tokenize = 'unicode61 remove_diacritics 2'  ("cafe" finds "café")
//
// A note's fields: its title; its frontmatter aliases; `anchors`, the texts
// other notes link to it with ("[[Graph view|connections]]" gives Graph
// view "connections"), which the caller keeps up to date with SetAnchors;
// its headings; its tags; its vault path's folder and file names; its text.
//
// Ranking is BM25F (Robertson & Zaragoza): each field's hits are weighted
// and length-normalised (RankWeights, chosen on loadtest/search-eval), summed
// per query word, and saturated once per word. A query word is a group of
// alternatives: the word as typed, words of the same stem, corrections of a
// typo, expansions; each alternative counts with its own weight (below 1
// for anything but the reader's own word), and each group with its idf from
// the site's vocabulary (the caller's RankPlan: query.h). A small
// coordination factor favours notes that hold more of the query's words.
//
// Text is segmented before SQLite sees it (SegmentForIndex): unicode61 would keep a run of
// Han/kana/hangul as one token, so "東京" could not find "東京都庁". Each
// CJK run becomes its overlapping bigrams plus its last character ("東京都庁"
// -> "東京 京都 都庁 庁"); a query run becomes the phrase of its bigrams, and
// a one-character run the prefix query "東"*, which the bigrams and the
// trailing character make match anywhere in a run.
//
// Queries are never passed raw to MATCH: MatchExpression quotes every term.
//
// Ownership: a FullTextIndex borrows a caller-owned sqlite::Db, which must
// outlive it, and owns statements it prepares on first use. It never begins
// or commits a transaction: the caller's transaction covers its writes, so a
// note's row and its index entry commit (or roll back) together.
// Threading: one thread at a time, the one that owns the Db (the service's
// writer or a query thread's reader connection). Cheap to construct per use.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"
#include "folio/sqlite/db.h"
#include "folio/sqlite/fts5.h"
#include "snippet.h"

namespace folio::search {

struct TextHit {
  int64_t doc_id = 0;
  double score = 0;       // BM25F: > 0, higher is better; compare only within one Search
  bool all_terms = true;  // false: from the any-word fallback, listed after every all-words hit
};

// A note's fields as FullTextIndex indexes them (plain text, caller-owned).
struct NoteFields {
  std::string_view title, aliases, anchors, headings, tags, path, body;
};

// The FTS5 columns after `site`, in order; kFieldCount of them.
enum Field : int { kTitle = 0, kAliases, kAnchors, kHeadings, kTags, kPath, kBody, kFieldCount };

// Per-field weight and length normalisation (BM25F's w_f and b_f), the
// saturation k1, and two factors on a row's score. Chosen on
// loadtest/search-eval (README "Search quality"): titles count 14 times the
// text and saturate late (k1 3), long texts are normalised hard (b 0.95),
// and a note whose title the query covers ranks up (title_coverage 1.5:
// "examples" finds "Examples" above notes that use the word a lot).
struct RankWeights {
  double weight[kFieldCount] = {14.0, 5.0, 5.0, 3.0, 3.0, 2.0, 1.0};
  double b[kFieldCount] = {0.3, 0.3, 0.5, 0.2, 0.3, 0.3, 0.95};
  double k1 = 3.0;
  double coordination = 0.2;    // score *= (1 - c) + c * (idf share of the query's words the note holds)
  double title_coverage = 1.5;  // score *= 1 + t * (share of the title's words the query holds)
};

// How one query is scored: phrase i of the MATCH expression belongs to word
// group group_of[i] and counts weight[i] times; group g weighs idf[g].
struct RankPlan {
  std::vector<int> group_of;
  std::vector<double> weight;
  std::vector<double> idf;
  RankWeights w;
};

// One alternative of a query word, as MatchExpression writes it.
struct Alternative {
  std::string text;     // a folded word, or a CJK run
  bool prefix = false;  // matches words starting with text
  bool cjk = false;     // a CJK run: the phrase of its bigrams
  double weight = 1.0;
};
using WordGroup = std::vector<Alternative>;

class FullTextIndex {
 public:
  static constexpr size_t kMaxResults = 1000;  // Search's k is capped at this
  // Matches a query scores at most (past it, the first ones by note id):
  // bounds a query's time when its words are in most notes.
  static constexpr size_t kMaxScored = 20000;

  // Creates the fts2 table if it does not exist and drops the schema-1 table
  // `fts` if present; true in *rebuilt when it had to (the caller then indexes
  // every note again). kInternal on SQLite errors.
  [[nodiscard]] static Status CreateSchema(sqlite::Db* db, bool* dropped_old = nullptr);
  // Registers the ranking function on a connection (every connection that
  // runs Search). kInternal if it cannot.
  [[nodiscard]] static Status RegisterRanking(sqlite::Db* db);

  // REQUIRES: db != nullptr, CreateSchema and RegisterRanking have run on
  // it, db outlives this object.
  explicit FullTextIndex(sqlite::Db* db) : db_(db) {}
  FullTextIndex(const FullTextIndex&) = delete;
  FullTextIndex& operator=(const FullTextIndex&) = delete;

  // Indexes note `doc_id` of `site`, replacing whatever was indexed under
  // doc_id before (even for another site: ids are unique per database).
  // Fields are plain text; the caller keeps the original for snippets (the
  // table stores only the segmented form). Fails with kInvalidArgument if a
  // field is not valid UTF-8, kInternal on SQLite errors; then the caller
  // rolls back its transaction.
  [[nodiscard]] Status Upsert(int64_t doc_id, std::string_view site, const NoteFields& f);
  // Replaces the anchors field of an indexed note (OK if it is not indexed).
  [[nodiscard]] Status SetAnchors(int64_t doc_id, std::string_view anchors);
  // Removes note doc_id; OK if it is not indexed. kInternal on SQLite errors.
  [[nodiscard]] Status Remove(int64_t doc_id);
  // Removes every note of `site`. kInternal on SQLite errors.
  [[nodiscard]] Status RemoveSite(std::string_view site);

  // The best min(k, kMaxResults) notes of `site` holding every group's
  // words (all_words) or any of them, best first by `plan`. Empty groups or
  // k == 0 give an empty vector. kInternal on SQLite errors.
  [[nodiscard]] Result<std::vector<TextHit>> Search(std::string_view site, std::span<const WordGroup> groups,
                                                    const RankPlan& plan, size_t k, bool all_words);
  // The same for notes holding any of `groups` that also hold any word of
  // `selector` (a subset of the groups: the rarer words, so that a query
  // whose words are in most notes scores only the notes that can rank).
  // `plan` is PlanFor(groups, ...); the selector's phrases count nothing.
  [[nodiscard]] Result<std::vector<TextHit>> SearchSelected(std::string_view site, std::span<const WordGroup> selector,
                                                            std::span<const WordGroup> groups, const RankPlan& plan,
                                                            size_t k);

 private:
  Result<sqlite::Stmt*> Prepared(std::optional<sqlite::Stmt>* slot, std::string_view sql);
  Result<std::vector<TextHit>> Run(std::string_view site, const std::string& match, const RankPlan& plan, size_t k,
                                   bool all_words);

  sqlite::Db* db_;
  std::optional<sqlite::Stmt> insert_, delete_, delete_site_, search_, anchors_;
};

// The RankPlan for groups: group_of and weight per phrase in the order
// MatchExpression writes them; idf as given (one per group).
RankPlan PlanFor(std::span<const WordGroup> groups, std::vector<double> idf, const RankWeights& w);

// BM25F score of one row (the ranking function; exposed for tests).
double ScoreRow(const RankPlan& plan, const sqlite::Fts5Row& row);

// What the index stores for a text: CJK runs as bigrams plus their last
// character, separators as single spaces, fullwidth ASCII as ASCII; other
// characters as they are. Changing it requires reindexing every note.
// REQUIRES: text is valid UTF-8 (invalid bytes become separators).
std::string SegmentForIndex(std::string_view text);

// The FTS5 MATCH expression for `groups`: every alternative quoted, prefix
// alternatives and one-character CJK runs with '*', CJK runs as phrases of
// bigrams; the alternatives of a group joined by OR (in parentheses when
// more than one), groups joined by " AND " or " OR ". Returns "" for no
// groups (not a valid expression: do not run it).
std::string MatchExpression(std::span<const WordGroup> groups, bool all_words);

}  // namespace folio::search
