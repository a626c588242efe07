// Helpers for the journal's tests (not part of the library): deterministic
// content, file surgery on copies of a journal directory, and FaultEnv, a
// wrapper of the real Env that injects failed syncs, short writes and a full
// disk.
// Threading: FaultEnv's switches are atomics, safe from any thread; the other
// helpers are plain functions.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <doctest/doctest.h>

#include "folio/journal/env.h"
#include "folio/journal/journal.h"

namespace folio::journal::test {

// Opens the journal in dir, or fails the test with the reason.
inline std::unique_ptr<Journal> OpenOrFail(const std::string& dir, const Options& o) {
  Result<std::unique_ptr<Journal>> j = Journal::Open(dir, o);
  REQUIRE_MESSAGE(j.ok(), j.status().ToString());
  return std::move(j).value();
}

inline uint64_t SplitMix(uint64_t* s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// n pseudo-random bytes determined by seed.
inline std::string Content(uint64_t seed, size_t n) {
  std::string out(n, '\0');
  uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
  for (size_t i = 0; i < n; i += 8) {
    uint64_t v = SplitMix(&s);
    for (size_t k = 0; k < 8 && i + k < n; ++k) out[i + k] = static_cast<char>(v >> (8 * k));
  }
  return out;
}

inline std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void WriteFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Segment file names of dir, sorted.
inline std::vector<std::string> SegmentFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (name.starts_with("segment-")) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// A scratch directory for loops that rewrite journal files thousands of
// times: on /dev/shm (tmpfs) when there is one, so the loop costs CPU, not
// the disk's unlink latency; removed by the destructor.
class ScratchDir {
 public:
  ScratchDir() {
    std::string base = std::filesystem::is_directory("/dev/shm") && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string templ = base + "/folio-journal-test-XXXXXX";
    if (mkdtemp(templ.data()) == nullptr) std::abort();
    path_ = templ;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Makes dst hold exactly src's files (no LOCK), rewriting files in place
// rather than recreating the directory.
inline void SyncDirContents(const std::string& src, const std::string& dst) {
  std::filesystem::create_directories(dst);
  for (const auto& e : std::filesystem::directory_iterator(dst)) {
    std::string name = e.path().filename().string();
    if (name != "LOCK" && !std::filesystem::exists(src + "/" + name)) std::filesystem::remove(e.path());
  }
  for (const auto& e : std::filesystem::directory_iterator(src)) {
    std::string name = e.path().filename().string();
    if (name != "LOCK") WriteFileBytes(dst + "/" + name, ReadFileBytes(e.path().string()));
  }
}

// Replaces dst's contents with copies of src's files (no LOCK).
inline void CopyDir(const std::string& src, const std::string& dst) {
  std::filesystem::remove_all(dst);
  std::filesystem::create_directories(dst);
  for (const auto& e : std::filesystem::directory_iterator(src)) {
    if (e.path().filename() == "LOCK") continue;
    std::filesystem::copy_file(e.path(), dst + "/" + e.path().filename().string());
  }
}

// The blob's bytes, or "<error: ...>" / "<absent>".
inline std::string ReadBlob(const Journal& j, const std::string& key) {
  Result<BlobReader> r = j.Get(key);
  if (!r.ok()) return r.status().code() == Code::kNotFound ? "<absent>" : "<error: " + r.status().ToString() + ">";
  std::string out;
  Status s = r->ReadAll(&out);
  return s.ok() ? out : "<error: " + s.ToString() + ">";
}

class FaultEnv final : public Env {
 public:
  std::atomic<bool> fail_sync{false};     // File::Sync fails
  std::atomic<bool> sync_enospc{false};   // ... reporting ENOSPC (kNoSpace), as ext4's fdatasync can
  // Syncs succeed without reaching the disk: for tests that reopen a journal
  // thousands of times and check what is in the files, not durability.
  std::atomic<bool> no_sync{false};
  std::atomic<bool> short_writes{false};  // WriteAt writes half, then fails
  std::atomic<uint64_t> syncs{0};
  std::atomic<int> sync_delay_us{0};      // every File::Sync first sleeps this long (a slow disk)
  // A full disk: once this many more WriteAt calls have succeeded, every
  // WriteAt fails with kNoSpace (ENOSPC) until set back to -1 (-1 = never).
  std::atomic<int64_t> writes_before_full{-1};
  std::atomic<bool> full_short{false};   // the failing write first writes half its bytes
  std::atomic<bool> full_create{false};  // creating a file (OpenFile with create) fails with kNoSpace

  void FillDisk(int64_t after_writes = 0) { writes_before_full = after_writes; }
  void FreeSpace() {
    writes_before_full = -1;
    full_create = false;
  }

  Result<std::unique_ptr<File>> OpenFile(const std::string& path, bool create) override {
    if (create && full_create && !std::filesystem::exists(path)) {
      return Status::NoSpace("injected: no space to create '" + path + "'");
    }
    Result<std::unique_ptr<File>> f = base_->OpenFile(path, create);
    if (!f.ok()) return f;
    return std::unique_ptr<File>(new FaultFile(this, std::move(f).value()));
  }
  Status ReadFile(const std::string& p, std::string* out) override { return base_->ReadFile(p, out); }
  Status CreateDir(const std::string& p) override { return base_->CreateDir(p); }
  Result<std::vector<std::string>> ListDir(const std::string& d) override { return base_->ListDir(d); }
  Status Remove(const std::string& p) override { return base_->Remove(p); }
  Status Rename(const std::string& a, const std::string& b) override { return base_->Rename(a, b); }
  Status SyncDir(const std::string& d) override { return no_sync ? Status::Ok() : base_->SyncDir(d); }
  Result<std::unique_ptr<DirLock>> LockFile(const std::string& p) override { return base_->LockFile(p); }

 private:
  class FaultFile final : public File {
   public:
    FaultFile(FaultEnv* env, std::unique_ptr<File> base) : File(base->path()), env_(env), base_(std::move(base)) {}
    Status WriteAt(uint64_t offset, std::span<const std::string_view> parts) override {
      int64_t left = env_->writes_before_full;
      while (left > 0 && !env_->writes_before_full.compare_exchange_weak(left, left - 1)) {
      }
      if (left == 0) {
        if (env_->full_short) WriteHalf(offset, parts);
        return Status::NoSpace("injected: no space left on device writing '" + path() + "'");
      }
      if (!env_->short_writes) return base_->WriteAt(offset, parts);
      WriteHalf(offset, parts);
      return Status::Unavailable("injected short write to '" + path() + "'");
    }
    void WriteHalf(uint64_t offset, std::span<const std::string_view> parts) {
      std::string all;
      for (std::string_view p : parts) all.append(p);
      std::string_view half[] = {std::string_view(all).substr(0, all.size() / 2)};
      Status ignored = base_->WriteAt(offset, half);
      (void)ignored;
    }
    Status ReadAt(uint64_t o, size_t n, char* out, size_t* got) const override { return base_->ReadAt(o, n, out, got); }
    Status Sync() override {
      ++env_->syncs;
      if (int d = env_->sync_delay_us; d > 0) std::this_thread::sleep_for(std::chrono::microseconds(d));
      if (env_->fail_sync && env_->sync_enospc) return Status::NoSpace("injected: fdatasync of '" + path() + "': no space");
      if (env_->fail_sync) return Status::Unavailable("injected fdatasync failure on '" + path() + "'");
      return env_->no_sync ? Status::Ok() : base_->Sync();
    }
    Status Truncate(uint64_t size) override { return base_->Truncate(size); }
    Result<uint64_t> Size() const override { return base_->Size(); }

   private:
    FaultEnv* env_;
    std::unique_ptr<File> base_;
  };

  Env* base_ = DefaultEnv();
};

}  // namespace folio::journal::test
