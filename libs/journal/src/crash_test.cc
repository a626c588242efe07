// kill -9 journal-crash-writer at random moments (10 rounds, each 50-400 ms
// of writing into the same directory), reopen the journal after each, and
// check: every ACKed blob reads back byte-identical; every blob present is
// complete and correct (nothing half-visible). Needs FOLIO_BIN_DIR (ctest
// sets it). The seed is printed; FOLIO_CRASH_SEED=<n> replays a run.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <thread>

#include "crash_content.h"
#include "folio/journal/journal.h"
#include "folio/testing/testing.h"

using namespace folio;
using namespace folio::journal;

namespace {

constexpr uint64_t kMaxBytes = 600000;  // blobs up to ~2.3 blocks of 256 KiB

// Keys ACKed in a writer's output; a last line without '\n' was cut by the kill.
std::set<uint64_t> ReadAcks(const std::string& path, bool* writer_error) {
  std::set<uint64_t> acks;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("ERR ")) *writer_error = true;
    if (!line.starts_with("ACK ") || in.eof()) continue;
    acks.insert(std::strtoull(line.c_str() + 4, nullptr, 10));
  }
  return acks;
}

}  // namespace

TEST_CASE("kill -9 at random moments: every ACKed blob survives byte-identical, nothing is half-visible") {
  testing::TempDir tmp;
  const std::string dir = tmp.path() + "/journal";
  const char* env_seed = std::getenv("FOLIO_CRASH_SEED");
  const uint64_t seed = env_seed != nullptr ? std::strtoull(env_seed, nullptr, 10) : std::random_device{}();
  MESSAGE("FOLIO_CRASH_SEED=", seed);
  std::mt19937_64 rng(seed);
  std::set<uint64_t> acked;
  uint64_t total_present = 0;
  for (int round = 0; round < 10; ++round) {
    CAPTURE(round);
    // Even rounds write new keys; odd rounds rewrite keys 0.. (same bytes),
    // so overwrites, garbage and compaction happen under the kill too.
    const uint64_t first = round % 2 == 0 ? static_cast<uint64_t>(round) * 100000 : 0;
    const std::string log_path = tmp.path() + "/writer-" + std::to_string(round) + ".log";
    const int ms = std::uniform_int_distribution<int>(50, 400)(rng);
    {
      testing::Process writer({testing::BinPath("journal-crash-writer"), dir, "--first", std::to_string(first),
                               "--threads", "4", "--max-bytes", std::to_string(kMaxBytes), "--block-bytes",
                               std::to_string(256 << 10), "--segment-bytes", std::to_string(4 << 20)},
                              {}, log_path);
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      REQUIRE_MESSAGE(writer.Running(), "the writer exited early; see ", log_path);
      writer.Kill();
    }
    bool writer_error = false;
    std::set<uint64_t> acks = ReadAcks(log_path, &writer_error);
    CHECK_FALSE(writer_error);
    acked.insert(acks.begin(), acks.end());

    Options o;
    o.background = false;
    Result<std::unique_ptr<Journal>> j = Journal::Open(dir, o);
    REQUIRE_MESSAGE(j.ok(), j.status().ToString());
    std::string out;
    for (uint64_t key : acked) {
      Result<BlobReader> r = (*j)->Get(crash::Key(key));
      REQUIRE_MESSAGE(r.ok(), "ACKed key ", key, ": ", r.status().ToString());
      REQUIRE(r->ReadAll(&out).ok());
      REQUIRE_MESSAGE(out == crash::Content(key, kMaxBytes), "ACKed key ", key, " has wrong bytes");
    }
    uint64_t present = 0;
    std::string after;
    for (;;) {
      Result<std::vector<BlobInfo>> page = (*j)->List("", 1000, after);
      REQUIRE(page.ok());
      if (page->empty()) break;
      for (const BlobInfo& b : *page) {
        ++present;
        Result<BlobReader> r = (*j)->Get(b.key);
        REQUIRE(r.ok());
        Status s = r->ReadAll(&out);
        REQUIRE_MESSAGE(s.ok(), "key ", b.key, ": ", s.ToString());
        REQUIRE_MESSAGE(out == crash::Content(std::strtoull(b.key.c_str(), nullptr, 10), kMaxBytes),
                        "unACKed key ", b.key, " is visible with wrong bytes");
      }
      after = page->back().key;
    }
    CHECK(present >= acked.size());
    total_present = present;
    MESSAGE("round ", round, ": killed after ", ms, " ms, acked this round ", acks.size(), ", total acked ",
            acked.size(), ", present ", present, ", truncated ", (*j)->stats().truncated_bytes, " B");
  }
  CHECK(acked.size() > 0);  // the writer did get work done
  CHECK(total_present > 0);
}
