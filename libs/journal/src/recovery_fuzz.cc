// libFuzzer target: journal recovery from arbitrary bytes. The input becomes
// the files of a journal directory (segments and maybe a CHECKPOINT); then
// Journal::Open, List, Get and reads of every blob, maybe a Put, a close and
// a second Open. Checks what journal.h, blob.h and README.md "Recovery"
// promise:
//   - Open succeeds (corruption is skipped or cut off, never fatal; the
//     only errors are I/O errors, which a temp dir does not have);
//   - List is sorted and unique and agrees with stats().live_blobs; Get of
//     a listed key succeeds with the listed size, meta and seq;
//   - a read either fails with a status and an empty result, or returns
//     exactly the bytes asked for, the same bytes for the same range; a read
//     past the end is kInvalidArgument;
//   - after a recovery by scan (no checkpoint used) every blob reads back:
//     a scan never admits a blob whose blocks are damaged;
//   - a Put that returned OK is there, byte for byte, after a close and a
//     reopen (also when the CHECKPOINT is then deleted);
//   - closing and reopening without writes recovers the same blobs with the
//     same bytes (or the same read failures).
//
// Input: byte 0 holds flags, the rest is split on "~~FILE~~" into files:
//   bit 0: repair records: every 8-aligned "FOLJ" header gets the segment id
//          and offset it sits at and a correct CRC, so mutations reach the
//          logic behind the checksums;
//   bit 1: repair the CHECKPOINT's CRC (a semantically hostile checkpoint;
//          the reopen-equality check is skipped then: a checkpoint with a
//          valid CRC but lies in it is outside what the journal defends);
//   bit 2: segment ids 1, 3, 5... (gaps) instead of 1, 2, 3...;
//   bit 3: Put a 150-byte blob (two blocks and a tail) after the first open;
//   bit 4: the Put overwrites the first listed key instead of a new one;
//   bit 5: the last file is CHECKPOINT (if there are two or more);
//   bit 6: delete CHECKPOINT before the reopen.
// Seeds: tests/fuzz/corpus/journal_recovery_fuzz, written by this file when
// FOLIO_JOURNAL_SEEDS=DIR is set (journal_recovery_fuzz_replay does it).
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/log.h"
#include "folio/journal/crc32c.h"
#include "folio/journal/journal.h"
#include "format.h"

namespace {

namespace fs = std::filesystem;
using folio::Code;
using folio::Status;
using folio::journal::Journal;
namespace format = folio::journal::format;
namespace crc32c = folio::journal::crc32c;

constexpr std::string_view kSeparator = "~~FILE~~";
constexpr size_t kMaxFiles = 6;

void Require(bool ok, const char* what, std::string_view detail = "") {
  if (ok) return;
  std::fprintf(stderr, "recovery_fuzz: %s: %.*s\n", what, static_cast<int>(std::min<size_t>(detail.size(), 400)),
               detail.data());
  std::abort();
}

folio::journal::Options SmallOptions() {
  folio::journal::Options o;
  o.segment_bytes = 64u << 10;
  o.block_bytes = 64;
  o.background = false;
  return o;
}

std::string* scratch_root = nullptr;

void RemoveScratch() {
  std::error_code ec;
  if (scratch_root != nullptr) fs::remove_all(*scratch_root, ec);
}

// A per-process directory in memory (/dev/shm) if possible: the journal
// fsyncs, and the fuzzer opens thousands of journals a second.
std::string Scratch() {
  if (scratch_root == nullptr) {
    std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : fs::temp_directory_path().string();
    std::string tmpl = base + "/folio-journal-fuzz-XXXXXX";
    Require(mkdtemp(tmpl.data()) != nullptr, "mkdtemp", tmpl);
    scratch_root = new std::string(tmpl);
    std::atexit(RemoveScratch);
  }
  return *scratch_root + "/j";
}

void WriteFile(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  Require(static_cast<bool>(out), "cannot write", path);
}

// Gives every plausible record header the place it sits at and a valid CRC.
// Back to front, so a record's CRC covers repaired records inside it.
void RepairRecords(uint32_t id, std::string* seg) {
  if (seg->size() < format::kHeaderSize) return;
  for (size_t pos = (seg->size() - format::kHeaderSize) / format::kAlign * format::kAlign;; pos -= format::kAlign) {
    char* p = seg->data() + pos;
    format::RecordHeader h;
    if (format::Get32(p) == format::kRecordMagic && format::ParseHeader(p, &h) && h.size() <= seg->size() - pos) {
      format::Put32(p + format::kOffSegment, id);
      format::Put32(p + format::kOffPosition, static_cast<uint32_t>(pos));
      size_t payload = size_t{h.key_len} + h.body_len;
      uint32_t crc = crc32c::Extend(0, p + format::kHeaderSize, payload);
      crc = crc32c::Extend(crc, p, format::kHeaderSize);
      format::Put32(p + format::kHeaderSize + payload, crc32c::Mask(crc));
    }
    if (pos == 0) break;
  }
}

void RepairCheckpoint(std::string* ckpt) {
  if (ckpt->size() < 4) return;
  size_t n = ckpt->size() - 4;
  format::Put32(ckpt->data() + n, crc32c::Mask(crc32c::Value(ckpt->data(), n)));
}

struct BlobState {
  folio::journal::BlobInfo info;
  bool readable = false;
  std::string bytes;  // when readable
};

// Lists and reads every blob, checking the read contracts on the way.
std::vector<BlobState> Inspect(Journal& j) {
  auto listed = j.List("", 100000);
  Require(listed.ok(), "List failed", listed.status().message());
  Require(j.stats().live_blobs == listed->size(), "stats().live_blobs disagrees with List");
  std::vector<BlobState> out;
  for (size_t i = 0; i < listed->size(); ++i) {
    const auto& info = (*listed)[i];
    Require(i == 0 || (*listed)[i - 1].key < info.key, "List not sorted and unique", info.key);
    auto r = j.Get(info.key);
    Require(r.ok(), "Get of a listed key failed", r.status().message());
    Require(r->key() == info.key && r->meta() == info.meta && r->size() == info.size && r->seq() == info.seq,
            "Get disagrees with List", info.key);
    BlobState b{info, false, ""};
    std::string got;
    Status s = r->ReadAll(&got);
    if (s.ok()) {
      Require(got.size() == info.size, "ReadAll returned a wrong size", info.key);
      b.readable = true;
      b.bytes = got;
      for (uint64_t off : {uint64_t{1}, info.size / 2, info.size}) {
        if (off > info.size) continue;
        std::string part;
        Status ps = r->ReadAt(off, 70, &part);
        Require(ps.ok(), "ReadAt failed after ReadAll succeeded", ps.message());
        Require(part == got.substr(off, 70), "ReadAt returned other bytes than ReadAll", info.key);
      }
    } else {
      Require(got.empty(), "failed ReadAll left bytes", s.message());
      // kDataLoss: a block failed its checksum (or belongs to another blob).
      Require(s.code() == Code::kDataLoss || s.code() == Code::kInternal || s.code() == Code::kUnavailable,
              "unexpected ReadAll error", s.message());
    }
    std::string past = "x";
    Status ps = r->ReadAt(info.size + 1, 1, &past);
    Require(ps.code() == Code::kInvalidArgument && past.empty(), "read past the end", ps.message());
    out.push_back(std::move(b));
  }
  return out;
}

void RequireSame(const std::vector<BlobState>& a, const std::vector<BlobState>& b) {
  Require(a.size() == b.size(), "reopen recovered a different number of blobs");
  for (size_t i = 0; i < a.size(); ++i) {
    Require(a[i].info.key == b[i].info.key && a[i].info.size == b[i].info.size && a[i].info.meta == b[i].info.meta &&
                a[i].info.seq == b[i].info.seq,
            "reopen recovered a different blob", a[i].info.key);
    Require(a[i].readable == b[i].readable && a[i].bytes == b[i].bytes, "reopen reads differently", a[i].info.key);
  }
}

std::string PutData() {
  std::string d;
  for (int i = 0; i < 150; ++i) d.push_back(static_cast<char>('a' + i % 26));
  return d;
}

void WriteSeeds(const std::string& dir);

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  folio::log::Configure(folio::log::Level::kError, folio::log::Format::kText);
  if (const char* seeds = getenv("FOLIO_JOURNAL_SEEDS"); seeds && *seeds) {
    WriteSeeds(seeds);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t flags = data[0];
  std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<std::string> files;
  while (files.size() + 1 < kMaxFiles) {
    size_t at = rest.find(kSeparator);
    if (at == std::string_view::npos) break;
    files.emplace_back(rest.substr(0, at));
    rest.remove_prefix(at + kSeparator.size());
  }
  files.emplace_back(rest);

  const std::string dir = Scratch();
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  bool has_checkpoint = (flags & 32) && files.size() >= 2;
  if (has_checkpoint) {
    if (flags & 2) RepairCheckpoint(&files.back());
    WriteFile(dir + "/" + format::kCheckpointName, files.back());
    files.pop_back();
  }
  for (size_t i = 0; i < files.size(); ++i) {
    auto id = static_cast<uint32_t>(1 + i * ((flags & 4) ? 2 : 1));
    if (flags & 1) RepairRecords(id, &files[i]);
    WriteFile(dir + "/" + format::SegmentName(id), files[i]);
  }

  std::vector<BlobState> before;
  std::string put_key;
  const std::string put_data = PutData();
  {
    auto j = Journal::Open(dir, SmallOptions());
    Require(j.ok(), "Open failed", j.status().message());
    before = Inspect(**j);
    if (!(*j)->stats().checkpoint_loaded) {
      for (const auto& b : before) Require(b.readable, "a scan admitted a blob that does not read back", b.info.key);
    }
    if (flags & 8) {
      put_key = (flags & 16) && !before.empty() ? before.front().info.key : "fuzz-put";
      Status s = (*j)->Put(put_key, "meta", put_data);
      if (s.ok()) {
        auto r = (*j)->Get(put_key);
        Require(r.ok(), "Get after Put failed", r.status().message());
        std::string got;
        Require(r->ReadAll(&got).ok() && got == put_data, "Put did not read back", put_key);
      } else {
        put_key.clear();
      }
    }
  }
  if (flags & 64) fs::remove(dir + "/" + format::kCheckpointName, ec);
  auto j = Journal::Open(dir, SmallOptions());
  Require(j.ok(), "reopen failed", j.status().message());
  std::vector<BlobState> after = Inspect(**j);
  if (!put_key.empty()) {
    auto r = (*j)->Get(put_key);
    Require(r.ok(), "an acknowledged Put is gone after reopen", put_key);
    std::string got;
    Status s = r->ReadAll(&got);
    Require(s.ok() && got == put_data && r->meta() == "meta", "an acknowledged Put reads differently after reopen",
            s.message());
  } else if (!(flags & 64) && !(has_checkpoint && (flags & 2))) {
    RequireSame(before, after);
  }
  return 0;
}

namespace {

// Seeds: real journals written through the API, flattened into the input
// format above (flag bytes chosen to exercise each path).
void WriteSeeds(const std::string& out_dir) {
  fs::create_directories(out_dir);
  const std::string dir = Scratch();
  // twice: the segment again as segment 2 (with flag bit 0 its records are
  // repaired to belong there): later copies of every key win.
  auto make = [&](const char* name, uint8_t flags, auto&& fill, bool keep_checkpoint, bool twice = false) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    {
      auto j = Journal::Open(dir, SmallOptions());
      Require(j.ok(), "seed: Open", j.status().message());
      fill(**j);
      if (keep_checkpoint) Require((*j)->Checkpoint().ok(), "seed: Checkpoint");
    }
    std::vector<std::string> segs;
    for (const auto& e : fs::directory_iterator(dir)) {
      uint32_t id;
      if (format::ParseSegmentName(e.path().filename().string(), &id)) segs.push_back(e.path().string());
    }
    std::sort(segs.begin(), segs.end());
    auto read = [](const std::string& p) {
      std::ifstream in(p, std::ios::binary);
      return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    };
    std::string input(1, static_cast<char>(flags));
    for (size_t i = 0; i < segs.size(); ++i) input += (i ? std::string(kSeparator) : "") + read(segs[i]);
    if (twice) input += std::string(kSeparator) + read(segs.back());
    if (keep_checkpoint) input += std::string(kSeparator) + read(dir + "/" + format::kCheckpointName);
    WriteFile(out_dir + "/" + name, input);
  };
  auto blobs = [](Journal& j) {
    Require(j.Put("small", "m", "tiny").ok(), "seed put");
    Require(j.Put("three-blocks", "", std::string(64 * 3, 'b')).ok(), "seed put");
    Require(j.Put("blocks-and-tail", "meta", std::string(64 * 2 + 17, 'c')).ok(), "seed put");
    Require(j.Put("empty", "", "").ok(), "seed put");
  };
  auto churn = [&](Journal& j) {
    blobs(j);
    Require(j.Put("small", "m2", "overwritten").ok(), "seed put");
    Require(j.Delete("empty").ok(), "seed delete");
  };
  make("scan-blobs", 0x00, blobs, false);
  make("scan-churn-put", 0x08, churn, false);
  make("scan-churn-repair", 0x01, churn, false);
  make("checkpoint-blobs", 0x20, blobs, true);
  make("checkpoint-churn-overwrite", 0x38, churn, true);
  make("checkpoint-repair", 0x23, churn, true);
  make("checkpoint-dropped", 0x68, churn, true);
  make("two-segments-repair", 0x09, churn, false, true);
}

}  // namespace
