#include "fulltext.h"

#include <algorithm>
#include <charconv>
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
// The title and body columns hold SegmentForIndex output, not display text.
// detail=full (the default) is needed: CJK runs are searched as phrases.
constexpr std::string_view kSchema =
    "CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5("
    "site UNINDEXED, title, body, tokenize = 'unicode61 remove_diacritics 2')";

// bm25 weights per column: site (unindexed) 0, title 5, body 1. Ties go to
// the lower id so results are stable.
constexpr std::string_view kSearch =
    "SELECT rowid, -bm25(fts, 0.0, 5.0, 1.0) AS score FROM fts WHERE fts MATCH ?1 AND site = ?2 "
    "ORDER BY score DESC, rowid LIMIT ?3";
constexpr std::string_view kInsert = "INSERT INTO fts(rowid, site, title, body) VALUES (?1, ?2, ?3, ?4)";
constexpr std::string_view kDelete = "DELETE FROM fts WHERE rowid = ?1";
constexpr std::string_view kDeleteSite = "DELETE FROM fts WHERE site = ?1";

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

double ParseScore(std::string_view s) {
  double v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
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

std::string MatchExpression(std::span<const QueryTerm> terms, bool all_terms) {
  std::string out;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (i > 0) out.append(all_terms ? " " : " OR ");
    if (terms[i].cjk) {
      AppendCjkTerm(terms[i].text, &out);
      continue;
    }
    AppendQuoted(terms[i].text, &out);
    if (terms[i].prefix) out.push_back('*');
  }
  return out;
}

Status FullTextIndex::CreateSchema(sqlite::Db* db) {
  Status s = db->Exec(kSchema);
  if (!s.ok()) return Status::Internal("creating the full-text table: " + s.message());
  return s;
}

Result<sqlite::Stmt*> FullTextIndex::Prepared(std::optional<sqlite::Stmt>* slot, std::string_view sql) {
  if (!slot->has_value()) {
    auto st = db_->Prepare(sql);
    if (!st.ok()) return st.status();
    slot->emplace(std::move(*st));
  }
  return &**slot;
}

Status FullTextIndex::Upsert(int64_t doc_id, std::string_view site, std::string_view title,
                             std::string_view body) {
  if (!IsValidUtf8(title)) return Status::Invalid("note title is not valid UTF-8");
  if (!IsValidUtf8(body)) return Status::Invalid("note text is not valid UTF-8");
  if (Status s = Remove(doc_id); !s.ok()) return s;
  auto st = Prepared(&insert_, kInsert);
  if (!st.ok()) return st.status();
  (*st)->Bind(1, doc_id).Bind(2, site).Bind(3, SegmentForIndex(title)).Bind(4, SegmentForIndex(body));
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

Status FullTextIndex::RunSearch(std::string_view site, const std::string& match, size_t limit,
                                bool all_terms, std::vector<TextHit>* out) {
  auto st = Prepared(&search_, kSearch);
  if (!st.ok()) return st.status();
  sqlite::Stmt* q = *st;
  q->Bind(1, match).Bind(2, site).Bind(3, static_cast<int64_t>(limit));
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) {
      q->Reset();
      return row.status();
    }
    if (!*row) break;
    out->push_back({q->Int(0), ParseScore(q->Text(1)), all_terms});
  }
  q->Reset();
  return Status::Ok();
}

Result<std::vector<TextHit>> FullTextIndex::Search(std::string_view site, std::string_view query,
                                                   size_t k) {
  if (query.size() > kMaxQueryBytes) {
    return Status::TooLarge("search query is longer than " + std::to_string(kMaxQueryBytes) + " bytes");
  }
  if (!IsValidUtf8(query)) return Status::Invalid("search query is not valid UTF-8");
  std::vector<TextHit> hits;
  k = std::min(k, kMaxResults);
  std::vector<QueryTerm> terms = QueryTerms(query);
  if (terms.empty() || k == 0) return hits;
  if (Status s = RunSearch(site, MatchExpression(terms, true), k, true, &hits); !s.ok()) return s;
  if (hits.size() >= k || terms.size() == 1) return hits;

  // Fallback: any term. Those results include the all-terms hits; skip them.
  std::vector<TextHit> any;
  Status s = RunSearch(site, MatchExpression(terms, false), k + hits.size(), false, &any);
  if (!s.ok()) return s;
  std::unordered_set<int64_t> seen;
  for (const TextHit& h : hits) seen.insert(h.doc_id);
  for (const TextHit& h : any) {
    if (hits.size() >= k) break;
    if (!seen.count(h.doc_id)) hits.push_back(h);
  }
  return hits;
}

}  // namespace folio::search
