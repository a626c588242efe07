// GzipAssembler (igzip): every assembled page must inflate, with zlib's own
// gunzip, with the edge's GzipDecompress and with the gzip tool, to exactly
// the concatenation of its parts, however the parts are cut, at every level.
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
  CheckInflates({{""}}, &a);
  CheckInflates({{""}, {""}, {""}}, &a);
  CheckInflates({{"hello"}}, &a);
  CheckInflates({{chrome}}, &a);
  CheckInflates({{chrome}, {chrome}, {"x"}}, &a);
  CheckInflates({{"a"}, {chrome}, {""}, {chrome}}, &a);
  CheckInflates({{big}, {chrome}, {big}}, &a);  // history past the 32 KiB window
  CheckInflates({{big.substr(0, 60000)}, {big}}, &a);
  CheckInflates({{big}, {"tail"}}, &a);
  CheckInflates({{"short"}, {"tail"}}, &a);
  // Parts that are slices of one string in order (ingest's case, no copy) and out of order.
  const std::string page = "<html>" + big + "</html>";
  const std::string_view v = page;
  CheckInflates({{v.substr(0, 6)}, {v.substr(6, 1000)}, {v.substr(1006)}}, &a);
  CheckInflates({{v.substr(6, 1000)}, {v.substr(0, 6)}, {v.substr(1006)}}, &a);
  // Incompressible bytes: past the first guess of the output's size.
  std::mt19937 rng(11);
  std::string noise(300000, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  CheckInflates({{noise}}, &a);
}

TEST_CASE("GzipAssembler: the output is stable and zlib's header") {
  GzipAssembler a;
  const std::string head = "<!doctype html><html><head>" + std::string(300, 'h') + "</head>";
  const std::string tail = "<footer>" + std::string(200, 'f') + "</footer></html>\n";
  std::vector<GzipPart> page = {{head}, {"<p>body one</p>"}, {tail}};
  std::string first, second;
  a.Assemble(page, &first);
  a.Assemble(page, &second);
  CHECK(first == second);
  CHECK(first.substr(0, 10) == GzipCompress(Join(page)).substr(0, 10));
  page[1].bytes = "<p>body two, longer</p>";
  CheckInflates(page, &a);
  // The text is the one GzipCompressor gets, only cut in parts.
  CHECK(ZlibGunzip(GzipCompress(Join(page))) == Join(page));
}

TEST_CASE("GzipAssembler: random cuts at every level inflate exactly (fuzz loop)") {
  std::mt19937 rng(20261203);
  for (int level : {0, 1, 2, 3}) {
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
          parts.push_back({chrome[rng() % chrome.size()]});
        } else if (kind == 4) {
          parts.push_back({""});
        } else {
          const size_t len = rng() % 8 == 0 ? rng() % 70000 : rng() % 2000;
          owned.push_back(PageLike(rng, len));
          parts.push_back({owned.back()});
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
  std::vector<GzipPart> parts = {{chrome}, {body}, {tail}};
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
