// Worker's side of assets held by folio-storage (see asset_store.h).
#include <algorithm>
#include <charconv>
#include <thread>
#include <utility>

#include "folio/core/text.h"
#include "folio/http/stream.h"
#include "page_cache.h"

namespace folio::edge {
namespace {

constexpr std::string_view kAssetCache = "public, max-age=31536000, immutable";

// A single "bytes=a-b", "a-" or "-n" range of a body of `size` bytes.
// Returns 0 if absent or malformed (send everything), 1 if satisfiable,
// -1 if not (416).
int ParseSingleRange(std::string_view h, uint64_t size, uint64_t* first, uint64_t* last) {
  if (h.empty()) return 0;
  if (h.substr(0, 6) != "bytes=" || h.find(',') != std::string_view::npos) return 0;
  h.remove_prefix(6);
  size_t dash = h.find('-');
  if (dash == std::string_view::npos) return 0;
  std::string_view a = h.substr(0, dash), b = h.substr(dash + 1);
  auto num = [](std::string_view s, uint64_t* v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
    return !s.empty() && ec == std::errc() && p == s.data() + s.size();
  };
  uint64_t x = 0, y = 0;
  if (a.empty()) {  // suffix: the last y bytes
    if (!num(b, &y)) return 0;
    if (y == 0 || size == 0) return -1;
    *first = y >= size ? 0 : size - y;
    *last = size - 1;
    return 1;
  }
  if (!num(a, &x) || (!b.empty() && !num(b, &y))) return 0;
  if (!b.empty() && y < x) return 0;
  if (x >= size) return -1;
  *first = x;
  *last = b.empty() || y >= size ? size - 1 : y;
  return 1;
}

// Pins the asset and the head built for one response.
struct Prepared {
  std::shared_ptr<const Asset> asset;
  std::string head;
};

// The body of one response for a streamed asset: bytes [next, end) of its
// blob, read from storage a piece at a time as the server pulls, so the
// edge holds about one piece (kPiece) per response, whatever the file's size.
class StorageSource : public http::BodySource, public std::enable_shared_from_this<StorageSource> {
 public:
  static constexpr size_t kPiece = 1 << 20;  // one ranged read: fewer storage round trips than 256 KiB pulls

  StorageSource(AssetStore* store, http::Loop* loop, std::string sha256, uint64_t first, uint64_t end)
      : store_(store), loop_(loop), sha256_(std::move(sha256)), next_(first), end_(end) {}

  void OnPull(size_t max_bytes) override {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(std::max(max_bytes, kPiece), end_ - next_));
    const uint64_t at = next_;
    next_ += n;
    // The pool thread only posts (as for misses): a late result for a
    // cancelled response is written to a detached source, which ignores it.
    store_->ReadRange(sha256_, at, n, [self = shared_from_this(), loop = loop_](Result<std::string> bytes) {
      loop->Post([self, bytes = std::move(bytes)]() mutable { self->Deliver(std::move(bytes)); });
    });
  }
  void OnCancel(const Status&) override {}

 private:
  void Deliver(Result<std::string> bytes) {
    if (!bytes.ok()) {
      Abort();  // the client sees a short body; the status line was sent already
      return;
    }
    Write(std::move(bytes).value());
  }

  AssetStore* store_;
  http::Loop* loop_;
  std::string sha256_;
  uint64_t next_, end_;
};

}  // namespace

bool Worker::ServeAsset(const http::Request& req, http::Responder* r) {
  // scratch_ holds the decoded path: "/assets/<16 hex>/<name>".
  std::string_view path = scratch_;
  if (path.substr(0, 8) != "/assets/" || path.size() < 8 + 16 + 2 || path[8 + 16] != '/') return false;
  std::string hash16(path.substr(8, 16));
  if (!AssetStore::IsHash16(hash16) || path.find('/', 8 + 17) != std::string_view::npos) return false;
  const uint64_t id = next_asset_id_++;
  auto p = std::make_unique<PendingAsset>();
  p->responder = std::move(*r);
  p->host = std::string(req.GetHeader("host"));
  p->range = std::string(req.GetHeader("range"));
  p->if_none_match = std::string(req.GetHeader("if-none-match"));
  pending_assets_.emplace(id, std::move(p));
  // A hit calls back at once on this thread; a miss on a pool thread, which
  // only posts (the Result is a value, harmless to drop with a stopped loop).
  assets_->Get(hash16, [this, id, self = std::this_thread::get_id()](Result<std::shared_ptr<const Asset>> a) {
    if (std::this_thread::get_id() == self) {
      FinishAsset(id, std::move(a));
      return;
    }
    loop_.Post([this, id, a = std::move(a)]() mutable { FinishAsset(id, std::move(a)); });
  });
  return true;
}

void Worker::FinishAsset(uint64_t id, Result<std::shared_ptr<const Asset>> asset) {
  auto it = pending_assets_.find(id);
  if (it == pending_assets_.end()) return;
  std::unique_ptr<PendingAsset> p = std::move(it->second);
  pending_assets_.erase(it);
  if (!asset.ok()) {
    if (asset.status().code() == Code::kNotFound) {
      SendNotFound(std::move(p->responder), p->host);
      return;
    }
    counters_.other->Increment();
    http::Response resp = http::Response::Text(503, "The file is temporarily unavailable; try again shortly.\n");
    resp.headers.emplace_back("Cache-Control", "no-store");
    resp.headers.emplace_back("Retry-After", "5");
    p->responder.Send(std::move(resp));
    return;
  }
  const Asset& a = **asset;
  SendAsset(std::move(p->responder), a, std::move(*asset), p->range, p->if_none_match);
}

void Worker::SendAsset(http::Responder r, const Asset& a, std::shared_ptr<const Asset> keep, std::string_view range,
                       std::string_view if_none_match) {
  auto prep = std::make_shared<Prepared>();
  const std::string etag = "\"" + a.sha256 + "\"";
  std::string common = "ETag: " + etag + "\r\nCache-Control: " + std::string(kAssetCache) +
                       "\r\nAccept-Ranges: bytes\r\nX-Content-Type-Options: nosniff\r\n";
  std::string_view body;
  const uint64_t size = a.size;
  uint64_t first = 0, last = 0;
  int ranged = if_none_match.empty() ? ParseSingleRange(range, size, &first, &last) : 0;
  if (!if_none_match.empty() && EtagMatches(if_none_match, etag)) {
    prep->head = "HTTP/1.1 304 Not Modified\r\n" + common;
    counters_.not_modified->Increment();
  } else if (ranged < 0) {
    prep->head = "HTTP/1.1 416 Range Not Satisfiable\r\n" + common + "Content-Range: bytes */" +
                 std::to_string(size) + "\r\nContent-Length: 0\r\n";
    counters_.other->Increment();
  } else if (a.streamed) {
    // From storage, piece by piece: headers now, the body as it is pulled.
    std::vector<std::pair<std::string, std::string>> headers = {
        {"Content-Type", a.content_type},
        {"ETag", etag},
        {"Cache-Control", std::string(kAssetCache)},
        {"Accept-Ranges", "bytes"},
        {"X-Content-Type-Options", "nosniff"}};
    if (ranged == 0) first = 0, last = size - 1;
    if (ranged > 0) {
      headers.emplace_back("Content-Range",
                           "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" + std::to_string(size));
    }
    counters_.ok->Increment();
    const uint64_t length = size == 0 ? 0 : last - first + 1;
    r.SendStream(ranged > 0 ? 206 : 200, std::move(headers), length,
                 std::make_shared<StorageSource>(assets_, &loop_, a.sha256, first, first + length));
    return;
  } else if (ranged > 0) {
    body = std::string_view(a.body).substr(first, last - first + 1);
    prep->head = "HTTP/1.1 206 Partial Content\r\nContent-Type: " + a.content_type + "\r\n" + common +
                 "Content-Range: bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" +
                 std::to_string(size) + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    counters_.ok->Increment();
  } else {
    body = a.body;
    prep->head = "HTTP/1.1 200 OK\r\nContent-Type: " + a.content_type + "\r\n" + common +
                 "Content-Length: " + std::to_string(size) + "\r\n";
    counters_.ok->Increment();
  }
  prep->asset = std::move(keep);
  http::PreparedResponse resp;
  resp.head = prep->head;
  resp.body = body;
  resp.keep = std::move(prep);
  r.SendPrepared(resp);
}

void Worker::SendNotFound(http::Responder r, std::string_view host) {
  std::shared_ptr<const Page> page = builtin_404_;
  if (const PageTable* pages = sites_.Find(host)) {
    if (auto nf = pages->find(kNotFoundKey); nf != pages->end()) page = nf->second;
  }
  counters_.not_found->Increment();
  http::PreparedResponse resp;
  resp.head = page->head;
  resp.body = page->body;
  resp.keep = std::move(page);
  r.SendPrepared(resp);
}

}  // namespace folio::edge
