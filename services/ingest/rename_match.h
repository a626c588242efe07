// Renames with edits: in one push, a deleted note and an added note whose
// texts are mostly the same are one note renamed (and edited), so the old
// URL answers 301 to the new one instead of 410 (issue 28). Exact renames
// (same bytes, same permalink, the old name as an alias) are the Vault's
// (vault.h Impact::moved); this adds the similar ones as hints it honours.
//
// The measure: the Jaccard index of the two texts' sets of word 3-grams
// (words: runs of letters and digits, ASCII lower-cased; a text of fewer
// than three words is one shingle), at least kRenameSimilarity. Pairs are
// matched one to one, best score first. Bounded work on large pushes: at
// most kRenameMaxNotes notes per side take part (the first ones by path),
// each by its first kRenameTextBytes, and a pair is compared only if its
// shingle counts allow the threshold (Jaccard <= smaller / larger).
//
// Pure functions but FindRenames, which reads the deleted notes' stored
// text. Threads: ingest's writer thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"
#include "folio/site/vault.h"
#include "push_plan.h"
#include "push_request.h"

namespace folio::ingest {

class Store;

inline constexpr double kRenameSimilarity = 0.6;
inline constexpr size_t kRenameMaxNotes = 64;
inline constexpr size_t kRenameTextBytes = size_t{64} << 10;

// The sorted, unique hashes of a text's word 3-grams (of its first kRenameTextBytes).
std::vector<uint64_t> Shingles(std::string_view text);
// |a ∩ b| / |a ∪ b| of two Shingles() sets (1 for two empty ones).
double Similarity(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b);

struct RenameSide {
  std::string path;
  std::string_view text;  // borrowed for the call
};
// Added path -> deleted path, one to one, best pairs first (ties: by path).
std::map<std::string, std::string> MatchRenames(const std::vector<RenameSide>& deleted,
                                                const std::vector<RenameSide>& added);

// Fills plan->renamed_from for `req` against `vault`: the deleted notes
// (published, without an added note of the same bytes) and the added notes
// (new paths) of the push, their text read from `store` under `site`.
// Fails only when the store does.
[[nodiscard]] Status FindRenames(const PushRequest& req, const site::Vault& vault, Store* store,
                                 const std::string& site, PushPlan* plan);

}  // namespace folio::ingest
