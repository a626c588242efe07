#include "folio/sqlite/fts5.h"

#include <sqlite3.h>

#include <algorithm>
#include <string>

namespace folio::sqlite {

struct Fts5Access {
  static sqlite3* Handle(Db* db) { return db->db_; }
};

namespace {

// The table-wide figures, computed once per statement (FTS5 auxdata).
struct TableStats {
  int columns = 0;
  double rows = 0;
  double avg[Fts5Row::kMaxColumns] = {};
};

void Rank(const Fts5ExtensionApi* api, Fts5Context* fts, sqlite3_context* ctx, int argc, sqlite3_value** argv) {
  auto fn = reinterpret_cast<Fts5ScoreFn>(api->xUserData(fts));
  const void* plan = argc > 0 ? sqlite3_value_pointer(argv[0], kFts5PlanType) : nullptr;
  auto* stats = static_cast<TableStats*>(api->xGetAuxdata(fts, 0));
  if (!stats) {
    stats = new TableStats;
    stats->columns = std::min(api->xColumnCount(fts), Fts5Row::kMaxColumns);
    sqlite3_int64 rows = 0;
    if (api->xRowCount(fts, &rows) != SQLITE_OK) rows = 0;
    stats->rows = static_cast<double>(rows);
    for (int c = 0; c < stats->columns; ++c) {
      sqlite3_int64 total = 0;
      if (api->xColumnTotalSize(fts, c, &total) != SQLITE_OK) total = 0;
      stats->avg[c] = rows > 0 ? static_cast<double>(total) / static_cast<double>(rows) : 0;
    }
    if (api->xSetAuxdata(fts, stats, [](void* p) { delete static_cast<TableStats*>(p); }) != SQLITE_OK) {
      sqlite3_result_error(ctx, "folio_rank: out of memory", -1);
      return;
    }
  }
  Fts5Row row;
  row.columns = stats->columns;
  row.rows = stats->rows;
  row.phrases = std::min(api->xPhraseCount(fts), Fts5Row::kMaxPhrases);
  for (int p = 0; p < row.phrases; ++p) std::fill_n(row.hits[p], row.columns, 0);
  for (int c = 0; c < row.columns; ++c) {
    int n = 0;
    if (api->xColumnSize(fts, c, &n) != SQLITE_OK) n = 0;
    row.tokens[c] = n;
    row.avg_tokens[c] = stats->avg[c];
  }
  int inst = 0;
  if (api->xInstCount(fts, &inst) == SQLITE_OK) {
    for (int i = 0; i < inst; ++i) {
      int phrase = 0, col = 0, off = 0;
      if (api->xInst(fts, i, &phrase, &col, &off) != SQLITE_OK) continue;
      if (phrase < row.phrases && col < row.columns) ++row.hits[phrase][col];
    }
  }
  sqlite3_result_double(ctx, fn(row, plan));
}

}  // namespace

Status RegisterFts5Rank(Db* db, std::string_view name, Fts5ScoreFn fn) {
  sqlite3* h = Fts5Access::Handle(db);
  fts5_api* api = nullptr;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(h, "SELECT fts5(?1)", -1, &st, nullptr) != SQLITE_OK) {
    return Status::Internal("registering " + std::string(name) + ": SQLite has no FTS5");
  }
  sqlite3_bind_pointer(st, 1, static_cast<void*>(&api), "fts5_api_ptr", nullptr);
  sqlite3_step(st);
  sqlite3_finalize(st);
  if (!api) return Status::Internal("registering " + std::string(name) + ": SQLite has no FTS5");
  std::string n(name);
  int rc = api->xCreateFunction(api, n.c_str(), reinterpret_cast<void*>(fn), &Rank, nullptr);
  if (rc != SQLITE_OK) return Status::Internal("registering FTS5 function " + n + " failed");
  return Status::Ok();
}

}  // namespace folio::sqlite
