#include "folio/markdown/links.h"

#include <algorithm>
#include <tuple>

#include "folio/core/text.h"

namespace folio::markdown {

namespace {

bool HasMdSuffix(std::string_view s) {
  return s.size() >= 3 && EqualsIgnoreAsciiCase(s.substr(s.size() - 3), ".md");
}

// Lookup key of a path or target: lower-cased, ".md" dropped. Attachments
// ("image.png") keep their extension.
std::string KeyOf(std::string_view path) {
  if (HasMdSuffix(path)) path.remove_suffix(3);
  return AsciiLower(path);
}

// Collapses "", "." and ".." segments; nullopt if ".." climbs above the root.
std::optional<std::string> Normalize(std::string_view path) {
  std::vector<std::string_view> segs;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view seg = path.substr(start, slash - start);
    start = slash + 1;
    if (seg.empty() || seg == ".") continue;
    if (seg == "..") {
      if (segs.empty()) return std::nullopt;
      segs.pop_back();
      continue;
    }
    segs.push_back(seg);
  }
  std::string out;
  for (auto seg : segs) {
    if (!out.empty()) out.push_back('/');
    out += seg;
  }
  return out;
}

void EraseValue(std::vector<std::string>* v, const std::string& value) {
  v->erase(std::remove(v->begin(), v->end(), value), v->end());
}

// Picks the note nearest to `from` among several: same folder first, then the
// shallowest path, then lexicographic (docs/markdown.md "Resolution", step 3).
Resolution PickNearest(const std::vector<std::string>& candidates, std::string_view from) {
  std::string from_dir = AsciiLower(PathDir(from));
  auto rank = [&](const std::string& p) {
    bool same = AsciiLower(PathDir(p)) == from_dir;
    auto depth = std::count(p.begin(), p.end(), '/');
    return std::make_tuple(!same, depth, std::string_view(p));
  };
  const std::string* best = &candidates.front();
  for (const auto& c : candidates) {
    if (rank(c) < rank(*best)) best = &c;
  }
  return Resolution{*best, candidates.size() > 1};
}

}  // namespace

void LinkIndex::Add(std::string_view path, const std::vector<std::string>& aliases) {
  std::string key = KeyOf(path);
  if (auto it = paths_.find(key); it != paths_.end()) Remove(std::string(it->second));
  std::string real(path);
  paths_[key] = real;
  names_[std::string(PathBase(key))].push_back(real);
  // Only notes with aliases get an entry: most have none, and an empty one
  // per note cost ~130 bytes (issue 15).
  std::vector<std::string>* mine = nullptr;
  for (const auto& a : aliases) {
    std::string lower = AsciiLower(a);
    if (lower.empty()) continue;
    if (mine == nullptr) mine = &aliases_of_[real];
    if (std::find(mine->begin(), mine->end(), lower) != mine->end()) continue;
    mine->push_back(lower);
    aliases_[lower].push_back(real);
  }
}

void LinkIndex::Remove(std::string_view path) {
  std::string key = KeyOf(path);
  auto it = paths_.find(key);
  if (it == paths_.end()) return;
  std::string real = it->second;
  paths_.erase(it);
  if (auto n = names_.find(PathBase(key)); n != names_.end()) {
    EraseValue(&n->second, real);
    if (n->second.empty()) names_.erase(n);
  }
  if (auto mine = aliases_of_.find(real); mine != aliases_of_.end()) {
    for (const auto& a : mine->second) {
      auto al = aliases_.find(a);
      if (al == aliases_.end()) continue;
      EraseValue(&al->second, real);
      if (al->second.empty()) aliases_.erase(al);
    }
    aliases_of_.erase(mine);
  }
}

std::vector<std::string> LinkIndex::DependencyKeys(std::string_view target) {
  while (!target.empty() && (target.front() == ' ' || target.front() == '\t')) target.remove_prefix(1);
  while (!target.empty() && (target.back() == ' ' || target.back() == '\t')) target.remove_suffix(1);
  std::string key = KeyOf(target);
  if (key.empty()) return {};
  std::string_view base = PathBase(key);
  // Paths and file names: every candidate shares the target's last segment.
  std::vector<std::string> out{base.empty() || base == "." || base == ".." ? std::string(kAnyKey) : std::string(base)};
  out.push_back(AsciiLower(target));  // aliases, as written or without ".md"
  out.push_back(key);
  return out;
}

std::vector<std::string> LinkIndex::NameKeys(std::string_view path, const std::vector<std::string>& aliases) {
  std::vector<std::string> out{std::string(PathBase(KeyOf(path)))};
  for (const auto& a : aliases) out.push_back(AsciiLower(a));
  return out;
}

bool LinkIndex::Contains(std::string_view path) const {
  auto it = paths_.find(KeyOf(path));
  return it != paths_.end() && it->second == path;
}

std::optional<Resolution> LinkIndex::Resolve(std::string_view target,
                                             std::string_view from_path) const {
  while (!target.empty() && (target.front() == ' ' || target.front() == '\t')) target.remove_prefix(1);
  while (!target.empty() && (target.back() == ' ' || target.back() == '\t')) target.remove_suffix(1);
  bool absolute = !target.empty() && target.front() == '/';
  std::string key = KeyOf(target);
  if (key.empty()) return std::nullopt;
  auto lookup = [&](const std::optional<std::string>& k) -> std::optional<Resolution> {
    if (!k) return std::nullopt;
    auto it = paths_.find(*k);
    if (it == paths_.end()) return std::nullopt;
    return Resolution{it->second, false};
  };
  // Step 3: relative to the linking note's folder, then from the vault root.
  std::string_view from_dir = PathDir(from_path);
  if (!absolute && !from_dir.empty()) {
    if (auto r = lookup(Normalize(AsciiLower(from_dir) + "/" + key))) return r;
  }
  std::optional<std::string> norm = Normalize(key);
  if (auto r = lookup(norm)) return r;
  // Step 4: the file name anywhere; "folder/name" must be a path suffix.
  if (norm && !norm->empty() && key.find("..") == std::string::npos) {
    if (auto n = names_.find(PathBase(*norm)); n != names_.end()) {
      std::vector<std::string> hits;
      for (const auto& p : n->second) {
        std::string k = KeyOf(p);
        if (k == *norm || EndsWith(k, "/" + *norm)) hits.push_back(p);
      }
      if (!hits.empty()) return PickNearest(hits, from_path);
    }
  }
  // Step 5: aliases, as written or without ".md".
  for (const std::string& a : {AsciiLower(target), key}) {
    if (auto al = aliases_.find(a); al != aliases_.end() && !al->second.empty()) {
      return PickNearest(al->second, from_path);
    }
  }
  return std::nullopt;
}

}  // namespace folio::markdown
