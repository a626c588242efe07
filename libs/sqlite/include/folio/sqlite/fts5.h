// FTS5 ranking functions written in C++: the hook through which folio-search
// ranks full-text matches with its own formula (BM25F over a note's fields,
// with query-time weights per phrase) instead of FTS5's built-in bm25().
//
//   RegisterFts5Rank(db, "folio_rank", &Score);
//   SELECT rowid, folio_rank(fts, ?1) FROM fts WHERE fts MATCH ?2 ...
//   stmt.BindPointer(1, &plan, kFts5PlanType);
//
// The second SQL argument is a pointer bound with Stmt::BindPointer (SQLite's
// pointer-passing interface, so SQL text cannot forge it): the caller's
// per-query object, handed to the score function unchanged for every row.
// For each matching row the function gets an Fts5Row: how often each phrase
// of the MATCH expression (numbered left to right from 0) occurs in each
// column, each column's length in tokens in this row and on average.
//
// Ownership: the pointer stays the caller's and must outlive the statement's
// steps. Threading: a function is registered on one connection and called on
// the thread stepping that connection's statement.
#pragma once

#include <cstddef>
#include <string_view>

#include "folio/core/status.h"
#include "folio/sqlite/db.h"

namespace folio::sqlite {

// The pointer type name BindPointer must use for the plan argument.
inline constexpr const char* kFts5PlanType = "folio_fts5_plan";

struct Fts5Row {
  static constexpr int kMaxPhrases = 128;  // phrases past this are not counted
  static constexpr int kMaxColumns = 16;   // columns past this are not counted
  int phrases = 0;
  int columns = 0;
  // hits[p][c]: occurrences of phrase p in column c of this row.
  int hits[kMaxPhrases][kMaxColumns];
  int tokens[kMaxColumns];        // tokens in column c of this row
  double avg_tokens[kMaxColumns]; // mean tokens per row in column c (whole table)
  double rows = 0;                // rows in the table
};

// Score of one row; higher ranks first. `plan` is the bound pointer (nullptr
// when the argument was not a pointer of kFts5PlanType).
using Fts5ScoreFn = double (*)(const Fts5Row& row, const void* plan);

// Registers SQL function `name` on db's connection for its FTS5 tables.
// kInternal if FTS5 is missing or registration fails.
Status RegisterFts5Rank(Db* db, std::string_view name, Fts5ScoreFn fn);

}  // namespace folio::sqlite
