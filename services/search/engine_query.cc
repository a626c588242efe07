#include <algorithm>
#include <charconv>
#include <mutex>
#include <shared_mutex>
#include <unordered_set>

#include "engine.h"
#include "engine_internal.h"
#include "query.h"
#include "vocabulary.h"
#include "snippet.h"

namespace folio::search {
namespace {


struct Candidate {
  int64_t id = 0;
  double score = 0;
  int chunk = 0;  // best chunk for vector hits (0 = whole note)
};

void SortByScore(std::vector<Candidate>* c) {
  std::sort(c->begin(), c->end(), [](const Candidate& a, const Candidate& b) {
    return a.score != b.score ? a.score > b.score : a.id < b.id;
  });
}

// The reply of a query that failed with s.
bus::SearchReply FailedReply(const Status& s) {
  bus::SearchReply reply;
  reply.error = s.message();
  reply.code = s.code();
  return reply;
}

Result<std::vector<float>> EmbedQuery(vector::Embedder* embedder, std::string_view text) {
  std::vector<std::vector<float>> qv;
  if (Status s = embedder->Embed(std::span<const std::string_view>(&text, 1), &qv); !s.ok()) {
    return Status(Code::kUnavailable, "the embedder is unavailable: " + s.message());
  }
  return std::move(qv[0]);
}

// The best `depth` notes for query vector qv, each scored by its whole-note
// vector or its best chunk, whichever is higher. REQUIRES: the Engine's lock.
std::vector<Candidate> VectorCandidates(const Engine::Site& site, std::span<const float> qv, size_t depth) {
  std::unordered_map<int64_t, Candidate> best;
  for (const vector::Hit& h : site.notes.Search(qv, depth)) {
    auto& c = best[static_cast<int64_t>(h.id)];
    c.id = static_cast<int64_t>(h.id);
    if (h.score > c.score) c.score = h.score, c.chunk = 0;
  }
  for (const vector::Hit& h : site.chunks.Search(qv, depth)) {
    int64_t note = NoteOfChunk(h.id);
    auto& c = best[note];
    c.id = note;
    if (h.score > c.score) c.score = h.score, c.chunk = static_cast<int>(h.id & 0xFF);
  }
  std::vector<Candidate> out;
  for (auto& [id, c] : best) {
    if (c.score > 0) out.push_back(c);
  }
  SortByScore(&out);
  if (out.size() > depth) out.resize(depth);
  return out;
}

// Pseudo-relevance feedback over the structure of the best notes: the words
// of their titles, headings and aliases the query does not hold, scored by
// idf and by how high their notes rank; the best few become one more
// (optional) word of the query. REQUIRES: the Engine's lock.
void AddFeedback(const Engine::Site& site, sqlite::Db* db, const std::vector<Candidate>& top, const EngineOptions& o,
                 QueryPlan* plan) {
  std::unordered_map<std::string, double> score;
  std::unordered_set<std::string> asked;
  for (const QueryTerm& m : plan->marks) asked.insert(m.folded);
  const size_t docs = site.docs.size();
  for (size_t r = 0; r < top.size() && r < o.feedback_docs; ++r) {
    auto fields = ReadTitleAndExtra(db, top[r].id);
    if (!fields.ok()) continue;
    bus::NoteEvent extra;
    if (!fields->second.empty()) (void)bus::DecodeNoteEvent(fields->second, &extra);
    std::unordered_set<std::string> in_doc;
    auto add = [&](std::string_view s) { ForEachWord(s, [&](std::string_view w) { in_doc.emplace(w); }); };
    add(fields->first);
    for (const bus::NoteSection& h : extra.sections) add(h.heading);
    for (const std::string& a : extra.aliases) add(a);
    for (const std::string& w : in_doc) {
      if (asked.count(w) || w.size() < 3) continue;
      size_t df = site.vocab.DocFreq(w);
      if (df < 2 || static_cast<double>(df) > kCommonShare * static_cast<double>(docs)) continue;
      score[w] += Idf(df, docs) / static_cast<double>(r + 1);
    }
  }
  std::vector<std::pair<double, std::string>> ranked;
  for (auto& [w, sc] : score) ranked.emplace_back(-sc, w);
  std::sort(ranked.begin(), ranked.end());
  WordGroup g;
  double idf = 0;
  size_t df = 0;
  for (size_t i = 0; i < ranked.size() && i < o.feedback_words; ++i) {
    g.push_back({ranked[i].second, false, false, o.feedback_weight});
    size_t n = site.vocab.DocFreq(ranked[i].second);
    idf += Idf(n, docs);
    df = std::max(df, n);
  }
  if (g.empty()) return;
  plan->idf.push_back(idf / static_cast<double>(g.size()));
  plan->df.push_back(df);  // every per-group vector of the plan gains its entry
  plan->common.push_back(true);  // never required
  plan->groups.push_back(std::move(g));
}

Result<std::vector<Candidate>> TextCandidates(FullTextIndex* fts, const EngineOptions& o, std::string_view site,
                                              const QueryPlan& plan, size_t depth) {
  auto hits = SearchText(fts, site, plan, depth, o.rank, o.all_words_first);
  if (!hits.ok()) return Status(Code::kInternal, "full-text search failed: " + hits.status().message());
  std::vector<Candidate> out;
  for (const TextHit& h : *hits) out.push_back({h.doc_id, h.score, 0});
  return out;
}

// Score fusion: each ranking's scores scaled to 0..1 by its best (the
// text scores) or from its floor to its best (the similarities), then summed
// with the weights.
std::vector<Candidate> FuseScores(const std::vector<Candidate>& vec_hits, const std::vector<Candidate>& text_hits,
                                  double vector_weight, double text_weight) {
  std::unordered_map<int64_t, Candidate> fused;
  double tmax = 0, vmax = 0, vmin = 1;
  for (const Candidate& c : text_hits) tmax = std::max(tmax, c.score);
  for (const Candidate& c : vec_hits) vmax = std::max(vmax, c.score), vmin = std::min(vmin, c.score);
  for (const Candidate& c : vec_hits) {
    auto& f = fused[c.id];
    f.id = c.id;
    f.chunk = c.chunk;
    f.score += vector_weight * (vmax > vmin ? (c.score - vmin) / (vmax - vmin) : 1.0);
  }
  for (const Candidate& c : text_hits) {
    auto& f = fused[c.id];
    f.id = c.id;
    f.score += text_weight * (tmax > 0 ? c.score / tmax : 0.0);
  }
  std::vector<Candidate> ranked;
  for (auto& [id, c] : fused) ranked.push_back(c);
  SortByScore(&ranked);
  return ranked;
}

// Hybrid: drops the vector candidates the full-text ranking does not have
// and whose similarity is below min_score (no lexical support, too far).
void DropUnsupported(std::vector<Candidate>* vec_hits, const std::vector<Candidate>& text_hits, float min_score) {
  std::unordered_set<int64_t> lexical;
  for (const Candidate& c : text_hits) lexical.insert(c.id);
  std::erase_if(*vec_hits, [&](const Candidate& c) { return c.score < min_score && lexical.count(c.id) == 0; });
}

// The best k of the mode's ranking.
std::vector<Candidate> Rank(bus::SearchMode mode, std::vector<Candidate> vec_hits, std::vector<Candidate> text_hits,
                            size_t k, const EngineOptions& o) {
  std::vector<Candidate> ranked;
  if (mode == bus::SearchMode::kVector) {
    ranked = std::move(vec_hits);
  } else if (mode == bus::SearchMode::kText) {
    ranked = std::move(text_hits);
  } else {
    ranked = FuseScores(vec_hits, text_hits, o.fusion_vector_weight, o.fusion_text_weight);
  }
  if (ranked.size() > k) ranked.resize(k);
  return ranked;
}

// A note's sections column ("offset\tanchor" lines in text order) as
// offsets and anchors; lines out of order are skipped.
void ParseSections(std::string_view sections, std::vector<size_t>* offsets, std::vector<std::string_view>* anchors) {
  while (!sections.empty()) {
    size_t nl = sections.find('\n');
    std::string_view line = sections.substr(0, nl);
    sections = nl == std::string_view::npos ? std::string_view() : sections.substr(nl + 1);
    size_t tab = line.find('\t');
    size_t offset = 0;
    if (tab == std::string_view::npos || std::from_chars(line.data(), line.data() + tab, offset).ec != std::errc()) {
      continue;
    }
    if (!offsets->empty() && offset < offsets->back()) continue;
    offsets->push_back(offset);
    anchors->push_back(line.substr(tab + 1));
  }
}

// Appends a hit per ranked note still in `site`: its page (with the anchor of
// its best chunk, or of the section its snippet comes from) and a snippet of
// its text. REQUIRES: the Engine's lock.
void AppendHits(const Engine::Site& site, const std::vector<Candidate>& ranked, sqlite::Db* db,
                std::span<const QueryTerm> marks, bus::SearchReply* reply) {
  for (const Candidate& c : ranked) {
    auto doc = site.docs.find(c.id);
    if (doc == site.docs.end()) continue;  // deleted meanwhile
    bus::SearchHit hit;
    hit.path = doc->second.path;
    hit.url = doc->second.url;
    hit.title = doc->second.title;
    hit.score = c.score;
    std::string anchor;
    if (c.chunk > 0 && static_cast<size_t>(c.chunk) <= doc->second.chunks.size()) {
      anchor = doc->second.chunks[c.chunk - 1].second;
    }
    auto note = ReadNoteForHit(db, c.id);
    if (note.ok()) {
      // The snippet, and the section holding the most of the query's words.
      std::vector<size_t> offsets;
      std::vector<std::string_view> anchors;
      ParseSections(note->sections, &offsets, &anchors);
      int best = -1;
      hit.snippet = MakeSnippet(note->text, marks, 200, offsets, &best);
      // The first heading of a note that starts with it (its H1) is the page itself.
      bool opens_note = best == 0 && note->text.find_first_not_of(" \t\r\n") >= offsets[0];
      if (best >= 0 && !opens_note) anchor = std::string(anchors[static_cast<size_t>(best)]);
    }
    if (!anchor.empty()) hit.url += "#" + anchor;
    reply->hits.push_back(std::move(hit));
  }
}

}  // namespace

bus::SearchReply Engine::Search(const bus::SearchQuery& q) {
  auto t0 = Clock::now();
  const size_t k = static_cast<size_t>(std::clamp(q.k, 1, bus::kMaxSearchK));
  const size_t depth = std::max<size_t>(k * 3, 30);  // candidates per ranking before fusion
  if (Status s = CheckQuery(q.q); !s.ok()) return FailedReply(s);

  QueryPlan plan;
  {
    std::shared_lock lock(mu_);
    QueryContext ctx;
    if (const Site* site = FindSite(q.site)) {
      ctx.vocab = &site->vocab;
      ctx.docs = site->docs.size();
      ctx.langs.push_back(options_.language);
      for (const auto& [lang, n] : site->note_langs) {
        if (!lang.empty() && lang != options_.language && ctx.langs.size() < 4) ctx.langs.push_back(lang);
      }
    }
    plan = PlanQuery(q.q, ctx);
  }
  std::vector<Candidate> vec_hits, text_hits;
  if (q.mode != bus::SearchMode::kText) {
    auto qv = EmbedQuery(embedder_, q.q);
    if (!qv.ok()) return FailedReply(qv.status());
    std::shared_lock lock(mu_);
    if (const Site* site = FindSite(q.site)) vec_hits = VectorCandidates(*site, *qv, depth);
  }
  ReaderConn* reader = Reader();
  if (!reader) return FailedReply(Status(Code::kUnavailable, "the search database cannot be read"));
  if (q.mode != bus::SearchMode::kVector) {
    auto hits = TextCandidates(&reader->fts, options_, q.site, plan, depth);
    if (!hits.ok()) return FailedReply(hits.status());
    text_hits = std::move(*hits);
    if (options_.feedback_weight > 0 && !text_hits.empty()) {
      QueryPlan expanded = plan;
      {
        std::shared_lock lock(mu_);
        if (const Site* site = FindSite(q.site)) AddFeedback(*site, reader->db.get(), text_hits, options_, &expanded);
      }
      if (expanded.groups.size() > plan.groups.size()) {
        auto again = TextCandidates(&reader->fts, options_, q.site, expanded, depth);
        if (!again.ok()) return FailedReply(again.status());
        text_hits = std::move(*again);
      }
    }
  }
  if (q.mode == bus::SearchMode::kHybrid) DropUnsupported(&vec_hits, text_hits, options_.hybrid_min_vector_score);
  std::vector<Candidate> ranked = Rank(q.mode, std::move(vec_hits), std::move(text_hits), k, options_);

  bus::SearchReply reply;
  std::shared_lock lock(mu_);
  if (const Site* site = FindSite(q.site)) AppendHits(*site, ranked, reader->db.get(), plan.marks, &reply);
  reply.took_us = static_cast<int64_t>(MsSince(t0) * 1000);
  return reply;
}

bus::SearchReply Engine::Related(const bus::RelatedQuery& q) {
  auto t0 = Clock::now();
  bus::SearchReply reply;
  std::shared_lock lock(mu_);
  auto it = sites_.find(q.site);
  Site* site = it == sites_.end() ? nullptr : it->second.get();
  auto id = site ? site->by_path.find(q.path) : decltype(site->by_path.end()){};
  if (!site || id == site->by_path.end()) {
    reply.error = "no note " + q.path + " in site " + q.site;
    reply.code = Code::kNotFound;
    return reply;
  }
  auto list = site->related.find(id->second);
  if (list != site->related.end()) {
    for (const auto& [other, score] : list->second) {
      if (reply.hits.size() >= static_cast<size_t>(q.k)) break;
      auto doc = site->docs.find(other);
      if (doc == site->docs.end()) continue;
      reply.hits.push_back({doc->second.path, doc->second.url, doc->second.title, "", score});
    }
  }
  reply.took_us = static_cast<int64_t>(MsSince(t0) * 1000);
  return reply;
}

}  // namespace folio::search
