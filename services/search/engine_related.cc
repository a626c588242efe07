#include <algorithm>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "engine.h"
#include "engine_internal.h"
#include "folio/sqlite/transaction.h"

namespace folio::search {
namespace {

// A note's related list from the hits of its own vector: itself and notes
// scoring under min_score left out, at most k.
ScoredNotes RelatedFromHits(const std::vector<vector::Hit>& hits, int64_t self, size_t k, float min_score) {
  ScoredNotes out;
  for (const vector::Hit& h : hits) {
    if (static_cast<int64_t>(h.id) == self || h.score < min_score) continue;
    if (out.size() == k) break;
    out.emplace_back(static_cast<int64_t>(h.id), h.score);
  }
  return out;
}

// For each of ids, the k best hits of its note vector in `index` (none if
// it has no vector): blocks of queries run on the pool through SearchMany,
// which scans an exact index once per block. The caller holds the lock that
// keeps `index` unchanged.
std::vector<std::vector<vector::Hit>> SearchNotes(const vector::AutoIndex& index, const std::vector<int64_t>& ids,
                                                  size_t k, ThreadPool* pool) {
  constexpr size_t kBlock = 64;
  std::vector<std::vector<vector::Hit>> out(ids.size());
  const size_t blocks = (ids.size() + kBlock - 1) / kBlock;
  auto run = [&](size_t b) {
    std::vector<float> rows;
    std::vector<size_t> at;
    for (size_t i = b * kBlock; i < std::min(ids.size(), (b + 1) * kBlock); ++i) {
      auto v = index.Get(static_cast<uint64_t>(ids[i]));
      if (v.empty()) continue;
      rows.insert(rows.end(), v.begin(), v.end());
      at.push_back(i);
    }
    auto hits = index.SearchMany(rows, k);
    for (size_t j = 0; j < at.size() && j < hits.size(); ++j) out[at[j]] = std::move(hits[j]);
  };
  if (pool && blocks > 1) {
    pool->ParallelFor(blocks, run);
  } else {
    for (size_t b = 0; b < blocks; ++b) run(b);
  }
  return out;
}

bool SameNotes(const ScoredNotes& a, const ScoredNotes& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].first != b[i].first) return false;
  }
  return true;
}

// The notes whose lists UpdateRelated looks at: `affected` lists are computed
// from scratch; `gains` are lists that only gain entries: a list that names no
// changed note, which a changed note c now beats the k-th entry of, is exactly
// its old entries plus those c merged (no other note's score against it
// changed).
struct RelatedScope {
  std::unordered_set<int64_t> affected;
  std::unordered_map<int64_t, ScoredNotes> gains;
};

// Lists that a changed note c now enters, on an exact index: c is scored
// against every note (one pass over the vectors for the whole batch), so no
// such list is missed.
void GainsExact(const Engine::Site& site, const std::vector<int64_t>& live, size_t k, float min_score,
                RelatedScope* scope) {
  std::vector<std::span<const float>> cv;
  std::vector<int64_t> cid;
  for (int64_t c : live) {
    auto v = site.notes.Get(static_cast<uint64_t>(c));
    if (!v.empty()) cv.push_back(v), cid.push_back(c);
  }
  site.notes.ForEach([&](uint64_t id, std::span<const float> row) {
    const auto m = static_cast<int64_t>(id);
    if (scope->affected.count(m)) return;  // computed from scratch anyway
    const float kth = std::max(site.KthScore(m, k), min_score);
    for (size_t j = 0; j < cv.size(); ++j) {
      float score = vector::Score(cv[j], row);
      if (score >= min_score && score > kth && cid[j] != m) scope->gains[m].emplace_back(cid[j], score);
    }
  });
}

// The same on HNSW (large sites): probe c's nearest neighbours. A list whose
// owner is not among them (asymmetric neighbourhoods) can be missed until it
// is next recomputed.
void GainsHnsw(const Engine::Site& site, const std::vector<int64_t>& live, size_t k, float min_score,
               ThreadPool* pool, RelatedScope* scope) {
  const size_t probe = std::max<size_t>(100, 10 * k);
  std::vector<std::vector<vector::Hit>> near = SearchNotes(site.notes, live, probe, pool);
  for (size_t i = 0; i < live.size(); ++i) {
    for (const vector::Hit& h : near[i]) {
      int64_t m = static_cast<int64_t>(h.id);
      if (m == live[i] || h.score < min_score || scope->affected.count(m)) continue;
      if (h.score > site.KthScore(m, k)) scope->gains[m].emplace_back(live[i], h.score);
    }
  }
}

RelatedScope FindScope(const Engine::Site& site, const std::unordered_set<int64_t>& changed, bool all, size_t k,
                       float min_score, ThreadPool* pool) {
  RelatedScope scope;
  if (all) {
    for (const auto& [id, doc] : site.docs) scope.affected.insert(id);
    return scope;
  }
  std::vector<int64_t> live;  // changed notes that still exist
  for (int64_t c : changed) {
    // Lists that name c (it may leave them, or its score changed).
    auto lb = site.listed_by.find(c);
    if (lb != site.listed_by.end()) scope.affected.insert(lb->second.begin(), lb->second.end());
    if (site.docs.count(c) == 0) continue;  // deleted
    scope.affected.insert(c);
    live.push_back(c);
  }
  // Lists that a changed note c now enters: those of notes m for which c
  // beats m's k-th entry.
  if (!site.notes.is_hnsw()) {
    GainsExact(site, live, k, min_score, &scope);
  } else {
    GainsHnsw(site, live, k, min_score, pool, &scope);
  }
  return scope;
}

}  // namespace

bus::RelatedList PublishedList(const Engine::Site& site, int64_t id) {
  bus::RelatedList list;
  list.path = site.docs.at(id).path;
  auto it = site.related.find(id);
  if (it != site.related.end()) {
    for (const auto& [other, score] : it->second) {
      auto doc = site.docs.find(other);
      if (doc != site.docs.end()) list.related.push_back({doc->second.path, score});
    }
  }
  return list;
}

Status Engine::UpdateRelated(Site* site, const std::unordered_set<int64_t>& changed, bool all,
                             std::vector<bus::RelatedUpdate>* out, ApplyStats* stats) {
  std::string site_name;
  RelatedPlan plan;
  {
    std::shared_lock lock(mu_);
    for (const auto& [name, s] : sites_) {
      if (s.get() == site) site_name = name;
    }
    plan = PlanRelated(*site, changed, all);
  }
  stats->related_merged += plan.merged;
  stats->related_recomputed += plan.targets.size() - plan.merged;

  // Which lists changed (by their sequence of notes: the pages show titles).
  std::vector<int64_t> changed_lists;
  for (int64_t id : plan.targets) {
    if (site->docs.count(id) == 0) continue;
    auto old = site->related.find(id);
    static const ScoredNotes kEmpty;
    const auto& before = old == site->related.end() ? kEmpty : old->second;
    if (!SameNotes(before, plan.fresh[id])) changed_lists.push_back(id);
  }

  if (Status s = StoreRelated(*site, &plan, changed_lists, changed); !s.ok()) return s;
  bus::RelatedUpdate update = InstallRelated(site, site_name, changed, changed_lists, &plan);
  stats->related_changed += changed_lists.size();
  if (!update.lists.empty()) {
    for (bus::RelatedUpdate& part : bus::SplitRelatedUpdate(update)) out->push_back(std::move(part));
  }
  return Status::Ok();
}

Engine::RelatedPlan Engine::PlanRelated(const Site& site, const std::unordered_set<int64_t>& changed, bool all) {
  const size_t k = options_.related_k;
  const float min_score = options_.related_min_score;
  // A large batch changes most lists anyway: recompute all of them.
  all = all || changed.size() * 4 >= site.docs.size();
  RelatedScope scope = FindScope(site, changed, all, k, min_score, pool_);
  RelatedPlan plan;
  plan.targets.assign(scope.affected.begin(), scope.affected.end());
  std::sort(plan.targets.begin(), plan.targets.end());
  std::vector<std::vector<vector::Hit>> hits = SearchNotes(site.notes, plan.targets, k + 1, pool_);
  for (size_t i = 0; i < plan.targets.size(); ++i) {
    if (site.docs.count(plan.targets[i]) == 0) continue;
    plan.fresh[plan.targets[i]] = RelatedFromHits(hits[i], plan.targets[i], k, min_score);
  }
  for (auto& [m, entries] : scope.gains) {
    auto old = site.related.find(m);
    if (old != site.related.end()) entries.insert(entries.end(), old->second.begin(), old->second.end());
    std::sort(entries.begin(), entries.end(), [](const auto& x, const auto& y) {
      return x.second != y.second ? x.second > y.second : x.first < y.first;  // Search's order
    });
    if (entries.size() > k) entries.resize(k);
    plan.fresh[m] = std::move(entries);
    plan.targets.push_back(m);
  }
  plan.merged = scope.gains.size();
  std::sort(plan.targets.begin(), plan.targets.end());
  return plan;
}

Status Engine::StoreRelated(const Site& site, RelatedPlan* plan, const std::vector<int64_t>& publish,
                            const std::unordered_set<int64_t>& changed) {
  auto tx = sqlite::Transaction::Begin(store_->db());
  if (!tx.ok()) return tx.status();
  for (int64_t id : plan->targets) {
    if (site.docs.count(id) == 0) continue;
    // Unchanged lists keep their published flag; scores are refreshed.
    if (std::binary_search(publish.begin(), publish.end(), id)) {
      if (Status s = store_->SetRelated(id, EncodeRelatedList(plan->fresh[id]), false); !s.ok()) return s;
    }
    if (changed.count(id)) {
      if (Status s = store_->SetRelatedDirty(id, false); !s.ok()) return s;
    }
  }
  return tx->Commit();
}

bus::RelatedUpdate Engine::InstallRelated(Site* site, std::string site_name, const std::unordered_set<int64_t>& changed,
                                          const std::vector<int64_t>& publish, RelatedPlan* plan) {
  bus::RelatedUpdate update;
  update.site = std::move(site_name);
  std::unique_lock lock(mu_);
  for (int64_t id : changed) {
    if (site->docs.count(id) == 0) site->SetList(id, {});  // deleted: drop its list
  }
  for (int64_t id : plan->targets) {
    if (site->docs.count(id) == 0) continue;
    site->SetList(id, std::move(plan->fresh[id]));
  }
  for (int64_t id : publish) update.lists.push_back(PublishedList(*site, id));
  return update;
}

Result<std::vector<bus::RelatedUpdate>> Engine::PendingUpdates() {
  std::vector<bus::RelatedUpdate> out;
  if (Status s = RecomputeDirty(&out); !s.ok()) return s;
  if (Status s = AppendUnpublished(&out); !s.ok()) return s;
  return out;
}

// Notes whose vectors changed but whose lists were not recomputed (a crash
// between the two commits): recompute now.
Status Engine::RecomputeDirty(std::vector<bus::RelatedUpdate>* out) {
  auto dirty = store_->RelatedDirtyNotes();
  if (!dirty.ok()) return dirty.status();
  if (dirty->empty()) return Status::Ok();
  ChangedNotes by_site;
  {
    std::shared_lock lock(mu_);
    for (int64_t id : *dirty) {
      for (const auto& [name, site] : sites_) {
        if (site->docs.count(id)) by_site[site.get()].insert(id);
      }
    }
  }
  ApplyStats stats;
  for (auto& [site, ids] : by_site) {
    if (Status s = UpdateRelated(site, ids, false, out, &stats); !s.ok()) return s;
  }
  return Status::Ok();
}

// Lists stored but not confirmed published.
Status Engine::AppendUnpublished(std::vector<bus::RelatedUpdate>* out) {
  std::vector<int64_t> unpublished;
  Status s = store_->ForEachRelated([&](int64_t id, std::string_view, bool published) {
    if (!published) unpublished.push_back(id);
  });
  if (!s.ok()) return s;
  std::map<std::string, bus::RelatedUpdate> by_site;
  {
    std::shared_lock lock(mu_);
    for (int64_t id : unpublished) {
      for (const auto& [name, site] : sites_) {
        if (site->docs.count(id) == 0) continue;
        bus::RelatedUpdate& u = by_site[name];
        u.site = name;
        u.lists.push_back(PublishedList(*site, id));
      }
    }
  }
  for (auto& [name, u] : by_site) {
    // Skip lists Apply/UpdateRelated above already queued.
    for (bus::RelatedUpdate& part : bus::SplitRelatedUpdate(u)) out->push_back(std::move(part));
  }
  return Status::Ok();
}

Status Engine::MarkPublished(const std::vector<bus::RelatedUpdate>& updates) {
  std::vector<int64_t> ids;
  {
    std::shared_lock lock(mu_);
    for (const bus::RelatedUpdate& u : updates) {
      auto site = sites_.find(u.site);
      if (site == sites_.end()) continue;
      for (const bus::RelatedList& l : u.lists) {
        auto it = site->second->by_path.find(l.path);
        if (it != site->second->by_path.end()) ids.push_back(it->second);
      }
    }
  }
  auto tx = sqlite::Transaction::Begin(store_->db());
  if (!tx.ok()) return tx.status();
  if (Status s = store_->MarkRelatedPublished(ids); !s.ok()) return s;
  return tx->Commit();
}

}  // namespace folio::search
