#include "search_params.h"

#include <doctest/doctest.h>

using namespace folio;
using namespace folio::edge;

namespace {
SearchParams Ok(std::string_view query) {
  SearchParams p;
  Status s = ParseSearchParams(query, &p);
  INFO(query, ": ", s.message());
  CHECK(s.ok());
  return p;
}
std::string Bad(std::string_view query, SearchFormat* format = nullptr) {
  SearchParams p;
  Status s = ParseSearchParams(query, &p);
  INFO(query);
  CHECK(s.code() == Code::kInvalidArgument);
  if (format) *format = p.format;
  return s.message();
}
}  // namespace

TEST_CASE("search params: defaults, decoding, first occurrence wins") {
  SearchParams p = Ok("");
  CHECK(p.q.empty());
  CHECK(p.mode == bus::SearchMode::kHybrid);
  CHECK(p.k == kDefaultSearchK);
  CHECK(p.format == SearchFormat::kPage);

  p = Ok("q=hello+big%20world&mode=text&k=5&fragment=1");
  CHECK(p.q == "hello big world");
  CHECK(p.mode == bus::SearchMode::kText);
  CHECK(p.k == 5);
  CHECK(p.format == SearchFormat::kFragment);

  p = Ok("q=%C3%A9t%C3%A9&q=second&mode=vector&k=50&x=%zz-ignored-name-is-fine");
  CHECK(p.q == "été");
  CHECK(p.mode == bus::SearchMode::kVector);
  CHECK(p.k == 50);

  CHECK(Ok("q=++a+b++").q == "a b");       // trimmed
  CHECK(Ok("q=%20%09%0A").q.empty());      // only space: no search
  CHECK(Ok("q=a%2Bb").q == "a+b");
  CHECK(Ok("mode=&k=").k == kDefaultSearchK);  // empty = default
  CHECK(Ok("q=x&fragment=0").format == SearchFormat::kPage);
  CHECK(Ok("q=x&fragment").format == SearchFormat::kPage);
  CHECK(Ok("q=x&format=json").format == SearchFormat::kJson);
  CHECK(Ok("q=x&fragment=1&format=json").format == SearchFormat::kJson);  // json wins
  CHECK(Ok("q=x&fragment=1&format=html").format == SearchFormat::kFragment);
  CHECK(Ok("q=x&format=").format == SearchFormat::kPage);
  CHECK(Ok("format=json&k=8").k == 8);
  CHECK(Ok("k=1").k == 1);
  CHECK(Ok("q").q.empty());
  CHECK(Ok("q=" + std::string(bus::kMaxQueryBytes, 'a')).q.size() == bus::kMaxQueryBytes);
}

TEST_CASE("search params: bad input is kInvalidArgument with a reader-facing message") {
  CHECK(Bad("q=" + std::string(bus::kMaxQueryBytes + 1, 'a')).find("too long") != std::string::npos);
  std::string encoded;
  for (size_t i = 0; i < 400; ++i) encoded += "%E2%82%AC";  // 1200 bytes once decoded
  CHECK(Bad("q=" + encoded).find("too long") != std::string::npos);
  CHECK(Bad("q=%FF").find("UTF-8") != std::string::npos);
  CHECK(Bad("q=%C3").find("UTF-8") != std::string::npos);
  CHECK(Bad("q=%ED%A0%80").find("UTF-8") != std::string::npos);  // a surrogate
  CHECK(Bad("q=%zz").find("escape") != std::string::npos);
  CHECK(Bad("q=a%").find("escape") != std::string::npos);
  CHECK(Bad("q=x&mode=bogus").find("mode") != std::string::npos);
  CHECK(Bad("q=x&mode=HYBRID").find("mode") != std::string::npos);
  for (const char* k : {"0", "51", "-1", "1.5", "abc", "1000", "+5", "0x10"}) {
    CHECK(Bad(std::string("q=x&k=") + k).find("k must be") != std::string::npos);
  }
  for (const char* f : {"JSON", "xml", "json2"}) {
    CHECK(Bad(std::string("q=x&format=") + f).find("format") != std::string::npos);
  }
  SearchFormat format = SearchFormat::kPage;
  Bad("q=%FF&fragment=1", &format);
  CHECK(format == SearchFormat::kFragment);  // the error goes out as a fragment
  Bad("q=x&k=0&format=json", &format);
  CHECK(format == SearchFormat::kJson);  // ... or as JSON
}
