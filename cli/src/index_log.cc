// The index's journal (index.h): blocks of changed entries appended by
// pushes that change few files, so that such a push does not rewrite the
// whole index.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <map>
#include <optional>
#include <system_error>
#include <utility>

#include "index_internal.h"

namespace folio::cli {
namespace {

namespace fs = std::filesystem;

// The journal outgrowing 1/kJournalShare of the index: the index is rewritten.
constexpr int64_t kJournalShare = 16;

fs::path JournalPath(const fs::path& vault) { return vault / fs::path(kIndexLogFile); }

std::string Header(const FileStat& base) {
  return std::string(kIndexLogMagic) + "\nbase\t" + std::to_string(base.size) + "\t" + std::to_string(base.mtime_ns) +
         "\t" + std::to_string(base.ino) + "\n";
}

// Takes the next line (without '\n') off *text; false at the end or when
// the rest has no '\n' (torn).
bool NextLine(std::string_view* text, std::string_view* line) {
  size_t nl = text->find('\n');
  if (nl == std::string_view::npos) return false;
  *line = text->substr(0, nl);
  text->remove_prefix(nl + 1);
  return true;
}

template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

// "key<TAB>a<TAB>b": a and b parsed; false if the key or a number differs.
bool TwoNumbers(std::string_view line, std::string_view key, int64_t* a, int64_t* b) {
  if (!line.starts_with(key) || line.size() <= key.size() || line[key.size()] != '\t') return false;
  line.remove_prefix(key.size() + 1);
  size_t tab = line.find('\t');
  return tab != std::string_view::npos && ParseNumber(line.substr(0, tab), a) && ParseNumber(line.substr(tab + 1), b);
}

struct Block {
  int64_t version = 0, walked_ns = 0;
  std::map<std::string, std::optional<IndexEntry>> changes;  // path -> entry, or nullopt: removed
};

// Parses the block at the head of *text into *b; false if it is torn or malformed.
bool ParseBlock(std::string_view* text, Block* b) {
  std::string_view line;
  if (!NextLine(text, &line) || !TwoNumbers(line, "push", &b->version, &b->walked_ns) || b->walked_ns <= 0) {
    return false;
  }
  for (size_t lines = 0;; ++lines) {
    if (!NextLine(text, &line)) return false;
    size_t done = 0;
    if (line.starts_with("done\t")) return ParseNumber(line.substr(5), &done) && done == lines;
    if (line.starts_with("del\t")) {
      if (line.size() == 4) return false;
      b->changes[std::string(line.substr(4))] = std::nullopt;
      continue;
    }
    IndexEntry e;
    if (!index_internal::ParseEntry(line, &e)) return false;
    e.walked_ns = b->walked_ns;
    std::string path = e.path;
    b->changes[std::move(path)] = std::move(e);
  }
}

// entries with `changes` applied; both sorted by path.
std::vector<IndexEntry> Merge(std::vector<IndexEntry>* entries, std::map<std::string, std::optional<IndexEntry>>* changes) {
  std::vector<IndexEntry> out;
  out.reserve(entries->size() + changes->size());
  auto c = changes->begin();
  for (IndexEntry& e : *entries) {
    for (; c != changes->end() && c->first < e.path; ++c) {
      if (c->second) out.push_back(std::move(*c->second));
    }
    if (c != changes->end() && c->first == e.path) {  // replaced or removed
      if (c->second) out.push_back(std::move(*c->second));
      ++c;
      continue;
    }
    out.push_back(std::move(e));
  }
  for (; c != changes->end(); ++c) {
    if (c->second) out.push_back(std::move(*c->second));
  }
  return out;
}

bool Same(const IndexEntry& a, const IndexRow& b) {
  return a.attachment == b.attachment && a.stat == b.stat && a.sha256 == b.sha256 && a.server_sha256 == b.server_sha256;
}

// Whether StatCache trusts e's stat data as of walk `walked_ns`.
bool Trusted(const FileStat& stat, int64_t walked_ns) {
  return stat.size >= 0 && stat.mtime_ns + kRacyMarginNs < walked_ns;
}

// The block turning old's entries into `b`, and the number of its entry lines.
size_t AppendBlock(const Index& old, const Index& next, std::span<const IndexRow> b, std::string* out) {
  out->append("push\t").append(std::to_string(next.version)).append("\t").append(std::to_string(next.walked_ns));
  out->push_back('\n');
  size_t lines = 0, i = 0, j = 0;
  const auto& a = old.entries;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].path < b[j].path)) {  // gone
      out->append("del\t").append(a[i++].path).push_back('\n');
      ++lines;
      continue;
    }
    if (i < a.size() && a[i].path == b[j].path) {
      const IndexEntry& o = a[i++];
      bool newly_trusted =
          !Trusted(o.stat, o.walked_ns != 0 ? o.walked_ns : old.walked_ns) && Trusted(b[j].stat, next.walked_ns);
      if (Same(o, b[j]) && !newly_trusted) {
        ++j;
        continue;
      }
    }
    index_internal::AppendEntry(b[j++], out);
    ++lines;
  }
  out->append("done\t").append(std::to_string(lines)).push_back('\n');
  return lines;
}

}  // namespace

namespace index_internal {

void ApplyJournal(const fs::path& vault, Index* index) {
  index->journal.clear();
  Result<std::string> text = ReadWholeFile(JournalPath(vault), nullptr);
  const std::string header = Header(index->file);
  if (!text.ok() || !text->starts_with(header)) return;  // none, or of another index
  std::string_view rest = std::string_view(*text).substr(header.size());
  Block all;
  size_t complete = header.size();
  while (!rest.empty()) {
    Block b;
    if (!ParseBlock(&rest, &b) || b.version < all.version) break;  // torn: the blocks before it stand
    for (auto& [path, e] : b.changes) all.changes[path] = std::move(e);
    all.version = b.version;
    complete = text->size() - rest.size();
  }
  if (complete == header.size()) return;
  index->entries = Merge(&index->entries, &all.changes);
  index->version = all.version;
  text->resize(complete);
  index->journal = std::move(text).value();
}

}  // namespace index_internal

namespace index_internal {

Status UpdateIndex(const fs::path& vault, const Index& old, const Index& next, std::span<const IndexRow> rows,
                   int64_t max_journal_bytes) {
  if (old.file.size >= 0 && old.server == next.server && old.site == next.site && old.epoch == next.epoch) {
    std::string journal = old.journal.empty() ? Header(old.file) : old.journal;
    AppendBlock(old, next, rows, &journal);
    if (static_cast<int64_t>(journal.size()) <= max_journal_bytes) return ReplaceFile(JournalPath(vault), journal);
  }
  if (Status s = WriteRows(vault, next, rows); !s.ok()) return s;
  std::error_code ec;
  fs::remove(JournalPath(vault), ec);  // names the old index: ignored if it stays
  return Status::Ok();
}

}  // namespace index_internal

Status UpdateIndex(const fs::path& vault, const Index& old, const Index& next, std::span<const IndexRow> rows) {
  return index_internal::UpdateIndex(vault, old, next, rows, old.file.size / kJournalShare);
}

}  // namespace folio::cli
