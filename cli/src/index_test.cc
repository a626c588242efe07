// The vault index (index.h) and the delta sync (sync.h): the file format,
// the stat cache and its racy-mtime rule, and the push plan made from the
// index plus a manifest delta, compared with the full path on random change
// sets.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "folio/core/hash.h"
#include "index.h"
#include "index_internal.h"
#include "plan.h"
#include "sync.h"
#include "vault.h"

using namespace folio;
using namespace folio::cli;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kSecond = 1'000'000'000;

struct Scratch {
  Scratch() {
    std::string tmpl = (fs::temp_directory_path() / "folio-index-test-XXXXXX").string();
    REQUIRE(mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  // Writes in place (same inode when the file exists) and sets the mtime.
  void Write(const std::string& rel, const std::string& content, int64_t mtime_ns) const {
    fs::create_directories((path / rel).parent_path());
    { std::ofstream(path / rel, std::ios::binary) << content; }  // O_TRUNC keeps the inode
    SetMtime(rel, mtime_ns);
  }
  void SetMtime(const std::string& rel, int64_t mtime_ns) const {
    timespec ts[2] = {{mtime_ns / kSecond, mtime_ns % kSecond}, {mtime_ns / kSecond, mtime_ns % kSecond}};
    REQUIRE(::utimensat(AT_FDCWD, (path / rel).c_str(), ts, 0) == 0);
  }
  fs::path path;
};

std::string Sha(int c) { return std::string(64, static_cast<char>('a' + c % 6)); }

Index SampleIndex() {
  Index index;
  index.server = "http://127.0.0.1:1";
  index.site = "default";
  index.epoch = "0123abcd";
  index.version = 42;
  index.walked_ns = 1'700'000'000 * kSecond;
  index.entries = {
      {"A note.md", false, {10, 1'600'000'000 * kSecond + 5, 77}, Sha(0), Sha(0)},   // same on both sides
      {"Media/p.png", true, {3, 1'600'000'000 * kSecond, 78}, Sha(1), Sha(2)},        // server holds another
      {"local only.md", false, {4, 1'600'000'000 * kSecond, 79}, Sha(3), ""},         // not on the server
      {"server only.md", false, {}, "", Sha(4)},                                      // skipped locally
  };
  return index;
}

bool SameEntries(const Index& a, const Index& b) {
  if (a.entries.size() != b.entries.size()) return false;
  for (size_t i = 0; i < a.entries.size(); ++i) {
    const IndexEntry &x = a.entries[i], &y = b.entries[i];
    if (x.path != y.path || x.attachment != y.attachment || !(x.stat == y.stat) || x.sha256 != y.sha256 ||
        x.server_sha256 != y.server_sha256) {
      return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("index: written and read back the same; the .folio directory is not part of the vault") {
  Scratch dir;
  Index index = SampleIndex();
  REQUIRE(WriteIndex(dir.path, index).ok());
  Result<Index> back = ReadIndex(dir.path);
  REQUIRE(back.ok());
  CHECK(back->server == index.server);
  CHECK(back->site == index.site);
  CHECK(back->epoch == index.epoch);
  CHECK(back->version == 42);
  CHECK(back->walked_ns == index.walked_ns);
  CHECK(SameEntries(*back, index));
  CHECK(fs::exists(dir.path / ".folio" / "index"));
  for (const auto& e : fs::directory_iterator(dir.path / ".folio")) {
    CHECK(e.path().filename() == "index");  // no temporary file left behind
  }
  Result<Vault> vault = WalkVault(dir.path, {});
  REQUIRE(vault.ok());
  CHECK(vault->notes.empty());
  CHECK(vault->skipped.empty());
}

TEST_CASE("index: a missing, corrupt, truncated or unknown-version index is refused, naming the problem") {
  Scratch dir;
  CHECK(ReadIndex(dir.path).status().code() == Code::kNotFound);
  REQUIRE(WriteIndex(dir.path, SampleIndex()).ok());
  std::string good;
  {
    std::ifstream in(dir.path / ".folio" / "index", std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto with = [&](const std::string& text) {
    std::ofstream(dir.path / ".folio" / "index", std::ios::binary | std::ios::trunc) << text;
    return ReadIndex(dir.path).status();
  };
  std::string other_version = good;
  other_version.replace(0, std::string(kIndexMagic).size(), "folio-index 9");
  Status s = with(other_version);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("not an index of this version") != std::string::npos);
  s = with(good.substr(0, good.size() - 30));  // torn write
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("truncated") != std::string::npos);
  std::string bad_hash = good;
  bad_hash.replace(bad_hash.find(Sha(3)), 4, "zzzz");
  s = with(bad_hash);
  CHECK(s.code() == Code::kInvalidArgument);
  CHECK(s.message().find("bad line") != std::string::npos);
  CHECK(with("").code() == Code::kInvalidArgument);
  CHECK(with(std::string("\0\1\2garbage\n", 12)).code() == Code::kInvalidArgument);
  CHECK(with(good).ok());
}

TEST_CASE("stat cache: a file whose stat data matches is not read; a changed one is") {
  Scratch dir;
  const int64_t past = (WallClockNs() / kSecond - 1000) * kSecond;
  dir.Write("a.md", "# A\n", past);
  dir.Write("b.md", "# B\n", past);
  dir.Write("p.png", "PNG1", past);
  Result<Vault> first = WalkVault(dir.path, {});
  REQUIRE(first.ok());
  CHECK(first->hashed == 3);
  Index index = IndexAfterPush(*first, Manifest{}, PushPlan{}, PushOutcome{}, "http://x", WallClockNs());
  REQUIRE(index.entries.size() == 3);

  // Same size, same mtime, same inode, other bytes: trusted, so not read (the
  // old hash proves it), as git does; a real edit changes the mtime.
  dir.Write("a.md", "# Z\n", past);
  dir.Write("b.md", "# B, longer\n", past);             // size differs
  dir.Write("p.png", "PNG2", past + 3 * kSecond);       // mtime differs
  StatCache cache(index);
  WalkOptions options;
  options.cache = &cache;
  Result<Vault> second = WalkVault(dir.path, options);
  REQUIRE(second.ok());
  CHECK(second->hashed == 2);
  REQUIRE(second->notes.size() == 2);
  CHECK(second->notes[0].sha256 == Sha256Hex("# A\n"));
  CHECK(second->notes[1].sha256 == Sha256Hex("# B, longer\n"));
  CHECK(second->attachments[0].sha256 == Sha256Hex("PNG2"));

  // A file that grew past the limit is skipped even though it is cached.
  WalkOptions small = options;
  small.max_note_bytes = 5;
  Result<Vault> third = WalkVault(dir.path, small);
  REQUIRE(third.ok());
  CHECK(third->notes.size() == 1);
  REQUIRE(third->skipped.size() == 1);
  CHECK(third->skipped[0].path == "b.md");
}

TEST_CASE("stat cache: racy mtime; a file modified within the clock margin of the walk is hashed again") {
  Scratch dir;
  const int64_t walked = WallClockNs();
  const int64_t racy = walked - kSecond / 2;  // same second as the walk that hashed it
  dir.Write("a.md", "# A\n", racy);
  Result<Vault> first = WalkVault(dir.path, {});
  REQUIRE(first.ok());
  Index index = IndexAfterPush(*first, Manifest{}, PushPlan{}, PushOutcome{}, "http://x", walked);
  // Changed right after the hash within the same tick: same size, same mtime.
  dir.Write("a.md", "# Z\n", racy);
  StatCache cache(index);
  WalkOptions options;
  options.cache = &cache;
  Result<Vault> second = WalkVault(dir.path, options);
  REQUIRE(second.ok());
  CHECK(second->hashed == 1);
  REQUIRE(second->notes.size() == 1);
  CHECK(second->notes[0].sha256 == Sha256Hex("# Z\n"));
}

namespace {

// The server's side as the ingest store keeps it: each file with the
// version that wrote it, tombstones of deletions.
struct ServerModel {
  struct File {
    std::string sha;
    bool attachment;
    int64_t version;
  };
  int64_t version = 0;
  std::map<std::string, File> files;
  std::map<std::string, int64_t> tombstones;

  void Put(const std::string& path, const std::string& sha, bool attachment) {
    files[path] = {sha, attachment, version};
    tombstones.erase(path);
  }
  void Delete(std::string path) {  // by value: callers pass a key of `files`
    if (files.erase(path)) tombstones[path] = version;
  }
  Manifest Since(int64_t since) const {
    Manifest m;
    m.version = version;
    m.site = "default";
    m.epoch = "e1";
    m.delta = since >= 0;
    for (const auto& [path, f] : files) {
      if (f.version > since) (f.attachment ? m.attachments : m.notes).push_back({path, f.sha, "/u"});
    }
    for (const auto& [path, v] : tombstones) {
      if (m.delta && v > since) m.deleted.push_back(path);
    }
    if (m.delta) {
      m.note_count = static_cast<int64_t>(std::count_if(files.begin(), files.end(), [](auto& f) { return !f.second.attachment; }));
      m.attachment_count = static_cast<int64_t>(files.size()) - m.note_count;
    }
    return m;
  }
  // A push of `plan`; one version if it changes anything.
  void Push(const PushPlan& plan) {
    if (plan.notes.to_send.empty() && plan.attachments.to_send.empty() && plan.to_delete.empty()) return;
    ++version;
    for (const LocalFile& f : plan.notes.to_send) Put(f.path, f.sha256, false);
    for (const LocalFile& f : plan.attachments.to_send) Put(f.path, f.sha256, true);
    for (const std::string& p : plan.to_delete) Delete(p);
  }
};

std::string Describe(const PushPlan& p) {
  std::string s;
  for (const FileChanges* c : {&p.notes, &p.attachments}) {
    for (size_t i = 0; i < c->to_send.size(); ++i) {
      s += "send " + c->to_send[i].path + " " + c->to_send[i].sha256.substr(0, 8) + " " +
           std::to_string(c->to_send[i].size) + (c->is_new[i] ? " new\n" : " changed\n");
    }
    s += "counts " + std::to_string(c->new_count) + " " + std::to_string(c->changed_count) + " " +
         std::to_string(c->unchanged) + "\n";
  }
  for (const std::string& d : p.to_delete) s += "delete " + d + "\n";
  return s;
}

}  // namespace

TEST_CASE("sync: the plan from the index plus a manifest delta equals the full path on random change sets") {
  for (unsigned seed = 1; seed <= 12; ++seed) {
    Scratch dir;
    std::mt19937 rng(seed);
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    const int64_t base = (WallClockNs() / kSecond - 5000) * kSecond;
    int64_t clock = base;
    std::map<std::string, std::string> local;  // what we wrote, by path
    auto name = [&](int i) { return i % 5 == 0 ? "Media/f" + std::to_string(i) + ".png" : "d" + std::to_string(i % 3) + "/n" + std::to_string(i) + ".md"; };
    auto write = [&](const std::string& path, const std::string& content) {
      clock += kSecond;
      dir.Write(path, content, clock);
      local[path] = content;
    };
    for (int i = 0; i < 30; ++i) write(name(i), "# note " + std::to_string(i) + "\n");
    ServerModel server;
    const std::string url = "http://server";
    Index index;
    bool have_index = false;
    for (int round = 0; round < 12; ++round) {
      INFO("seed ", seed, " round ", round);
      if (round > 0) {
        for (int k = pick(6); k >= 0; --k) {
          std::vector<std::string> paths;
          for (const auto& [p, c] : local) paths.push_back(p);
          const std::string victim = paths.empty() ? name(0) : paths[static_cast<size_t>(pick(static_cast<int>(paths.size())))];
          switch (pick(7)) {
            case 0: write(victim, local[victim] + "edit\n"); break;                  // edit, new size
            case 1: write(victim, std::string(local[victim].size(), 'x')); break;  // edit, same size
            case 2: write(name(100 + pick(50)), "# new " + std::to_string(rng()) + "\n"); break;
            case 3: fs::remove(dir.path / victim); local.erase(victim); break;
            case 4: {  // rename (keeps the inode)
              std::string to = victim.ends_with(".md") ? "renamed/r" + std::to_string(pick(1000)) + ".md" : victim;
              if (to == victim || local.contains(to)) break;
              fs::create_directories((dir.path / to).parent_path());
              fs::rename(dir.path / victim, dir.path / to);
              local[to] = local[victim];
              local.erase(victim);
              break;
            }
            case 5:  // touch, no content change
              clock += kSecond;
              if (local.contains(victim)) dir.SetMtime(victim, clock);
              break;
            case 6: {  // another client pushes: edit, add or delete on the server
              ++server.version;
              std::string path = pick(2) ? victim : name(200 + pick(20));
              if (pick(3) == 0 && !server.files.empty()) server.Delete(server.files.begin()->first);
              else server.Put(path, Sha256Hex(std::to_string(rng())), path.ends_with(".png"));
              break;
            }
          }
        }
      }
      // The full path: every file hashed, the full manifest.
      Result<Vault> full_vault = WalkVault(dir.path, {});
      REQUIRE(full_vault.ok());
      PushPlan full_plan = Diff(*full_vault, server.Since(-1));
      // The incremental path: the index as written after the last push.
      Result<Index> read = ReadIndex(dir.path);
      REQUIRE(read.ok() == have_index);
      ServerView view;
      auto fetch = [&](int64_t since) -> Result<Manifest> { return server.Since(since); };
      Result<ServerView> v = LoadServerView(have_index ? &*read : nullptr, url, false, fetch);
      REQUIRE(v.ok());
      CHECK(v->from_delta == have_index);
      CHECK(v->note.empty());
      StatCache cache = have_index ? StatCache(*read) : StatCache();
      WalkOptions options;
      options.cache = &cache;
      const int64_t walked = WallClockNs();
      Result<Vault> inc_vault = WalkVault(dir.path, options);
      REQUIRE(inc_vault.ok());
      PushPlan inc_plan = Diff(*inc_vault, v->manifest);
      CHECK(Describe(inc_plan) == Describe(full_plan));
      if (have_index) CHECK(inc_vault->hashed <= 7);  // only what this round touched
      server.Push(inc_plan);
      PushOutcome outcome;
      outcome.version = server.version;
      // As push records it: odd seeds keep every push in the journal, even
      // ones rewrite the index as a small vault's push does.
      Index next = IndexAfterPush(*inc_vault, v->manifest, inc_plan, outcome, url, walked);
      const Index none;
      const Index& old = have_index ? *read : none;
      std::vector<IndexRow> rows = IndexRowsAfterPush(*inc_vault, v->manifest, inc_plan, outcome);
      int64_t bound = seed % 2 ? int64_t{1} << 20 : old.file.size / 16;
      REQUIRE(index_internal::UpdateIndex(dir.path, old, next, rows, bound).ok());
      Result<Index> back = ReadIndex(dir.path);
      REQUIRE(back.ok());
      CHECK(SameEntries(*back, next));
      CHECK(back->version == next.version);
      if (seed % 2 == 1 && have_index) CHECK(fs::exists(dir.path / ".folio" / "index.log"));
      have_index = true;
    }
  }
}

TEST_CASE("sync: an unusable delta falls back to the full manifest with one note") {
  ServerModel server;
  server.version = 3;
  server.Put("a.md", Sha(1), false);
  Index index;
  index.server = "http://server";
  index.site = "default";
  index.epoch = "e1";
  index.version = 3;
  index.entries = {{"a.md", false, {}, "", Sha(1)}};
  int full_fetches = 0;
  auto answer = [&](Manifest delta) {
    full_fetches = 0;
    return [&, delta](int64_t since) -> Result<Manifest> {
      if (since < 0) {
        ++full_fetches;
        return server.Since(-1);
      }
      return delta;
    };
  };
  Manifest too_old = server.Since(3);
  too_old.too_old = true;
  Result<ServerView> v = LoadServerView(&index, "http://server", false, answer(too_old));
  REQUIRE(v.ok());
  CHECK_FALSE(v->from_delta);
  CHECK(full_fetches == 1);
  CHECK(v->note.find("no longer records every deletion") != std::string::npos);

  Manifest restored = server.Since(3);
  restored.version = 2;  // went backwards
  v = LoadServerView(&index, "http://server", false, answer(restored));
  REQUIRE(v.ok());
  CHECK(v->note.find("older than the index's 3") != std::string::npos);
  CHECK(full_fetches == 1);

  Manifest other_site = server.Since(3);
  other_site.site = "other";
  v = LoadServerView(&index, "http://server", false, answer(other_site));
  REQUIRE(v.ok());
  CHECK(v->note.find("another site") != std::string::npos);

  Manifest restored_epoch = server.Since(3);
  restored_epoch.epoch = "e2";  // restored from a backup, then pushed past the index's version
  v = LoadServerView(&index, "http://server", false, answer(restored_epoch));
  REQUIRE(v.ok());
  CHECK(v->note.find("restored from a backup") != std::string::npos);

  Manifest miscounted = server.Since(3);
  miscounted.note_count = 2;  // the server holds a file the index does not know of
  v = LoadServerView(&index, "http://server", false, answer(miscounted));
  REQUIRE(v.ok());
  CHECK(v->note.find("file counts") != std::string::npos);
  CHECK(full_fetches == 1);

  auto refused = [&](int64_t since) -> Result<Manifest> {
    if (since < 0) return server.Since(-1);
    return Status::Invalid("the server rejected manifest: since=3 is newer than the site's version 1");
  };
  v = LoadServerView(&index, "http://server", false, refused);
  REQUIRE(v.ok());
  CHECK(v->note.find("newer than the site's version") != std::string::npos);

  v = LoadServerView(&index, "http://elsewhere", false, answer(server.Since(3)));
  REQUIRE(v.ok());
  CHECK(v->note.find("another server") != std::string::npos);
  v = LoadServerView(&index, "http://server", true, answer(server.Since(3)));  // --full
  REQUIRE(v.ok());
  CHECK(v->note.empty());
  CHECK_FALSE(v->from_delta);
  CHECK(full_fetches == 1);
  v = LoadServerView(&index, "http://server", false, answer(server.Since(3)));
  REQUIRE(v.ok());
  CHECK(v->from_delta);
  CHECK(full_fetches == 0);
  REQUIRE(v->manifest.notes.size() == 1);
  CHECK(v->manifest.notes[0].sha256 == Sha(1));
}

namespace {

std::vector<IndexRow> RowsOf(const Index& index) {
  std::vector<IndexRow> rows;
  for (const IndexEntry& e : index.entries) rows.push_back(RowOf(e));
  return rows;
}

const IndexEntry* EntryOf(const Index& index, const std::string& path) {
  for (const IndexEntry& e : index.entries) {
    if (e.path == path) return &e;
  }
  return nullptr;
}

}  // namespace

TEST_CASE("index journal: a push changing few entries appends a block; the index file stays; reads apply it") {
  Scratch dir;
  REQUIRE(WriteIndex(dir.path, SampleIndex()).ok());
  const fs::path file = dir.path / ".folio" / "index", journal = dir.path / ".folio" / "index.log";
  struct stat before;
  REQUIRE(::stat(file.c_str(), &before) == 0);
  Result<Index> old = ReadIndex(dir.path);
  REQUIRE(old.ok());
  Index next = *old;  // one note edited and pushed, one gone, one new
  next.version = 43;
  next.walked_ns = old->walked_ns + 10 * kSecond;
  next.entries[0].stat.size = 11;
  next.entries[0].sha256 = next.entries[0].server_sha256 = Sha(5);
  next.entries.erase(next.entries.begin() + 2);  // "local only.md"
  next.entries.push_back({"zz new.md", false, {5, old->walked_ns + kSecond, 90}, Sha(1), Sha(1)});
  REQUIRE(index_internal::UpdateIndex(dir.path, *old, next, RowsOf(next), 1 << 20).ok());
  struct stat after;
  REQUIRE(::stat(file.c_str(), &after) == 0);
  CHECK(after.st_ino == before.st_ino);  // not rewritten
  CHECK(after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
  CHECK(fs::exists(journal));
  Result<Index> back = ReadIndex(dir.path);
  REQUIRE(back.ok());
  CHECK(SameEntries(*back, next));
  CHECK(back->version == 43);
  CHECK(EntryOf(*back, "zz new.md")->walked_ns == next.walked_ns);  // its own walk, for the racy rule
  CHECK(EntryOf(*back, "Media/p.png")->walked_ns == 0);             // unchanged: the index's

  SUBCASE("a second block on top, then a torn third one: the complete blocks stand") {
    Index third = *back;
    third.version = 44;
    third.walked_ns = next.walked_ns + kSecond;
    third.entries.erase(third.entries.begin());  // "A note.md" deleted
    for (IndexEntry& e : third.entries) e.walked_ns = 0;
    REQUIRE(index_internal::UpdateIndex(dir.path, *back, third, RowsOf(third), 1 << 20).ok());
    { std::ofstream(journal, std::ios::app) << "push\t45\t" << third.walked_ns + kSecond << "\ndel\tMedia/p.png\n"; }
    Result<Index> again = ReadIndex(dir.path);
    REQUIRE(again.ok());
    CHECK(SameEntries(*again, third));
    CHECK(again->version == 44);
  }
  SUBCASE("a journal of another index (rewritten meanwhile) is ignored") {
    Index other = SampleIndex();
    other.version = 50;
    REQUIRE(WriteIndex(dir.path, other).ok());  // leaves the journal in place
    REQUIRE(fs::exists(journal));
    Result<Index> again = ReadIndex(dir.path);
    REQUIRE(again.ok());
    CHECK(SameEntries(*again, other));
    CHECK(again->version == 50);
    CHECK(again->journal.empty());
  }
  SUBCASE("past its bound (1/16 of a small index here) the index is rewritten and the journal dropped") {
    Index third = *back;
    third.version = 44;
    for (IndexEntry& e : third.entries) e.walked_ns = 0;
    REQUIRE(UpdateIndex(dir.path, *back, third, RowsOf(third)).ok());
    CHECK_FALSE(fs::exists(journal));
    Result<Index> again = ReadIndex(dir.path);
    REQUIRE(again.ok());
    CHECK(SameEntries(*again, third));
    CHECK(again->version == 44);
  }
}

TEST_CASE("index journal: an entry is racy against its own block's walk; one that becomes trusted is recorded") {
  Scratch dir;
  Index index = SampleIndex();
  const int64_t m = index.entries[0].stat.mtime_ns;
  index.walked_ns = m + 100 * kSecond;
  {
    Index racy = index;
    racy.entries[0].walked_ns = m + kSecond / 2;  // hashed within the tick of its walk
    CHECK(StatCache(racy).Find("A note.md", racy.entries[0].stat) == nullptr);
    racy.entries[0].walked_ns = 0;  // the index's walk, long after
    CHECK(StatCache(racy).Find("A note.md", racy.entries[0].stat) != nullptr);
  }
  // Written racy; the next push (same fields, a later walk) records it again, now trusted.
  index.walked_ns = m + kSecond / 2;
  REQUIRE(WriteIndex(dir.path, index).ok());
  Result<Index> old = ReadIndex(dir.path);
  REQUIRE(old.ok());
  CHECK(StatCache(*old).Find("A note.md", old->entries[0].stat) == nullptr);
  Index next = *old;
  next.version = 43;
  next.walked_ns = m + 100 * kSecond;
  REQUIRE(index_internal::UpdateIndex(dir.path, *old, next, RowsOf(next), 1 << 20).ok());
  Result<Index> back = ReadIndex(dir.path);
  REQUIRE(back.ok());
  CHECK(EntryOf(*back, "A note.md")->walked_ns == next.walked_ns);
  CHECK(StatCache(*back).Find("A note.md", back->entries[0].stat) != nullptr);
}

TEST_CASE("stat cache: a folder's files are found among its entries alone, under a scope too") {
  for (std::string scope : {"", "Team A/"}) {
    INFO("scope '", scope, "'");
    Index index;
    index.walked_ns = 1'700'000'000 * kSecond;
    const FileStat st{4, 1'600'000'000 * kSecond, 9};
    for (std::string p : {"A/B/y.md", "A/x.md", "A/z.md", "Ax.md", "top.md"}) {
      index.entries.push_back({scope + p, false, st, Sha(p.size()), ""});
    }
    index.entries.push_back({"Z outside.md", false, st, Sha(0), ""});
    std::sort(index.entries.begin(), index.entries.end(),
              [](const IndexEntry& a, const IndexEntry& b) { return a.path < b.path; });
    StatCache cache(index, scope);
    StatCache::Folder a = cache.In("A/");
    CHECK(a.end - a.begin == 3);  // A/B/y.md, A/x.md, A/z.md
    REQUIRE(cache.Find(a, "x.md", st) != nullptr);
    CHECK(*cache.Find(a, "x.md", st) == Sha(6));
    CHECK(cache.Find(a, "z.md", st) != nullptr);
    CHECK(cache.Find(a, "y.md", st) == nullptr);  // in A/B/, not A/
    CHECK(cache.Find(a, "x.md", FileStat{5, st.mtime_ns, st.ino}) == nullptr);
    CHECK(cache.Find(cache.In("A/B/"), "y.md", st) != nullptr);
    StatCache::Folder root = cache.In("");
    CHECK(cache.Find(root, "top.md", st) != nullptr);
    CHECK(cache.Find(root, "Ax.md", st) != nullptr);
    CHECK(cache.Find(cache.In("Nope/"), "x.md", st) == nullptr);
    CHECK(StatCache().In("A/").begin == StatCache().In("A/").end);
  }
}
