// FullTextIndex: folio-search's keyword search, an SQLite FTS5 table inside
// the search service's database. One table serves every site:
//
//   fts(site UNINDEXED, title, body)   rowid = the caller's note id
//   tokenize = 'unicode61 remove_diacritics 2'  ("cafe" finds "café")
//
// Ranking is BM25 with a title match worth 5 body matches. Text is segmented
// before SQLite sees it (SegmentForIndex): unicode61 would keep a run of
// Han/kana/hangul as one token, so "東京" could not find "東京都庁". Each
// CJK run becomes its overlapping bigrams plus its last character ("東京都庁"
// -> "東京 京都 都庁 庁"); a query run becomes the phrase of its bigrams, and
// a one-character run the prefix query "東"*, which the bigrams and the
// trailing character make match anywhere in a run.
//
// Queries are never passed raw to MATCH: MatchExpression quotes every term.
// Terms are ANDed; the last word (2+ characters) matches as a prefix so that
// as-you-type works ("embed" finds "embedding"). If fewer than k notes hold
// every term, notes holding any term fill the rest (TextHit::all_terms false).
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
#include "snippet.h"

namespace folio::search {

struct TextHit {
  int64_t doc_id = 0;
  double score = 0;       // -BM25: > 0, higher is better; compare only within one Search
  bool all_terms = true;  // false: from the any-term fallback, listed after every all-terms hit
};

class FullTextIndex {
 public:
  static constexpr size_t kMaxResults = 1000;  // Search's k is capped at this

  // Creates the fts table if it does not exist. kInternal on SQLite errors.
  // REQUIRES: db != nullptr.
  [[nodiscard]] static Status CreateSchema(sqlite::Db* db);

  // REQUIRES: db != nullptr, CreateSchema has run on its database, db
  // outlives this object.
  explicit FullTextIndex(sqlite::Db* db) : db_(db) {}
  FullTextIndex(const FullTextIndex&) = delete;
  FullTextIndex& operator=(const FullTextIndex&) = delete;

  // Indexes note `doc_id` of `site`, replacing whatever was indexed under
  // doc_id before (even for another site: ids are unique per database).
  // `title` and `body` are plain text; the caller keeps the original for
  // snippets (the table stores only the segmented form). Fails with
  // kInvalidArgument if title or body is not valid UTF-8, kInternal on SQLite
  // errors; then the caller rolls back its transaction.
  [[nodiscard]] Status Upsert(int64_t doc_id, std::string_view site, std::string_view title,
                              std::string_view body);
  // Removes note doc_id; OK if it is not indexed. kInternal on SQLite errors.
  [[nodiscard]] Status Remove(int64_t doc_id);
  // Removes every note of `site`. kInternal on SQLite errors.
  [[nodiscard]] Status RemoveSite(std::string_view site);

  // The best min(k, kMaxResults) notes of `site` for `query`, best first
  // (see the file comment). A query without words ("", "?!") or k == 0 gives
  // an empty vector. Fails with kTooLarge if the query is longer than
  // kMaxQueryBytes, kInvalidArgument if it is not valid UTF-8, kInternal on
  // SQLite errors. Terms past kMaxQueryTerms are ignored.
  [[nodiscard]] Result<std::vector<TextHit>> Search(std::string_view site, std::string_view query,
                                                    size_t k);

 private:
  Result<sqlite::Stmt*> Prepared(std::optional<sqlite::Stmt>* slot, std::string_view sql);
  Status RunSearch(std::string_view site, const std::string& match, size_t limit, bool all_terms,
                   std::vector<TextHit>* out);

  sqlite::Db* db_;
  std::optional<sqlite::Stmt> insert_, delete_, delete_site_, search_;
};

// What the index stores for a text: CJK runs as bigrams plus their last
// character, separators as single spaces, fullwidth ASCII as ASCII; other
// characters as they are. Changing it requires reindexing every note.
// REQUIRES: text is valid UTF-8 (invalid bytes become separators).
std::string SegmentForIndex(std::string_view text);

// The FTS5 MATCH expression for `terms` (from QueryTerms): every term quoted,
// prefix terms and one-character CJK runs with '*', CJK runs as phrases of
// bigrams; joined by spaces (FTS5's implicit AND, which ignores terms
// unicode61 reduces to nothing, unlike an explicit AND) or by " OR ".
// Returns "" for no terms (not a valid expression: do not run it).
std::string MatchExpression(std::span<const QueryTerm> terms, bool all_terms);

}  // namespace folio::search
