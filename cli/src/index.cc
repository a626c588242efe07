#include "index.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <sstream>
#include <system_error>

#include "folio/core/service.h"
#include "folio/core/thread_pool.h"
#include "index_internal.h"

namespace folio::cli {
namespace {

namespace fs = std::filesystem;
using index_internal::AppendEntry;
using index_internal::ParseEntry;

// A cursor over the index text; each call takes one field of the current line.
class Fields {
 public:
  explicit Fields(std::string_view line) : rest_(line) {}
  std::string_view Next() {
    size_t tab = rest_.find('\t');
    std::string_view f = rest_.substr(0, tab);
    rest_.remove_prefix(tab == std::string_view::npos ? rest_.size() : tab + 1);
    return f;
  }
  std::string_view Rest() const { return rest_; }

 private:
  std::string_view rest_;
};

template <typename T>
bool ParseInt(std::string_view s, T* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

bool IsSha(std::string_view s) {
  // A table, not a chain of compares: 200k hashes per index read.
  static constexpr auto kHex = [] {
    std::array<bool, 256> t{};
    for (char c : std::string_view("0123456789abcdefABCDEF")) t[static_cast<unsigned char>(c)] = true;
    return t;
  }();
  if (s.size() != 64) return false;
  bool ok = true;
  for (char c : s) ok &= kHex[static_cast<unsigned char>(c)];
  return ok;
}

// "key<TAB>value" header line; false if the key differs.
bool Header(std::string_view line, std::string_view key, std::string_view* value) {
  if (!line.starts_with(key) || line.size() <= key.size() || line[key.size()] != '\t') return false;
  *value = line.substr(key.size() + 1);
  return true;
}

}  // namespace

namespace index_internal {

bool ParseEntry(std::string_view line, IndexEntry* e) {
  Fields f(line);
  std::string_view kind = f.Next();
  if (kind != "n" && kind != "a") return false;
  e->attachment = kind == "a";
  if (!ParseInt(f.Next(), &e->stat.size) || !ParseInt(f.Next(), &e->stat.mtime_ns) ||
      !ParseInt(f.Next(), &e->stat.ino)) {
    return false;
  }
  std::string_view sha = f.Next(), server = f.Next();
  e->path = f.Rest();
  if (e->path.empty()) return false;
  if (sha == "-") {
    if (e->stat.size != -1 || server == "=") return false;
  } else {
    if (!IsSha(sha) || e->stat.size < 0) return false;
    e->sha256 = sha;
  }
  if (server == "=") {
    e->server_sha256 = e->sha256;
  } else if (server != "-") {
    if (!IsSha(server)) return false;
    e->server_sha256 = server;
  }
  return true;
}

}  // namespace index_internal

namespace {

Status Corrupt(std::string_view what) { return Status::Invalid(std::string(kIndexFile) + ": " + std::string(what)); }

Status ParseIndex(std::string_view text, Index* out) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos) return Corrupt("truncated (no final newline)");
    lines.push_back(text.substr(0, nl));
    text.remove_prefix(nl + 1);
  }
  if (lines.empty() || lines[0] != kIndexMagic) return Corrupt("not an index of this version of folio");
  constexpr size_t kHeaderLines = 6;  // magic, server, site, epoch, version, walked_ns
  std::string_view server, site, epoch, version, walked, end;
  if (lines.size() < kHeaderLines + 1 || !Header(lines[1], "server", &server) || !Header(lines[2], "site", &site) ||
      !Header(lines[3], "epoch", &epoch) || !Header(lines[4], "version", &version) ||
      !Header(lines[5], "walked_ns", &walked)) {
    return Corrupt("bad header");
  }
  size_t count = 0;
  if (!Header(lines.back(), "end", &end) || !ParseInt(end, &count) || count != lines.size() - kHeaderLines - 1) {
    return Corrupt("truncated (bad end line)");
  }
  out->server = server;
  out->site = site;
  out->epoch = epoch;
  if (!ParseInt(version, &out->version) || !ParseInt(walked, &out->walked_ns) || out->version < 0) {
    return Corrupt("bad header");
  }
  out->entries.resize(count);
  // Lines parse independently: a 100k-file index parses on every CPU.
  constexpr size_t kLinesPerThread = 16 * 1024;
  std::mutex mu;
  size_t first_bad = count;  // GUARDED_BY(mu)
  ParallelChunks(count, std::min(AvailableCpus(), count / kLinesPerThread), [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      if (!ParseEntry(lines[kHeaderLines + i], &out->entries[i])) {
        std::lock_guard<std::mutex> lock(mu);
        first_bad = std::min(first_bad, i);
        return;
      }
    }
  });
  if (first_bad < count) return Corrupt("bad line " + std::to_string(kHeaderLines + 1 + first_bad));
  for (size_t i = 1; i < count; ++i) {
    if (!(out->entries[i - 1].path < out->entries[i].path)) return Corrupt("entries out of order");
  }
  return Status::Ok();
}

}  // namespace

namespace index_internal {

void AppendEntry(const IndexRow& e, std::string* out) {
  char buf[96];
  bool local = e.stat.size >= 0;
  int n = std::snprintf(buf, sizeof buf, "%c\t%lld\t%lld\t%llu\t", e.attachment ? 'a' : 'n',
                        static_cast<long long>(local ? e.stat.size : -1),
                        static_cast<long long>(local ? e.stat.mtime_ns : 0),
                        static_cast<unsigned long long>(local ? e.stat.ino : 0));
  out->append(buf, static_cast<size_t>(n));
  out->append(local ? e.sha256 : "-");
  out->push_back('\t');
  if (e.server_sha256.empty()) out->push_back('-');
  else if (local && e.server_sha256 == e.sha256) out->push_back('=');
  else out->append(e.server_sha256);
  out->push_back('\t');
  out->append(e.path);
  out->push_back('\n');
}

Status WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Internal(std::strerror(errno));
    data.remove_prefix(static_cast<size_t>(n));
  }
  return Status::Ok();
}

Status ReplaceFile(const fs::path& final_path, std::string_view text) {
  const fs::path tmp = final_path.string() + ".tmp." + std::to_string(::getpid());
  // No fsync: after a crash a torn file fails its parse (the end line) and
  // is ignored, which costs one full hash, not a wrong push.
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::Internal("cannot write " + tmp.string() + ": " + std::strerror(errno));
  Status s = WriteAll(fd, text);
  if (::close(fd) != 0 && s.ok()) s = Status::Internal(std::strerror(errno));
  if (s.ok() && std::rename(tmp.c_str(), final_path.c_str()) != 0) s = Status::Internal(std::strerror(errno));
  if (!s.ok()) {
    std::error_code ec;
    fs::remove(tmp, ec);
    return Status::Internal("cannot write " + final_path.string() + ": " + s.message());
  }
  return Status::Ok();
}

Result<std::string> ReadWholeFile(const fs::path& path, FileStat* stat) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::NotFound(path.filename().string() + ": none");
    return Status::Invalid(path.string() + ": cannot be read: " + std::strerror(errno));
  }
  struct stat sb;
  std::string text;
  bool ok = ::fstat(fd, &sb) == 0;
  if (ok) {
    text.resize(static_cast<size_t>(sb.st_size));
    size_t got = 0;
    while (got < text.size()) {
      ssize_t n = ::read(fd, text.data() + got, text.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    ok = got == text.size();
  }
  ::close(fd);
  if (!ok) return Status::Invalid(path.string() + ": cannot be read");
  if (stat != nullptr) *stat = StatOf(sb);
  return text;
}

}  // namespace index_internal

int64_t WallClockNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Result<Index> ReadIndex(const fs::path& vault) {
  FileStat file;
  Result<std::string> text = index_internal::ReadWholeFile(vault / fs::path(kIndexFile), &file);
  if (!text.ok()) {
    if (text.status().code() == Code::kNotFound) return Status::NotFound(std::string(kIndexFile) + ": none");
    return Corrupt("cannot be read");
  }
  Index index;
  if (Status s = ParseIndex(*text, &index); !s.ok()) return s;
  index.file = file;
  index_internal::ApplyJournal(vault, &index);
  return index;
}

Status WriteIndex(const fs::path& vault, const Index& index) {
  std::vector<IndexRow> rows;
  rows.reserve(index.entries.size());
  for (const IndexEntry& e : index.entries) rows.push_back(RowOf(e));
  return index_internal::WriteRows(vault, index, rows);
}

namespace index_internal {

Status WriteRows(const fs::path& vault, const Index& index, std::span<const IndexRow> rows) {
  std::string text;
  text.reserve(128 + rows.size() * 160);
  text.append(kIndexMagic).append("\nserver\t").append(index.server).append("\nsite\t").append(index.site);
  text.append("\nepoch\t").append(index.epoch);
  text.append("\nversion\t").append(std::to_string(index.version));
  text.append("\nwalked_ns\t").append(std::to_string(index.walked_ns)).append("\n");
  for (const IndexRow& e : rows) AppendEntry(e, &text);
  text.append("end\t").append(std::to_string(rows.size())).append("\n");

  std::error_code ec;
  fs::create_directories(vault / fs::path(kIndexDir), ec);
  if (ec) return Status::Internal("cannot create " + std::string(kIndexDir) + ": " + ec.message());
  return ReplaceFile(vault / fs::path(kIndexFile), text);
}

}  // namespace index_internal

const std::string* StatCache::Find(std::string_view path, const FileStat& stat) const {
  if (entries_ == nullptr) return nullptr;
  // Entries are compared with scope_ + path without building that string
  // (the walk calls this once per file, on several threads).
  const std::string_view scope = scope_;
  auto less = [scope](const IndexEntry& e, std::string_view p) {
    std::string_view head = std::string_view(e.path).substr(0, scope.size());
    if (int c = head.compare(scope); c != 0) return c < 0;
    return std::string_view(e.path).substr(scope.size()) < p;
  };
  auto it = std::lower_bound(entries_->begin(), entries_->end(), path, less);
  if (it == entries_->end() || it->path.size() != scope.size() + path.size() || !it->path.starts_with(scope) ||
      std::string_view(it->path).substr(scope.size()) != path) {
    return nullptr;
  }
  return Trust(*it, stat);
}

const std::string* StatCache::Trust(const IndexEntry& e, const FileStat& stat) const {
  if (e.stat.size < 0 || !(e.stat == stat)) return nullptr;
  const int64_t walked_ns = e.walked_ns != 0 ? e.walked_ns : walked_ns_;
  if (stat.mtime_ns + kRacyMarginNs >= walked_ns) return nullptr;  // racy: maybe changed within the tick
  return &e.sha256;
}

StatCache::Folder StatCache::In(std::string_view prefix) const {
  if (entries_ == nullptr) return {};
  std::string key = scope_;
  key.append(prefix);
  const IndexEntry* first = entries_->data();
  const IndexEntry* last = first + entries_->size();
  const IndexEntry* begin =
      std::lower_bound(first, last, key, [](const IndexEntry& e, const std::string& k) { return e.path < k; });
  const IndexEntry* end =
      std::partition_point(begin, last, [&key](const IndexEntry& e) { return e.path.starts_with(key); });
  return {begin, end, key.size()};
}

const std::string* StatCache::Find(const Folder& folder, std::string_view name, const FileStat& stat) const {
  const size_t skip = folder.skip;
  auto less = [skip](const IndexEntry& e, std::string_view n) { return std::string_view(e.path).substr(skip) < n; };
  const IndexEntry* it = std::lower_bound(folder.begin, folder.end, name, less);
  if (it == folder.end || std::string_view(it->path).substr(skip) != name) return nullptr;
  return Trust(*it, stat);
}

}  // namespace folio::cli
