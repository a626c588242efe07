#include "fulltext.h"

#include <algorithm>
#include <unordered_set>

#include "folio/core/text.h"
#include "folio/core/utf8.h"

namespace folio::search {
namespace {

// A regular (content-storing) FTS5 table, not a contentless one, although
// the caller keeps the original text elsewhere:
//  - SQLite 3.40 (Debian 12) has no contentless_delete (3.43+): deleting from
//    a contentless table needs the old indexed values, so every update and
//    delete would first have to re-read and re-segment the old note;
//  - an UNINDEXED column of a contentless table reads back as NULL, so the
//    `site = ?` filter could not work;
//  - the cost, a second (segmented) copy of each note's text, is acceptable
//    for vault-sized sites.
// The columns hold SegmentForIndex output, not display text. detail=full
// (the default) is needed: CJK runs are searched as phrases.
constexpr std::string_view kSchema =
    "CREATE VIRTUAL TABLE IF NOT EXISTS fts2 USING fts5("
    "site UNINDEXED, title, aliases, anchors, headings, tags, path, body, "
    "tokenize = 'unicode61 remove_diacritics 2')";

// Matches are scored in SQLite by folio_rank (ScoreRow) and the best k kept
// here: FTS5 would sort every match to honour ORDER BY.
constexpr std::string_view kSearch =
    "SELECT rowid, folio_rank(fts2, ?1) FROM fts2 WHERE fts2 MATCH ?2 AND site = ?3 LIMIT ?4";
constexpr std::string_view kInsert =
    "INSERT INTO fts2(rowid, site, title, aliases, anchors, headings, tags, path, body) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
constexpr std::string_view kDelete = "DELETE FROM fts2 WHERE rowid = ?1";
constexpr std::string_view kDeleteSite = "DELETE FROM fts2 WHERE site = ?1";
constexpr std::string_view kSetAnchors = "UPDATE fts2 SET anchors = ?2 WHERE rowid = ?1";

double RankRow(const sqlite::Fts5Row& row, const void* plan) {
  return plan ? ScoreRow(*static_cast<const RankPlan*>(plan), row) : 0.0;
}

// Appends s as an FTS5 string: inside double quotes every character is
// literal (operators, column filters, '*', '^' included), '"' is doubled.
void AppendQuoted(std::string_view s, std::string* out) {
  out->push_back('"');
  for (char c : s) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

// Byte offsets of the code points of s, plus s.size() at the end.
std::vector<size_t> CodePointStarts(std::string_view s) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < s.size();) {
    starts.push_back(i);
    DecodeUtf8(s, &i);
  }
  starts.push_back(s.size());
  return starts;
}

void AppendCjkTerm(std::string_view run, std::string* out) {
  std::vector<size_t> at = CodePointStarts(run);
  size_t n = at.size() - 1;
  if (n == 1) {
    AppendQuoted(run, out);
    out->push_back('*');  // the bigrams starting with it, or a run's last character
    return;
  }
  std::string phrase;
  for (size_t i = 0; i + 1 < n; ++i) {
    if (i > 0) phrase.push_back(' ');
    phrase.append(run.substr(at[i], at[i + 2] - at[i]));
  }
  AppendQuoted(phrase, out);
}

}  // namespace

std::string SegmentForIndex(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 2 + 8);
  bool at_space = true;       // out is empty or ends with ' '
  std::string_view prev_cjk;  // the previous code point, if CJK
  auto separate = [&] {
    if (!at_space) out.push_back(' ');
    at_space = true;
  };
  auto end_run = [&] {
    if (prev_cjk.empty()) return;
    out.append(prev_cjk);  // the run's last character (or only one)
    out.push_back(' ');
    prev_cjk = {};
  };
  for (size_t i = 0; i < text.size();) {
    size_t begin = i;
    uint32_t raw = DecodeUtf8(text, &i);
    uint32_t cp = FoldFullwidth(raw);
    std::string_view bytes = text.substr(begin, i - begin);
    CharClass cls = ClassifyCodePoint(cp);
    if (cls == CharClass::kCjk) {
      separate();
      if (!prev_cjk.empty()) {
        out.append(prev_cjk).append(bytes);
        out.push_back(' ');
      }
      prev_cjk = bytes;
      continue;
    }
    end_run();
    if (cls == CharClass::kSeparator) {
      separate();
    } else {
      if (cp == raw) out.append(bytes);
      else AppendUtf8(cp, &out);  // fullwidth folded
      at_space = false;
    }
  }
  end_run();
  if (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::string MatchExpression(std::span<const WordGroup> groups, bool all_words) {
  // FTS5 has no implicit AND between parenthesised expressions, so groups
  // are joined by an explicit AND (a term unicode61 reduces to nothing then
  // matches nothing: PlanQuery drops such words).
  std::string out;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].empty()) continue;
    if (!out.empty()) out.append(all_words ? " AND " : " OR ");
    const bool paren = groups[g].size() > 1;
    if (paren) out.push_back('(');
    for (size_t i = 0; i < groups[g].size(); ++i) {
      const Alternative& a = groups[g][i];
      if (i > 0) out.append(" OR ");
      if (a.cjk) {
        AppendCjkTerm(a.text, &out);
        continue;
      }
      AppendQuoted(a.text, &out);
      if (a.prefix) out.push_back('*');
    }
    if (paren) out.push_back(')');
  }
  return out;
}

RankPlan PlanFor(std::span<const WordGroup> groups, std::vector<double> idf, const RankWeights& w) {
  RankPlan plan;
  plan.w = w;
  plan.idf = std::move(idf);
  plan.idf.resize(groups.size(), 1.0);
  for (size_t g = 0; g < groups.size(); ++g) {
    for (const Alternative& a : groups[g]) {
      plan.group_of.push_back(static_cast<int>(g));
      plan.weight.push_back(a.weight);
    }
  }
  return plan;
}

double ScoreRow(const RankPlan& plan, const sqlite::Fts5Row& row) {
  constexpr int kMaxGroups = sqlite::Fts5Row::kMaxPhrases;
  double tf[kMaxGroups] = {};
  const int groups = std::min<int>(static_cast<int>(plan.idf.size()), kMaxGroups);
  double norm[kFieldCount];
  for (int f = 0; f < kFieldCount; ++f) {
    int c = f + 1;  // column 0 is the site
    if (c >= row.columns) {
      norm[f] = 0;
      continue;
    }
    double avg = row.avg_tokens[c] > 0 ? row.avg_tokens[c] : 1.0;
    double len = 1.0 - plan.w.b[f] + plan.w.b[f] * static_cast<double>(row.tokens[c]) / avg;
    norm[f] = plan.w.weight[f] / std::max(len, 0.05);
  }
  const int phrases = std::min<int>(row.phrases, static_cast<int>(plan.group_of.size()));
  double title_hits[kMaxGroups] = {};
  for (int p = 0; p < phrases; ++p) {
    int g = plan.group_of[p];
    if (g >= groups) continue;
    double sum = 0;
    for (int f = 0; f < kFieldCount && f + 1 < row.columns; ++f) sum += norm[f] * row.hits[p][f + 1];
    tf[g] += plan.weight[p] * sum;
    if (row.columns > 1 + kTitle) title_hits[g] = std::max(title_hits[g], plan.weight[p] * row.hits[p][1 + kTitle]);
  }
  double covered = 0;  // title words the query holds (alternatives below 1 count less)
  for (int g = 0; g < groups; ++g) covered += std::min(title_hits[g], 1.0);
  double score = 0, held = 0, total = 0;
  for (int g = 0; g < groups; ++g) {
    total += plan.idf[g];
    if (tf[g] <= 0) continue;
    held += plan.idf[g];
    score += plan.idf[g] * tf[g] * (plan.w.k1 + 1) / (tf[g] + plan.w.k1);
  }
  if (total > 0) score *= (1 - plan.w.coordination) + plan.w.coordination * held / total;
  if (row.columns > 1 + kTitle && row.tokens[1 + kTitle] > 0) {
    score *= 1 + plan.w.title_coverage * std::min(1.0, covered / row.tokens[1 + kTitle]);
  }
  return score;
}

Status FullTextIndex::CreateSchema(sqlite::Db* db, bool* dropped_old) {
  if (dropped_old) *dropped_old = false;
  auto old = db->Prepare("SELECT 1 FROM sqlite_master WHERE name = 'fts'");
  if (!old.ok()) return Status::Internal("reading the schema: " + old.status().message());
  auto row = old->Step();
  if (!row.ok()) return Status::Internal("reading the schema: " + row.status().message());
  bool has_old = *row;
  old->Reset();
  if (has_old) {
    if (Status s = db->Exec("DROP TABLE fts"); !s.ok()) return Status::Internal("dropping the old full-text table: " + s.message());
    if (dropped_old) *dropped_old = true;
  }
  Status s = db->Exec(kSchema);
  if (!s.ok()) return Status::Internal("creating the full-text table: " + s.message());
  return RegisterRanking(db);
}

Status FullTextIndex::RegisterRanking(sqlite::Db* db) {
  return sqlite::RegisterFts5Rank(db, "folio_rank", &RankRow);
}

Result<sqlite::Stmt*> FullTextIndex::Prepared(std::optional<sqlite::Stmt>* slot, std::string_view sql) {
  if (!slot->has_value()) {
    auto st = db_->Prepare(sql);
    if (!st.ok()) return st.status();
    slot->emplace(std::move(*st));
  }
  return &**slot;
}

Status FullTextIndex::Upsert(int64_t doc_id, std::string_view site, const NoteFields& f) {
  const std::string_view fields[kFieldCount] = {f.title, f.aliases, f.anchors, f.headings, f.tags, f.path, f.body};
  static constexpr std::string_view kNames[kFieldCount] = {"title", "aliases", "link texts", "headings",
                                                           "tags", "path", "text"};
  for (int i = 0; i < kFieldCount; ++i) {
    if (!IsValidUtf8(fields[i])) return Status::Invalid("note " + std::string(kNames[i]) + " is not valid UTF-8");
  }
  if (Status s = Remove(doc_id); !s.ok()) return s;
  auto st = Prepared(&insert_, kInsert);
  if (!st.ok()) return st.status();
  (*st)->Bind(1, doc_id).Bind(2, site);
  for (int i = 0; i < kFieldCount; ++i) (*st)->Bind(3 + i, SegmentForIndex(fields[i]));
  return (*st)->Run();
}

Status FullTextIndex::SetAnchors(int64_t doc_id, std::string_view anchors) {
  if (!IsValidUtf8(anchors)) return Status::Invalid("link texts are not valid UTF-8");
  auto st = Prepared(&anchors_, kSetAnchors);
  if (!st.ok()) return st.status();
  (*st)->Bind(1, doc_id).Bind(2, SegmentForIndex(anchors));
  return (*st)->Run();
}

Status FullTextIndex::Remove(int64_t doc_id) {
  auto st = Prepared(&delete_, kDelete);
  if (!st.ok()) return st.status();
  (*st)->Bind(1, doc_id);
  return (*st)->Run();
}

Status FullTextIndex::RemoveSite(std::string_view site) {
  auto st = Prepared(&delete_site_, kDeleteSite);
  if (!st.ok()) return st.status();
  (*st)->Bind(1, site);
  return (*st)->Run();
}

Result<std::vector<TextHit>> FullTextIndex::Search(std::string_view site, std::span<const WordGroup> groups,
                                                   const RankPlan& plan, size_t k, bool all_words) {
  return Run(site, MatchExpression(groups, all_words), plan, k, all_words);
}

Result<std::vector<TextHit>> FullTextIndex::SearchSelected(std::string_view site, std::span<const WordGroup> selector,
                                                           std::span<const WordGroup> groups, const RankPlan& plan,
                                                           size_t k) {
  std::string sel = MatchExpression(selector, false), all = MatchExpression(groups, false);
  if (sel.empty() || all.empty()) return std::vector<TextHit>();
  // The selector's phrases come first in the expression: they select and
  // count nothing (weight 0, in group 0).
  RankPlan shifted = plan;
  size_t n = 0;
  for (const WordGroup& g : selector) n += g.size();
  shifted.group_of.insert(shifted.group_of.begin(), n, 0);
  shifted.weight.insert(shifted.weight.begin(), n, 0.0);
  return Run(site, "(" + sel + ") AND (" + all + ")", shifted, k, false);
}

Result<std::vector<TextHit>> FullTextIndex::Run(std::string_view site, const std::string& match, const RankPlan& plan,
                                                size_t k, bool all_words) {
  std::vector<TextHit> hits;
  k = std::min(k, kMaxResults);
  if (match.empty() || k == 0) return hits;
  auto st = Prepared(&search_, kSearch);
  if (!st.ok()) return st.status();
  sqlite::Stmt* q = *st;
  q->BindPointer(1, &plan, sqlite::kFts5PlanType).Bind(2, match).Bind(3, site);
  q->Bind(4, static_cast<int64_t>(kMaxScored));
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) {
      q->Reset();
      return row.status();
    }
    if (!*row) break;
    hits.push_back({q->Int(0), q->Double(1), all_words});
  }
  q->Reset();
  auto better = [](const TextHit& a, const TextHit& b) {
    return a.score != b.score ? a.score > b.score : a.doc_id < b.doc_id;
  };
  if (hits.size() > k) {
    std::partial_sort(hits.begin(), hits.begin() + static_cast<std::ptrdiff_t>(k), hits.end(), better);
    hits.resize(k);
  } else {
    std::sort(hits.begin(), hits.end(), better);
  }
  return hits;
}

}  // namespace folio::search
