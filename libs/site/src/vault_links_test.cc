// Vault keeps every note's resolved links as a change would leave them if
// the whole vault were resolved again, while resolving only the notes a
// change can affect (the linkers of the names it adds or removes).
#include <doctest/doctest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "folio/site/vault.h"

using namespace folio;
using namespace folio::site;

namespace {

const std::vector<std::string> kFolders = {"", "A/", "Hub/", "A/Sub/", "Hub/Sub/"};
const std::vector<std::string> kNames = {"One", "Two", "three", "Four", "index", "Hub"};

std::string RandomPath(std::mt19937& rng) {
  return kFolders[rng() % kFolders.size()] + kNames[rng() % kNames.size()] + ".md";
}

// Targets as authors write them: names, paths, relative and odd forms.
std::string RandomTarget(std::mt19937& rng) {
  switch (rng() % 8) {
    case 0: return kNames[rng() % kNames.size()];
    case 1: return RandomPath(rng);
    case 2: return "../" + kNames[rng() % kNames.size()];
    case 3: return "alias" + std::to_string(rng() % 4);
    case 4: return "Sub/" + kNames[rng() % kNames.size()];
    case 5: return kFolders[1 + rng() % 4];  // a folder ("Hub/"): last segment empty, resolves to Hub.md
    case 6: return rng() % 2 ? "Sub/.." : "../Hub/Sub/..";  // ".." last: depends on every change
    default: return " " + kNames[rng() % kNames.size()] + ".MD ";
  }
}

NoteMeta RandomNote(std::mt19937& rng, const std::string& path) {
  NoteMeta m;
  m.path = path;
  m.title = path;
  m.sha256 = std::to_string(rng());
  for (int i = 0, n = rng() % 4; i < n; ++i) m.targets.push_back(RandomTarget(rng));
  if (!m.targets.empty() && rng() % 3 == 0) m.embeds.push_back(m.targets[0]);
  if (rng() % 4 == 0) m.aliases.push_back("alias" + std::to_string(rng() % 4));
  m.published = rng() % 8 != 0;
  if (rng() % 10 == 0) m.permalink = "p" + std::to_string(rng() % 3);
  return m;
}

// The same notes loaded afresh and resolved from scratch.
Vault Reference(const Vault& v) {
  Vault ref;
  for (const auto& [path, n] : v.notes()) ref.Load(n);
  ref.Rebuild();
  return ref;
}

}  // namespace

TEST_CASE("vault: links stay resolved as a full re-resolution would leave them, over random changes") {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    Vault v;
    for (int step = 0; step < 30; ++step) {
      std::vector<NoteMeta> upserts;
      std::vector<std::string> deletes;
      std::set<std::string> touched;
      for (int i = 0, n = 1 + rng() % 3; i < n; ++i) {
        std::string path = RandomPath(rng);
        if (!touched.insert(path).second) continue;
        if (rng() % 4 == 0 && v.Find(path)) {
          deletes.push_back(path);
        } else {
          upserts.push_back(RandomNote(rng, path));
        }
      }
      std::map<std::string, std::vector<std::string>> before;
      for (const auto& [path, n] : v.notes()) before[path] = n.out;
      Impact impact = v.Apply(std::move(upserts), deletes);
      Vault ref = Reference(v);
      INFO("seed ", seed, " step ", step);
      for (const auto& [path, n] : v.notes()) {
        const NoteMeta* r = ref.Find(path);
        REQUIRE(r != nullptr);
        CHECK_MESSAGE(n.out == r->out, path);
        CHECK_MESSAGE(n.embeds_out == r->embeds_out, path);
        CHECK_MESSAGE(v.Backlinks(path) == ref.Backlinks(path), path);
        std::vector<std::string> visited;
        v.ForEachBacklink(path, [&](const NoteMeta& src) { visited.push_back(src.path); });
        CHECK_MESSAGE(visited == v.Backlinks(path), path);
        // A published note whose links now land elsewhere is re-rendered.
        auto was = before.find(path);
        if (n.published && was != before.end() && was->second != n.out) CHECK_MESSAGE(impact.render.count(path), path);
      }
    }
  }
}

namespace {

// Everything a note's page, URL map and links depend on, for comparing vaults.
std::string Snapshot(const Vault& v) {
  std::string out;
  for (const auto& [path, n] : v.notes()) {
    out += path + " url=" + n.url + " sha=" + n.sha256 + " created=" + std::to_string(n.created_ms) + " out=";
    for (const auto& t : n.out) out += t + ",";
    out += " embeds=";
    for (const auto& t : n.embeds_out) out += t + ",";
    out += " back=";
    for (const auto& b : v.Backlinks(path)) out += b + ",";
    if (!n.url.empty()) out += v.UrlOwner(n.url) ? " owner=" + v.UrlOwner(n.url)->path : " owner=none";
    out += "\n";
  }
  for (const auto& [url, path] : v.AliasRedirects()) out += "alias " + url + " -> " + path + "\n";
  return out;
}

}  // namespace

TEST_CASE("vault: Restore undoes an Apply exactly (URLs kept as they were, even a collision's fallback)") {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    std::mt19937 rng(seed);
    Vault v;
    for (int step = 0; step < 30; ++step) {
      std::vector<NoteMeta> upserts;
      std::vector<std::string> deletes;
      std::vector<NoteMeta> before;
      std::vector<std::string> added;
      std::set<std::string> touched;
      for (int i = 0, n = 1 + rng() % 3; i < n; ++i) {
        std::string path = RandomPath(rng);
        if (!touched.insert(path).second) continue;
        if (const NoteMeta* old = v.Find(path)) before.push_back(*old); else added.push_back(path);
        if (rng() % 4 == 0 && v.Find(path)) {
          deletes.push_back(path);
        } else {
          upserts.push_back(RandomNote(rng, path));
          upserts.back().updated_ms = step + 1;
        }
      }
      const std::string snapshot = Snapshot(v);
      std::vector<NoteMeta> kept = upserts;
      (void)v.Apply(std::move(upserts), deletes);
      v.Restore(before, added);
      INFO("seed ", seed, " step ", step);
      REQUIRE(Snapshot(v) == snapshot);
      (void)v.Apply(std::move(kept), deletes);  // the change is kept this time
    }
  }
}
