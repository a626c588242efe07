// GzipAssembler: every assembled page must inflate, with zlib's own gunzip,
// with the edge's GzipDecompress and with the gzip tool, to exactly the
// concatenation of its parts, however the parts are cut and cached.
#include <doctest/doctest.h>
#include <zlib.h>

#include <unistd.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "folio/core/gzip.h"

using namespace folio;

namespace {

// zlib's gunzip, fed in small pieces; fails on trailing bytes (a second
// member or garbage), which GzipDecompress would ignore.
std::string ZlibGunzip(const std::string& gz) {
  z_stream zs{};
  REQUIRE(inflateInit2(&zs, 15 + 16) == Z_OK);
  std::string out;
  char buf[1000];
  size_t pos = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    const size_t n = std::min<size_t>(37, gz.size() - pos);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data() + pos));
    zs.avail_in = static_cast<uInt>(n);
    do {
      zs.next_out = reinterpret_cast<Bytef*>(buf);
      zs.avail_out = sizeof buf;
      rc = inflate(&zs, Z_NO_FLUSH);
      REQUIRE((rc == Z_OK || rc == Z_STREAM_END || rc == Z_BUF_ERROR));
      out.append(buf, sizeof buf - zs.avail_out);
    } while (zs.avail_out == 0 && rc != Z_STREAM_END);
    pos += n - zs.avail_in;
    REQUIRE((rc == Z_STREAM_END || n > 0));  // truncated otherwise
  }
  CHECK(pos == gz.size());
  inflateEnd(&zs);
  return out;
}

std::string Join(const std::vector<GzipPart>& parts) {
  std::string s;
  for (const auto& p : parts) s += p.bytes;
  return s;
}

void CheckInflates(const std::vector<GzipPart>& parts, GzipAssembler* a) {
  std::string gz;
  a->Assemble(parts, &gz);
  const std::string want = Join(parts);
  REQUIRE(ZlibGunzip(gz) == want);
  std::string back;
  REQUIRE(GzipDecompress(gz, &back).ok());
  REQUIRE(back == want);
}

// Text like a page: tags and words that repeat, so deflate finds matches
// within and across parts; some random bytes, so it must also emit literals.
std::string PageLike(std::mt19937& rng, size_t n) {
  static const char* kWords[] = {"<div class=\"page\">", "</a>", "<li>", "note", " the ", "href=\"/notes/", "\n",
                                 "folio", "<script>", "é€", "\"", "<"};
  std::string s;
  while (s.size() < n) {
    if (rng() % 5 == 0) {
      s.push_back(static_cast<char>(rng()));
    } else {
      s += kWords[rng() % (sizeof kWords / sizeof *kWords)];
    }
  }
  s.resize(n);
  return s;
}

}  // namespace

TEST_CASE("GzipAssembler: edge cases inflate to the parts") {
  GzipAssembler a;
  std::string big(200000, 'x');
  for (size_t i = 0; i < big.size(); i += 7) big[i] = static_cast<char>('a' + i % 26);
  const std::string chrome(500, 'c');
  CheckInflates({}, &a);
  CheckInflates({{"", false}}, &a);
  CheckInflates({{"", true}, {"", false}, {"", true}}, &a);
  CheckInflates({{"hello", false}}, &a);
  CheckInflates({{chrome, true}}, &a);                              // only a cached part, last
  CheckInflates({{chrome, true}, {chrome, true}, {"x", false}}, &a);  // cached twice in a row
  CheckInflates({{"a", false}, {chrome, true}, {"", false}, {chrome, true}}, &a);
  CheckInflates({{big, false}, {chrome, true}, {big, false}}, &a);  // history past the 32 KiB window
  CheckInflates({{big.substr(0, 60000), true}, {big, false}}, &a);  // cacheable, kept as a dictionary tail
  CheckInflates({{big, true}, {"tail", false}}, &a);               // over kMaxCachedPart: deflated inline
  CheckInflates({{"short", true}, {"tail", false}}, &a);           // under kMinCachedPart: inline
  CHECK(a.cached_parts() == 2);                                    // chrome and the 60000-byte part
}

TEST_CASE("GzipAssembler: a cached part is reused and the output is stable") {
  GzipAssembler a;
  const std::string head = "<!doctype html><html><head>" + std::string(300, 'h') + "</head>";
  const std::string tail = "<footer>" + std::string(200, 'f') + "</footer></html>\n";
  std::vector<GzipPart> page = {{head, true}, {"<p>body one</p>", false}, {tail, true}};
  std::string first, second;
  a.Assemble(page, &first);
  a.Assemble(page, &second);
  CHECK(first == second);
  CHECK(a.cached_parts() == 2);
  page[1].bytes = "<p>body two, longer</p>";
  CheckInflates(page, &a);
  CHECK(a.cached_parts() == 2);
  // The text is the one GzipCompressor gets, only cut in parts.
  CHECK(ZlibGunzip(GzipCompress(Join(page))) == Join(page));
}

TEST_CASE("GzipAssembler: the cache stays bounded") {
  GzipAssembler a(1);
  std::mt19937 rng(7);
  const std::string part = PageLike(rng, 30000);
  for (int i = 0; i < 300; ++i) {  // ~9 MB of distinct cacheable parts
    std::string distinct = std::to_string(i) + part;
    CheckInflates({{"v", false}, {distinct, true}, {"w", false}}, &a);
  }
  CHECK(a.cached_parts() * 30000 <= GzipAssembler::kMaxCacheBytes);
  CHECK(a.cached_parts() > 0);
}

TEST_CASE("GzipAssembler: random cuts at every level inflate exactly (fuzz loop)") {
  std::mt19937 rng(20261203);
  for (int level : {1, 4, 6, 9}) {
    GzipAssembler a(level);
    // A few chrome strings reused across pages, as a site's are.
    std::vector<std::string> chrome;
    for (int i = 0; i < 6; ++i) chrome.push_back(PageLike(rng, 10 + rng() % 3000));
    for (int iter = 0; iter < 400; ++iter) {
      std::vector<std::string> owned;
      owned.reserve(16);
      std::vector<GzipPart> parts;
      const int n = static_cast<int>(rng() % 12);
      for (int i = 0; i < n; ++i) {
        const unsigned kind = rng() % 10;
        if (kind < 4) {
          parts.push_back({chrome[rng() % chrome.size()], true});
        } else if (kind == 4) {
          parts.push_back({"", rng() % 2 == 0});
        } else {
          const size_t len = rng() % 8 == 0 ? rng() % 70000 : rng() % 2000;
          owned.push_back(PageLike(rng, len));
          parts.push_back({owned.back(), rng() % 4 == 0});  // sometimes a one-off "cacheable" part
        }
      }
      CheckInflates(parts, &a);
    }
  }
}

TEST_CASE("GzipAssembler: the gzip tool reads the output") {
  std::mt19937 rng(3);
  GzipAssembler a;
  const std::string chrome = PageLike(rng, 1500), body = PageLike(rng, 5000), tail = PageLike(rng, 300);
  std::vector<GzipPart> parts = {{chrome, true}, {body, false}, {tail, true}};
  std::string gz;
  a.Assemble(parts, &gz);
  char path[] = "/tmp/folio-gzip-test-XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  REQUIRE(write(fd, gz.data(), gz.size()) == static_cast<ssize_t>(gz.size()));
  close(fd);
  FILE* p = popen(("gzip -dc < " + std::string(path)).c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  CHECK(pclose(p) == 0);
  unlink(path);
  CHECK(out == Join(parts));
}
