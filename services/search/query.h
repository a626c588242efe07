// Query planning for folio-search's full-text side: what a reader typed,
// turned into word groups FullTextIndex can match and rank (fulltext.h).
//
// Each word of the query becomes a group of alternatives:
//  - the word itself (weight 1), as a prefix when it is the last word and
//    the reader may still be typing it ("embe" finds "embedding");
//  - the vault's words of the same Snowball stem, in the site's language and
//    in every language its notes declare ("connect" finds "connections",
//    kStemWeight);
//  - when the word is not in the vault at all and has at least
//    kMinTypoChars characters: the vault's words within edit distance 1
//    (2 from kLongTypoChars characters), found through the vocabulary's
//    trigram index (kTypoWeight, less at distance 2). A word the vault has
//    is never corrected, so exact matches rank first.
// A group's idf comes from the site's document frequencies. Words in more
// than kCommonShare of the site's notes are not required in the all-words
// pass (they rank, but "how do I" does not hide the answer).
//
// Ownership: the plan owns its strings. Threading: PlanQuery reads the
// vocabulary, so the caller holds whatever guards it (the Engine's shared
// lock); the stemmer is thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "fulltext.h"
#include "snippet.h"
#include "vocabulary.h"

namespace folio::search {

inline constexpr double kStemWeight = 0.9;
inline constexpr double kTypoWeight = 0.75;       // distance 1; distance 2 gets 0.6 of it
inline constexpr size_t kMinTypoChars = 5;
inline constexpr size_t kLongTypoChars = 8;
inline constexpr size_t kMaxFamily = 8;            // same-stem words per query word
inline constexpr size_t kMaxCorrections = 3;       // typo corrections per query word
inline constexpr double kCommonShare = 0.3;
// Alternatives of all words together: stems and corrections stop being
// added past it. Twice this (a selected search names the rarest words
// twice) stays within what the ranking function counts
// (sqlite::Fts5Row::kMaxPhrases).
inline constexpr size_t kMaxAlternatives = 60;

// An any-word search scores every note holding one of the words (up to
// FullTextIndex::kMaxScored). When the words' document frequencies add up to
// more than this, only the notes holding one of the rarest words (as many
// as fit in it, at least the rarest) are scored: a note holding nothing
// but words most notes hold cannot rank anyway. When even the rarest word
// is in more notes than this, the notes holding every word come first.
inline constexpr size_t kScoreBudget = 5000;

// groups, idf, df and common have one entry per group, always.
struct QueryPlan {
  std::vector<WordGroup> groups;
  std::vector<double> idf;       // per group
  std::vector<size_t> df;        // per group: notes holding its words (the most of its alternatives)
  std::vector<bool> common;      // per group: not required in the all-words pass
  std::vector<QueryTerm> marks;  // every alternative, for snippets
  size_t corrected = 0;          // groups that hold typo corrections
};

struct QueryContext {
  const Vocabulary* vocab = nullptr;  // nullptr: no stems, no corrections
  size_t docs = 0;                    // notes in the site
  std::vector<std::string> langs;     // stemming languages, the site's first
};

// kTooLarge past kMaxQueryBytes, kInvalidArgument if not valid UTF-8.
Status CheckQuery(std::string_view query);

// REQUIRES: CheckQuery(query) is OK.
QueryPlan PlanQuery(std::string_view query, const QueryContext& ctx);

// The best min(k, FullTextIndex::kMaxResults) notes of `site` for plan:
// with all_words_first, the notes holding every word that is not common
// (TextHit::all_terms), then notes holding any word; else any-word matches
// ranked together. kInternal on SQLite errors.
Result<std::vector<TextHit>> SearchText(FullTextIndex* fts, std::string_view site, const QueryPlan& plan, size_t k,
                                        const RankWeights& w, bool all_words_first = true);

// BM25's idf for a word in df of n documents (df 0 counts as 1).
double Idf(size_t df, size_t n);

}  // namespace folio::search
