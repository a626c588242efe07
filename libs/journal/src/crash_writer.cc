// journal-crash-writer: a victim for kill -9 tests of the journal.
//
//   journal-crash-writer DIR [--first N] [--count N] [--threads N] [--max-bytes N]
//                            [--block-bytes N] [--segment-bytes N]
//     Opens the journal in DIR and writes blobs first..first+count-1 (key =
//     decimal index, content = crash::Content(index, max-bytes), see
//     crash_content.h); every third one streamed in pieces, the rest with
//     Put. After each Commit returns OK it writes "ACK <key>\n" to stdout
//     with one write(2) (no stdio buffer: a SIGKILL loses nothing printed).
//     Background compaction and checkpoints run as in production. Exits 0
//     when done, 1 on any error (printed to stderr as "ERR ...").
//
//   journal-crash-writer verify DIR ACK_FILE [--max-bytes N]
//     Opens DIR, checks that every key ACKed in ACK_FILE reads back exactly
//     and that every key present is complete and correct. Prints a summary;
//     exit 0 if all is well, 1 otherwise.
//
// Defaults: first 0, count 1000000, threads 4, max-bytes 2 MiB, block-bytes
// 256 KiB, segment-bytes 8 MiB (small, so runs roll over and compact).
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "crash_content.h"
#include "folio/journal/journal.h"

using namespace folio;
using namespace folio::journal;

namespace {

struct Args {
  std::string mode = "write", dir, ack_file;
  uint64_t first = 0, count = 1000000, threads = 4, max_bytes = 2u << 20;
  uint32_t block_bytes = 256u << 10;
  uint64_t segment_bytes = 8u << 20;
};

[[noreturn]] void Fail(const std::string& msg) {
  std::string line = "ERR " + msg + "\n";
  ssize_t ignored = write(2, line.data(), line.size());
  (void)ignored;
  std::_Exit(1);
}

bool ParseArgs(int argc, char** argv, Args* a) {
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (!arg.starts_with("--")) {
      pos.push_back(arg);
      continue;
    }
    if (i + 1 >= argc) return false;
    uint64_t v = std::strtoull(argv[++i], nullptr, 10);
    if (arg == "--first") a->first = v;
    else if (arg == "--count") a->count = v;
    else if (arg == "--threads") a->threads = v;
    else if (arg == "--max-bytes") a->max_bytes = v;
    else if (arg == "--block-bytes") a->block_bytes = static_cast<uint32_t>(v);
    else if (arg == "--segment-bytes") a->segment_bytes = v;
    else return false;
  }
  if (!pos.empty() && pos[0] == "verify") {
    if (pos.size() != 3) return false;
    a->mode = "verify";
    a->dir = pos[1];
    a->ack_file = pos[2];
    return true;
  }
  if (pos.size() != 1 || a->threads == 0) return false;
  a->dir = pos[0];
  return true;
}

Status WriteOne(Journal& j, uint64_t index, uint64_t max_bytes) {
  std::string key = crash::Key(index), data = crash::Content(index, max_bytes);
  if (index % 3 != 0) return j.Put(key, "application/octet-stream", data);
  Result<BlobWriter> w = j.BeginBlob(key, "application/octet-stream");
  if (!w.ok()) return w.status();
  for (size_t at = 0; at < data.size(); at += 10007) {
    if (Status s = w->Append(std::string_view(data).substr(at, 10007)); !s.ok()) return s;
  }
  return w->Commit();
}

int RunWriter(const Args& a) {
  Options o;
  o.block_bytes = a.block_bytes;
  o.segment_bytes = a.segment_bytes;
  o.checkpoint_bytes = 4u << 20;
  Result<std::unique_ptr<Journal>> j = Journal::Open(a.dir, o);
  if (!j.ok()) Fail("open: " + j.status().ToString());
  std::atomic<uint64_t> next{a.first};
  std::vector<std::thread> threads;
  for (uint64_t t = 0; t < a.threads; ++t) {
    threads.emplace_back([&] {
      for (uint64_t i = next++; i < a.first + a.count; i = next++) {
        if (Status s = WriteOne(**j, i, a.max_bytes); !s.ok()) Fail("commit " + crash::Key(i) + ": " + s.ToString());
        std::string line = "ACK " + crash::Key(i) + "\n";
        if (write(1, line.data(), line.size()) != static_cast<ssize_t>(line.size())) Fail("stdout");
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return 0;
}

int RunVerify(const Args& a) {
  Options o;
  o.background = false;
  o.create_if_missing = false;
  Result<std::unique_ptr<Journal>> j = Journal::Open(a.dir, o);
  if (!j.ok()) Fail("open: " + j.status().ToString());
  uint64_t acked = 0, present = 0, bad = 0;
  std::string out;
  auto check = [&](const std::string& key, bool must_exist) {
    Result<BlobReader> r = (*j)->Get(key);
    if (!r.ok()) {
      if (must_exist || r.status().code() != Code::kNotFound) {
        std::fprintf(stderr, "BAD %s: %s\n", key.c_str(), r.status().ToString().c_str());
        ++bad;
      }
      return;
    }
    Status s = r->ReadAll(&out);
    if (!s.ok() || out != crash::Content(std::strtoull(key.c_str(), nullptr, 10), a.max_bytes)) {
      std::fprintf(stderr, "BAD %s: %s\n", key.c_str(), s.ok() ? "wrong bytes" : s.ToString().c_str());
      ++bad;
    }
  };
  std::ifstream in(a.ack_file);
  for (std::string line; std::getline(in, line);) {
    if (!line.starts_with("ACK ") || in.eof()) continue;  // a last line without '\n' was cut by the kill
    ++acked;
    check(line.substr(4), true);
  }
  std::string after;
  for (;;) {
    Result<std::vector<BlobInfo>> page = (*j)->List("", 1000, after);
    if (!page.ok()) Fail("list: " + page.status().ToString());
    if (page->empty()) break;
    for (const BlobInfo& b : *page) {
      ++present;
      check(b.key, false);
    }
    after = page->back().key;
  }
  std::printf("acked %llu, present %llu, bad %llu\n", static_cast<unsigned long long>(acked),
              static_cast<unsigned long long>(present), static_cast<unsigned long long>(bad));
  return bad == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!ParseArgs(argc, argv, &a)) {
    std::fprintf(stderr,
                 "usage: journal-crash-writer DIR [--first N] [--count N] [--threads N] [--max-bytes N]\n"
                 "                            [--block-bytes N] [--segment-bytes N]\n"
                 "       journal-crash-writer verify DIR ACK_FILE [--max-bytes N]\n");
    return 2;
  }
  return a.mode == "verify" ? RunVerify(a) : RunWriter(a);
}
