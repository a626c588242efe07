#include "query.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "folio/core/text.h"
#include "folio/core/utf8.h"

namespace folio::search {
namespace {

size_t CodePoints(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) {
    DecodeUtf8(s, &i);
    ++n;
  }
  return n;
}

// Whether SQLite's unicode61 keeps any character of a word: QueryTerms
// keeps punctuation outside the blocks it separates on ("‽", "،"), which
// unicode61 drops; such a word would match nothing in an all-words pass.
bool HasTokenChar(std::string_view word) {
  for (size_t i = 0; i < word.size();) {
    uint32_t cp = DecodeUtf8(word, &i);
    if (cp < 0x80) {
      if ((cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z')) return true;
      continue;
    }
    bool punct = (cp >= 0xA1 && cp <= 0xBF && cp != 0xAA && cp != 0xB5 && cp != 0xBA && cp != 0xB2 && cp != 0xB3 &&
                  cp != 0xB9 && cp != 0xBC && cp != 0xBD && cp != 0xBE) ||
                 cp == 0xD7 || cp == 0xF7 || (cp >= 0x2000 && cp <= 0x206F) || cp == 0x060C || cp == 0x061B ||
                 cp == 0x061F || (cp >= 0x066A && cp <= 0x066D) || (cp >= 0x3000 && cp <= 0x303F) ||
                 (cp >= 0xFE10 && cp <= 0xFE6F) || (cp >= 0xFF01 && cp <= 0xFF0F);
    if (!punct) return true;
  }
  return false;
}

bool Has(const WordGroup& g, std::string_view text) {
  return std::any_of(g.begin(), g.end(), [&](const Alternative& a) { return a.text == text; });
}

// The group of one (non-CJK) query word, its document frequency in *df.
WordGroup WordAlternatives(const QueryTerm& t, const QueryContext& ctx, size_t room, size_t* df, bool* corrected) {
  WordGroup g;
  const std::string& w = t.folded;
  g.push_back({w, t.prefix, false, 1.0});
  if (!ctx.vocab) return g;
  room = std::max<size_t>(room, 1);
  const Vocabulary& v = *ctx.vocab;
  *df = v.DocFreq(w);
  for (const std::string& lang : ctx.langs) {
    for (std::string& f : v.Family(w, lang, kMaxFamily)) {
      if (Has(g, f) || g.size() >= room) continue;
      *df = std::max<size_t>(*df, v.DocFreq(f));
      g.push_back({std::move(f), false, false, kStemWeight});
    }
  }
  bool completes = false;
  if (t.prefix) {
    std::vector<std::string> next = v.Prefix(w, 1);
    if (!next.empty()) {
      completes = true;
      *df = std::max<size_t>(*df, v.DocFreq(next.front()));
    }
  }
  size_t chars = CodePoints(w);
  if (*df == 0 && g.size() == 1 && !completes && chars >= kMinTypoChars) {
    int max_distance = chars >= kLongTypoChars ? 2 : 1;
    for (Vocabulary::Near& n : v.Similar(w, max_distance, kMaxCorrections)) {
      if (Has(g, n.word) || g.size() >= room) continue;
      *df = std::max<size_t>(*df, n.df);
      g.push_back({std::move(n.word), false, false, n.distance <= 1 ? kTypoWeight : kTypoWeight * 0.6});
      *corrected = true;
    }
  }
  return g;
}

}  // namespace

double Idf(size_t df, size_t n) {
  double d = static_cast<double>(std::max<size_t>(df, 1));
  double N = static_cast<double>(std::max(n, std::max<size_t>(df, 1)));
  return std::log(1.0 + (N - d + 0.5) / (d + 0.5));
}

Status CheckQuery(std::string_view query) {
  if (query.size() > kMaxQueryBytes) {
    return Status::TooLarge("search query is longer than " + std::to_string(kMaxQueryBytes) + " bytes");
  }
  if (!IsValidUtf8(query)) return Status::Invalid("search query is not valid UTF-8");
  return Status::Ok();
}

Result<std::vector<TextHit>> SearchText(FullTextIndex* fts, std::string_view site, const QueryPlan& plan, size_t k,
                                        const RankWeights& w, bool all_words_first) {
  std::vector<TextHit> out;
  k = std::min(k, FullTextIndex::kMaxResults);
  if (plan.groups.empty() || k == 0) return out;
  std::vector<WordGroup> required;
  std::vector<double> required_idf;
  for (size_t g = 0; g < plan.groups.size(); ++g) {
    if (plan.common[g]) continue;
    required.push_back(plan.groups[g]);
    required_idf.push_back(plan.idf[g]);
  }
  if (required.empty()) required = plan.groups, required_idf = plan.idf;
  std::unordered_set<int64_t> seen;
  if (all_words_first) {
    auto hits = fts->Search(site, required, PlanFor(required, required_idf, w), k, true);
    if (!hits.ok()) return hits.status();
    out = std::move(*hits);
    for (const TextHit& h : out) seen.insert(h.doc_id);
    if (out.size() >= k || (plan.groups.size() == 1 && required.size() == 1)) return out;
  }
  // The rarest words select the notes to score when all would be too many.
  std::vector<size_t> order(plan.groups.size());
  for (size_t g = 0; g < order.size(); ++g) order[g] = g;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return plan.df[a] < plan.df[b]; });
  size_t total = 0;
  for (size_t df : plan.df) total += df;
  std::vector<WordGroup> selector;
  if (total > kScoreBudget && plan.groups.size() > 1) {
    size_t sum = 0;
    for (size_t g : order) {
      if (!selector.empty() && sum + plan.df[g] > kScoreBudget) break;
      sum += plan.df[g];
      selector.push_back(plan.groups[g]);
    }
  }
  RankPlan rank = PlanFor(plan.groups, plan.idf, w);
  if (total > kScoreBudget && plan.groups.size() > 1 && plan.df[order[0]] > kScoreBudget) {
    // Even the rarest word is in too many notes: those holding every word
    // first (the fewest), any word only if they are too few.
    auto every = fts->Search(site, plan.groups, rank, k, true);
    if (!every.ok()) return every.status();
    for (const TextHit& h : *every) {
      if (out.size() < k && seen.insert(h.doc_id).second) out.push_back(h);
    }
    if (out.size() >= k) return out;
  }
  auto any = selector.empty() || selector.size() == plan.groups.size()
                 ? fts->Search(site, plan.groups, rank, k + out.size(), false)
                 : fts->SearchSelected(site, selector, plan.groups, rank, k + out.size());
  if (!any.ok()) return any.status();
  for (const TextHit& h : *any) {
    if (out.size() >= k) break;
    if (seen.insert(h.doc_id).second) out.push_back(h);
  }
  return out;
}

QueryPlan PlanQuery(std::string_view query, const QueryContext& ctx) {
  QueryPlan plan;
  std::vector<QueryTerm> terms = QueryTerms(query);
  size_t used = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const QueryTerm& t = terms[i];
    // Every later word keeps room for itself.
    const size_t room = kMaxAlternatives > used + (terms.size() - i) ? kMaxAlternatives - used - (terms.size() - i - 1) : 1;
    if (!t.cjk && !HasTokenChar(t.folded)) continue;
    size_t df = 0;
    bool corrected = false;
    WordGroup g;
    if (t.cjk) {
      g.push_back({t.text, false, true, 1.0});
      df = ctx.docs / 50;  // unknown: a moderately rare word
    } else {
      g = WordAlternatives(t, ctx, room, &df, &corrected);
    }
    const bool common = ctx.docs >= 20 && static_cast<double>(df) > kCommonShare * static_cast<double>(ctx.docs);
    for (const Alternative& a : g) {
      QueryTerm m;
      m.text = a.text;
      m.folded = a.cjk ? t.folded : a.text;
      m.cjk = a.cjk;
      m.prefix = a.prefix;
      m.group = static_cast<int>(plan.groups.size());
      m.common = common;
      plan.marks.push_back(std::move(m));
    }
    plan.idf.push_back(Idf(df, ctx.docs));
    plan.df.push_back(t.cjk ? ctx.docs : df);  // a CJK run's frequency is unknown: never a selector
    plan.common.push_back(common);
    used += g.size();
    plan.groups.push_back(std::move(g));
    if (corrected) ++plan.corrected;
  }
  return plan;
}

}  // namespace folio::search
