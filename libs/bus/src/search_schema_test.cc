#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "folio/bus/related_schema.h"
#include "folio/bus/search_schema.h"

namespace folio::bus {
namespace {

// The message of a decode that must fail with kInvalidArgument.
template <typename T>
std::string Reject(Status (*decode)(std::string_view, T*), std::string_view json) {
  T out;
  Status st = decode(json, &out);
  CHECK_MESSAGE(st.code() == Code::kInvalidArgument, json);
  return st.message();
}

bool Has(const std::string& message, std::string_view part) {
  return message.find(part) != std::string::npos;
}

RelatedList List(std::string path, int n) {
  RelatedList l{std::move(path), {}};
  for (int i = 0; i < n; ++i) l.related.push_back({"note-" + std::to_string(i) + ".md", 1.0 / (i + 1)});
  return l;
}

}  // namespace

TEST_CASE("related subject and search mode names") {
  CHECK(RelatedSubject("docs") == "related.docs");
  CHECK(RelatedSubject("docs").rfind(kRelatedSubjectPrefix, 0) == 0);
  for (SearchMode m : {SearchMode::kHybrid, SearchMode::kVector, SearchMode::kText}) {
    SearchMode back = SearchMode::kHybrid;
    REQUIRE(ParseSearchMode(SearchModeName(m), &back));
    CHECK(back == m);
  }
  CHECK(SearchModeName(SearchMode::kText) == "text");
  SearchMode out = SearchMode::kVector;
  for (const char* bad : {"", "Hybrid", "bm25", "text "}) CHECK_MESSAGE(!ParseSearchMode(bad, &out), bad);
  CHECK(out == SearchMode::kVector);  // untouched on failure
}

TEST_CASE("search query: wire form, round trip and defaults") {
  SearchQuery q{"docs", "caf\xc3\xa9 \"quoted\"", 25, SearchMode::kText}, out;
  REQUIRE(DecodeSearchQuery(EncodeSearchQuery(q), &out).ok());
  CHECK(out.site == q.site);
  CHECK(out.q == q.q);
  CHECK(out.k == 25);
  CHECK(out.mode == SearchMode::kText);

  SearchQuery plain{"docs", "hello", 10, SearchMode::kHybrid};
  CHECK(EncodeSearchQuery(plain) == R"({"schema":1,"site":"docs","q":"hello","k":10,"mode":"hybrid"})");

  REQUIRE(DecodeSearchQuery(R"({"q":"x","future":[1,{"a":null}],"site":"a","schema":1})", &out).ok());
  CHECK(out.k == 10);
  CHECK(out.mode == SearchMode::kHybrid);

  std::string longest(kMaxQueryBytes, 'x');
  REQUIRE(DecodeSearchQuery(EncodeSearchQuery({"docs", longest, kMaxSearchK, SearchMode::kVector}), &out).ok());
  CHECK(out.q.size() == kMaxQueryBytes);
  CHECK(out.k == kMaxSearchK);
}

TEST_CASE("search query: each rejection names its field") {
  auto reject = [](std::string_view json) { return Reject(DecodeSearchQuery, json); };
  CHECK(Has(reject(R"({"schema":2,"site":"a","q":"x"})"), "unknown schema 2"));
  CHECK(Has(reject(R"({"schema":"1","site":"a","q":"x"})"), "\"schema\""));
  CHECK(Has(reject(R"({"site":"a","q":"x"})"), "missing field \"schema\""));
  CHECK(Has(reject(R"({"schema":1,"q":"x"})"), "missing field \"site\""));
  CHECK(Has(reject(R"({"schema":1,"site":"a"})"), "missing field \"q\""));
  CHECK(Has(reject(R"({"schema":1,"site":"Docs!","q":"x"})"), "site"));
  CHECK(Has(reject(R"({"schema":1,"site":7,"q":"x"})"), "\"site\""));
  CHECK(Has(reject(R"({"schema":1,"site":"a","q":""})"), "\"q\""));
  CHECK(Has(reject(R"({"schema":1,"site":"a","q":["x"]})"), "\"q\""));
  CHECK(Has(reject(EncodeSearchQuery({"a", std::string(kMaxQueryBytes + 1, 'x'), 10, SearchMode::kHybrid})),
            "\"q\""));
  // A lone surrogate escape is not UTF-8; simdjson or our check refuses it.
  reject(R"({"schema":1,"site":"a","q":"\ud800"})");
  reject("{\"schema\":1,\"site\":\"a\",\"q\":\"\xff\"}");
  CHECK(Has(reject(R"({"schema":1,"site":"a","q":"x","k":0})"), "\"k\""));
  CHECK(Has(reject(R"({"schema":1,"site":"a","q":"x","k":101})"), "\"k\" must be in 1..100"));
  CHECK(Has(reject(R"({"schema":1,"site":"a","q":"x","k":-5})"), "\"k\""));
  CHECK(Has(reject(R"({"schema":1,"site":"a","q":"x","k":2.5})"), "\"k\" must be an integer"));
  CHECK(Has(reject(R"({"schema":1,"site":"a","q":"x","k":"10"})"), "\"k\""));
  CHECK(Has(reject(R"({"schema":1,"site":"a","q":"x","mode":"fuzzy"})"), "\"mode\""));
  CHECK(Has(reject(R"({"schema":1,"site":"a","q":"x","mode":1})"), "\"mode\""));
  CHECK(Has(reject(""), "malformed"));
  CHECK(Has(reject("[]"), "not a JSON object"));
  reject(R"({"schema":1,"site":"a","q":"x"} {})");
  reject(R"({"schema":1,"site":"a","q":"x")");
}

TEST_CASE("related query: round trip and rejections") {
  RelatedQuery q{"docs", "Folder/Caf\xc3\xa9.md", 7}, out;
  std::string json = EncodeRelatedQuery(q);
  CHECK(EncodeRelatedQuery({"docs", "a/b.md", 10}) == R"({"schema":1,"site":"docs","path":"a/b.md","k":10})");
  REQUIRE(DecodeRelatedQuery(json, &out).ok());
  CHECK(out.site == "docs");
  CHECK(out.path == q.path);
  CHECK(out.k == 7);
  REQUIRE(DecodeRelatedQuery(R"({"schema":1,"site":"a","path":"x.md","extra":{}})", &out).ok());
  CHECK(out.k == 10);
  REQUIRE(DecodeRelatedQuery(EncodeRelatedQuery({"a", std::string(1024, 'p'), kMaxRelatedK}), &out).ok());

  auto reject = [](std::string_view j) { return Reject(DecodeRelatedQuery, j); };
  CHECK(Has(reject(R"({"schema":3,"site":"a","path":"x.md"})"), "unknown schema 3"));
  CHECK(Has(reject(R"({"schema":1,"site":"a"})"), "missing field \"path\""));
  CHECK(Has(reject(R"({"schema":1,"path":"x.md"})"), "missing field \"site\""));
  CHECK(Has(reject(R"({"schema":1,"site":"-a","path":"x.md"})"), "site"));
  CHECK(Has(reject(R"({"schema":1,"site":"a","path":""})"), "\"path\""));
  CHECK(Has(reject(EncodeRelatedQuery({"a", std::string(1025, 'p'), 10})), "\"path\""));
  CHECK(Has(reject(R"({"schema":1,"site":"a","path":"x.md","k":0})"), "\"k\""));
  CHECK(Has(reject(R"({"schema":1,"site":"a","path":"x.md","k":51})"), "\"k\" must be in 1..50"));
  CHECK(Has(reject("nope"), "related query: malformed JSON"));
}

TEST_CASE("search reply: round trip, error replies, non-finite scores") {
  SearchReply r;
  r.took_us = 1234;
  r.hits.push_back({"A.md", "/a", "A \"title\"", "x <mark>y</mark> &amp; z", 0.5});
  r.hits.push_back({"B/C.md", "/b/c", "C", "", -1.25});
  r.hits.push_back({"D.md", "/d", "D", "d", 3});  // written as the integer 3
  SearchReply out;
  std::string json = EncodeSearchReply(r);
  REQUIRE(DecodeSearchReply(json, &out).ok());
  CHECK(out.error.empty());
  CHECK(out.code == Code::kOk);
  CHECK(Has(json, "\"code\":\"ok\""));
  CHECK(out.took_us == 1234);
  REQUIRE(out.hits.size() == 3);
  CHECK(out.hits[0].path == "A.md");
  CHECK(out.hits[0].url == "/a");
  CHECK(out.hits[0].title == "A \"title\"");
  CHECK(out.hits[0].snippet == r.hits[0].snippet);
  CHECK(out.hits[0].score == 0.5);
  CHECK(out.hits[1].score == -1.25);
  CHECK(out.hits[2].score == 3.0);

  SearchReply err;
  err.error = "search index is not ready";
  err.code = Code::kUnavailable;
  REQUIRE(DecodeSearchReply(EncodeSearchReply(err), &out).ok());
  CHECK(out.error == err.error);
  CHECK(out.code == Code::kUnavailable);
  CHECK(out.hits.empty());  // the previous decode's hits are gone

  for (int i = static_cast<int>(Code::kInvalidArgument); i <= static_cast<int>(Code::kInternal); ++i) {
    err.code = static_cast<Code>(i);
    REQUIRE(DecodeSearchReply(EncodeSearchReply(err), &out).ok());
    CHECK(out.code == err.code);
  }

  // The minimal documented form (no code) decodes too.
  REQUIRE(DecodeSearchReply(R"({"schema":1,"error":"","hits":[],"took_us":123})", &out).ok());
  CHECK(out.took_us == 123);
  CHECK(out.code == Code::kOk);
  // A service not yet upgraded sends its HTTP-like error_status instead of code.
  auto legacy = [&](int status) {
    std::string j = R"({"schema":1,"error":"x","error_status":)" + std::to_string(status) + R"(,"hits":[],"took_us":1})";
    REQUIRE(DecodeSearchReply(j, &out).ok());
    return out.code;
  };
  CHECK(legacy(400) == Code::kInvalidArgument);
  CHECK(legacy(404) == Code::kNotFound);
  CHECK(legacy(503) == Code::kUnavailable);
  CHECK(legacy(500) == Code::kInternal);
  CHECK(legacy(0) == Code::kInternal);
  // An error that claims "ok" is the sender's bug, not a success.
  REQUIRE(DecodeSearchReply(R"({"schema":1,"error":"x","code":"ok","hits":[],"took_us":1})", &out).ok());
  CHECK(out.code == Code::kInternal);

  SearchReply odd;
  odd.hits.push_back({"N.md", "/n", "N", "", std::numeric_limits<double>::quiet_NaN()});
  odd.hits.push_back({"I.md", "/i", "I", "", std::numeric_limits<double>::infinity()});
  REQUIRE(DecodeSearchReply(EncodeSearchReply(odd), &out).ok());
  CHECK(out.hits[0].score == 0.0);
  CHECK(out.hits[1].score == 0.0);
}

TEST_CASE("search reply: rejections") {
  auto reject = [](std::string_view j) { return Reject(DecodeSearchReply, j); };
  CHECK(Has(reject(R"({"schema":1,"error":"","took_us":1})"), "missing field \"hits\""));
  CHECK(Has(reject(R"({"schema":1,"hits":[],"took_us":1})"), "missing field \"error\""));
  CHECK(Has(reject(R"({"schema":1,"error":"","hits":[]})"), "missing field \"took_us\""));
  CHECK(Has(reject(R"({"schema":2,"error":"","hits":[],"took_us":1})"), "unknown schema 2"));
  CHECK(Has(reject(R"({"schema":1,"error":"","hits":{},"took_us":1})"), "\"hits\""));
  CHECK(Has(reject(R"({"schema":1,"error":"","hits":[1],"took_us":1})"), "\"hits\""));
  CHECK(Has(reject(R"({"schema":1,"error":"","hits":[{"path":"a","url":"/a","title":"","snippet":""}],"took_us":1})"),
            "missing field \"score\""));
  CHECK(Has(reject(R"({"schema":1,"error":"","hits":[{"path":"a","url":"/a","title":"","snippet":"","score":"1"}],"took_us":1})"),
            "\"score\""));
  CHECK(Has(reject(R"({"schema":1,"error":"","hits":[],"took_us":-1})"), "\"took_us\""));
  CHECK(Has(reject(R"({"schema":1,"error":"x","error_status":600,"hits":[],"took_us":1})"), "\"error_status\""));
  CHECK(Has(reject(R"({"schema":1,"error":"x","code":"teapot","hits":[],"took_us":1})"), "\"code\""));
  CHECK(Has(reject(R"({"schema":1,"error":"x","code":503,"hits":[],"took_us":1})"), "\"code\""));
  CHECK(Has(reject(R"({"schema":1,"error":"","hits":[],"took_us":1e999})"), "malformed"));
}

TEST_CASE("related update: wire form, round trip, rejections") {
  RelatedUpdate u{"docs", {{"a.md", {{"b.md", 0.5}}}}};
  CHECK(EncodeRelatedUpdate(u) ==
        R"({"schema":1,"site":"docs","lists":[{"path":"a.md","related":[{"path":"b.md","score":0.5}]}]})");
  RelatedUpdate big{"docs", {List("x/one.md", kMaxRelatedK), {"cleared.md", {}}, List("caf\xc3\xa9.md", 3)}};
  RelatedUpdate out;
  REQUIRE(DecodeRelatedUpdate(EncodeRelatedUpdate(big), &out).ok());
  CHECK(out.site == "docs");
  REQUIRE(out.lists.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(out.lists[i].path == big.lists[i].path);
    REQUIRE(out.lists[i].related.size() == big.lists[i].related.size());
    for (size_t j = 0; j < big.lists[i].related.size(); ++j) {
      CHECK(out.lists[i].related[j].path == big.lists[i].related[j].path);
      // JsonWriter writes 6 significant digits.
      CHECK(out.lists[i].related[j].score == doctest::Approx(big.lists[i].related[j].score).epsilon(1e-5));
    }
  }
  REQUIRE(DecodeRelatedUpdate(
      R"({"x":1,"schema":1,"site":"a","lists":[{"y":[],"path":"p","related":[{"z":{},"path":"q","score":1}]}]})",
      &out).ok());
  CHECK(out.lists[0].related[0].score == 1.0);

  auto reject = [](std::string_view j) { return Reject(DecodeRelatedUpdate, j); };
  CHECK(Has(reject(R"({"schema":1,"site":"a"})"), "missing field \"lists\""));
  CHECK(Has(reject(R"({"schema":1,"lists":[]})"), "missing field \"site\""));
  CHECK(Has(reject(R"({"schema":9,"site":"a","lists":[]})"), "unknown schema 9"));
  CHECK(Has(reject(R"({"schema":1,"site":"A","lists":[]})"), "site"));
  CHECK(Has(reject(R"({"schema":1,"site":"a","lists":{}})"), "\"lists\""));
  CHECK(Has(reject(R"({"schema":1,"site":"a","lists":[{"related":[]}]})"), "missing field \"path\""));
  CHECK(Has(reject(R"({"schema":1,"site":"a","lists":[{"path":"p"}]})"), "missing field \"related\""));
  CHECK(Has(reject(R"({"schema":1,"site":"a","lists":[{"path":"","related":[]}]})"), "\"path\""));
  CHECK(Has(reject(R"({"schema":1,"site":"a","lists":[{"path":"p","related":[{"path":"q"}]}]})"),
            "missing field \"score\""));
  CHECK(Has(reject(R"({"schema":1,"site":"a","lists":[{"path":"p","related":[{"path":"q","score":null}]}]})"),
            "\"score\""));
  CHECK(Has(reject(R"({"schema":1,"site":"a","lists":[{"path":"p","related":[{"path":"","score":1}]}]})"),
            "\"path\""));
  RelatedUpdate too_long{"a", {List("p.md", kMaxRelatedK + 1)}};
  CHECK(Has(reject(EncodeRelatedUpdate(too_long)), "more than 50"));
}

TEST_CASE("SplitRelatedUpdate keeps order and stays under max_bytes") {
  RelatedUpdate u{"docs", {}};
  for (int i = 0; i < 300; ++i) u.lists.push_back(List("folder/note-" + std::to_string(i) + ".md", i % 17));
  const size_t max_bytes = 4096;
  std::vector<RelatedUpdate> parts = SplitRelatedUpdate(u, max_bytes);
  REQUIRE(parts.size() > 10);
  std::vector<std::string> paths;
  for (size_t p = 0; p < parts.size(); ++p) {
    CHECK(parts[p].site == "docs");
    REQUIRE(!parts[p].lists.empty());
    size_t size = EncodeRelatedUpdate(parts[p]).size();
    CHECK_MESSAGE(size <= max_bytes, "part ", p, " is ", size, " bytes");
    // Greedy: the next part's first list would not have fit into this one.
    if (p + 1 < parts.size()) {
      RelatedUpdate grown = parts[p];
      grown.lists.push_back(parts[p + 1].lists.front());
      CHECK(EncodeRelatedUpdate(grown).size() > max_bytes);
    }
    for (const RelatedList& l : parts[p].lists) paths.push_back(l.path);
  }
  REQUIRE(paths.size() == u.lists.size());
  for (size_t i = 0; i < paths.size(); ++i) CHECK(paths[i] == u.lists[i].path);

  // A list larger than max_bytes goes alone; its neighbours are not merged into it.
  RelatedUpdate huge{"docs", {List("small-1.md", 1), List("huge.md", kMaxRelatedK), List("small-2.md", 1)}};
  std::vector<RelatedUpdate> h = SplitRelatedUpdate(huge, 600);
  REQUIRE(h.size() == 3);
  CHECK(h[1].lists.size() == 1);
  CHECK(h[1].lists[0].path == "huge.md");
  CHECK(EncodeRelatedUpdate(h[1]).size() > 600);

  // Small updates stay whole; an empty update stays one (empty) update.
  std::vector<RelatedUpdate> whole = SplitRelatedUpdate(huge);
  REQUIRE(whole.size() == 1);
  CHECK(EncodeRelatedUpdate(whole[0]) == EncodeRelatedUpdate(huge));
  std::vector<RelatedUpdate> none = SplitRelatedUpdate(RelatedUpdate{"docs", {}});
  REQUIRE(none.size() == 1);
  CHECK(none[0].lists.empty());
}

}  // namespace folio::bus
