// Worker's side of assets held by folio-storage (see asset_store.h).
#include <algorithm>
#include <thread>
#include <utility>

#include "folio/core/json.h"
#include "folio/core/text.h"
#include "folio/http/attachment.h"
#include "folio/http/conditional.h"
#include "folio/http/stream.h"
#include "worker.h"

namespace folio::edge {
namespace {

constexpr std::string_view kAssetCache = "public, max-age=31536000, immutable";
// A private site's file, for its signed-in reader only.
constexpr std::string_view kPrivateAssetCache = "private, no-cache";

// Pins the asset and the head built for one response.
struct Prepared {
  std::shared_ptr<const Asset> asset;
  std::string head;
};

// The body of one response for a streamed asset: bytes [next, end) of its
// blob, read from storage a piece at a time as the server pulls, so the
// edge holds about one piece (kPiece) per response, whatever the file's size.
// The first piece was read before the status line (StartStream) and is
// written at the first pull.
class StorageSource : public http::BodySource, public std::enable_shared_from_this<StorageSource> {
 public:
  static constexpr size_t kPiece = 1 << 20;  // one ranged read: fewer storage round trips than 256 KiB pulls

  StorageSource(AssetStore* store, http::Loop* loop, std::string sha256, std::string first, uint64_t next,
                uint64_t end)
      : store_(store), loop_(loop), sha256_(std::move(sha256)), first_(std::move(first)), next_(next), end_(end) {}

  void OnPull(size_t max_bytes) override {
    if (!first_.empty()) {
      Write(std::exchange(first_, std::string()));
      return;
    }
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
  std::string first_;
  uint64_t next_, end_;
};

// The headers every /assets/ response shares: validators, caching, and what
// keeps an author's file from running script on the site (attachment.h).
// An asset kept with a gzip copy varies by Accept-Encoding.
std::string CommonHead(std::string_view etag, const http::AttachmentHeaders& ah, bool varies, bool private_answer) {
  std::string h = "ETag: " + std::string(etag) + "\r\nCache-Control: " +
                  std::string(private_answer ? kPrivateAssetCache : kAssetCache) +
                  "\r\nAccept-Ranges: bytes\r\nX-Content-Type-Options: " + std::string(http::kNoSniff) +
                  "\r\nContent-Security-Policy: " + std::string(http::kUntrustedCsp) + "\r\n";
  if (!ah.disposition.empty()) h += "Content-Disposition: " + ah.disposition + "\r\n";
  if (varies || private_answer) h += private_answer ? "Vary: Accept-Encoding, Cookie\r\n" : "Vary: Accept-Encoding\r\n";
  return h;
}

}  // namespace

bool Worker::ServeAsset(const http::Request& req, http::Responder* r, bool private_answer) {
  // scratch_ holds the decoded path: "/assets/<16 hex>/<name>".
  std::string_view path = scratch_;
  if (path.substr(0, 8) != "/assets/" || path.size() < 8 + 16 + 2 || path[8 + 16] != '/') return false;
  std::string hash16(path.substr(8, 16));
  if (!AssetStore::IsHash16(hash16) || path.find('/', 8 + 17) != std::string_view::npos) return false;
  r->SetRouteClass("asset");
  auto p = std::make_unique<PendingAsset>();
  p->responder = std::move(*r);
  p->host = std::string(req.GetHeader("host"));
  p->range = std::string(req.GetHeader("range"));
  p->if_none_match = std::string(req.GetHeader("if-none-match"));
  p->name = std::string(path.substr(8 + 17));
  p->private_answer = private_answer;
  p->head = req.is_head;
  p->gzip = AcceptsGzip(req.GetHeader("accept-encoding"));
  FetchAsset(hash16, std::move(p));
  return true;
}

void Worker::ServeBlobPage(const http::Request& req, const BlobRef& blob, http::Responder r) {
  r.SetRouteClass("asset");
  if (assets_ == nullptr) {
    SendAssetError(std::move(r), Status::Unavailable("a blob page on an edge without --storage"));
    return;
  }
  auto p = std::make_unique<PendingAsset>();
  p->responder = std::move(r);
  p->host = std::string(req.GetHeader("host"));
  p->range = std::string(req.GetHeader("range"));
  p->if_none_match = std::string(req.GetHeader("if-none-match"));
  p->sha256 = blob.sha256;
  p->content_type = blob.content_type;
  p->head = req.is_head;
  p->gzip = AcceptsGzip(req.GetHeader("accept-encoding"));
  FetchAsset(blob.sha256.substr(0, 16), std::move(p));
}

void Worker::FetchAsset(const std::string& hash16, std::unique_ptr<PendingAsset> p) {
  const uint64_t id = next_asset_id_++;
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
}

void Worker::FinishAsset(uint64_t id, Result<std::shared_ptr<const Asset>> asset) {
  auto it = pending_assets_.find(id);
  if (it == pending_assets_.end()) return;
  std::unique_ptr<PendingAsset> p = std::move(it->second);
  pending_assets_.erase(it);
  if (!asset.ok()) {
    if (asset.status().code() == Code::kNotFound) {
      SendNotFound(std::move(p->responder), p->host, p->head);
      return;
    }
    SendAssetError(std::move(p->responder), asset.status());
    return;
  }
  const Asset& a = **asset;
  if (!p->sha256.empty() && a.sha256 != p->sha256) {  // another blob with the same 16-hex prefix
    SendNotFound(std::move(p->responder), p->host, p->head);
    return;
  }
  SendAsset(std::move(p->responder), a, std::move(*asset), *p);
}

void Worker::SendAssetError(http::Responder r, const Status& why) {
  counters_.other->Increment();
  // The edge is a gateway to storage: the status is UpstreamHttpStatusFor's;
  // the reader gets a sentence, the detail stays in the log.
  std::string_view code = CodeName(why.code()), message = "storage could not serve the file";
  if (why.code() == Code::kUnavailable) {
    message = "the file is temporarily unavailable; try again shortly";
  } else if (why.code() == Code::kDataLoss) {
    message = "the file is damaged in storage and cannot be served";
  } else if (why.code() == Code::kInternal) {
    code = "bad_gateway";
  }
  http::Response resp = http::Response::Json(http::UpstreamHttpStatusFor(why.code()), JsonError(code, message));
  if (why.code() == Code::kUnavailable) resp.headers.emplace_back("Retry-After", "5");
  resp.headers.emplace_back("Cache-Control", "no-store");
  resp.headers.emplace_back("X-Content-Type-Options", std::string(http::kNoSniff));
  resp.headers.emplace_back("Content-Security-Policy", std::string(http::kUntrustedCsp));
  r.Send(std::move(resp));
}

void Worker::SendAsset(http::Responder r, const Asset& a, std::shared_ptr<const Asset> keep, const PendingAsset& req) {
  auto prep = std::make_shared<Prepared>();
  // A blob page's type is ingest's; an attachment's is decided so that no
  // author's file runs as script (attachment.h).
  const http::AttachmentHeaders ah = req.content_type.empty() ? http::AttachmentHeadersFor(req.name, a.content_type)
                                                              : http::AttachmentHeaders{req.content_type, ""};
  std::string_view body;
  const uint64_t size = a.size;
  using Kind = http::ByteRange::Kind;
  const http::ByteRange range = req.if_none_match.empty() ? http::ParseRange(req.range, size) : http::ByteRange{};
  uint64_t first = range.first, last = range.last;
  // The gzip copy answers whole-body requests from clients that accept it;
  // ranges are always of the identity bytes. Its ETag is its own (as pages').
  const bool gzip = req.gzip && !a.body_gzip.empty() && range.kind == Kind::kWhole;
  const std::string etag = "\"" + a.sha256 + (gzip ? "-gz\"" : "\"");
  const std::string common = CommonHead(etag, ah, !a.body_gzip.empty(), req.private_answer);
  if (!req.if_none_match.empty() && http::EtagMatches(req.if_none_match, etag)) {
    prep->head = "HTTP/1.1 304 Not Modified\r\n" + common;
    counters_.not_modified->Increment();
  } else if (range.kind == Kind::kUnsatisfiable) {
    prep->head = "HTTP/1.1 416 Range Not Satisfiable\r\n" + common + "Content-Range: bytes */" +
                 std::to_string(size) + "\r\nContent-Length: 0\r\n";
    counters_.other->Increment();
  } else if (a.streamed) {
    // From storage, piece by piece, once the first piece is in.
    auto s = std::make_unique<PendingStream>();
    s->responder = std::move(r);
    s->headers = {{"Content-Type", ah.content_type},
                  {"ETag", etag},
                  {"Cache-Control", std::string(req.private_answer ? kPrivateAssetCache : kAssetCache)},
                  {"Accept-Ranges", "bytes"},
                  {"X-Content-Type-Options", std::string(http::kNoSniff)},
                  {"Content-Security-Policy", std::string(http::kUntrustedCsp)}};
    if (!ah.disposition.empty()) s->headers.emplace_back("Content-Disposition", ah.disposition);
    if (range.kind == Kind::kWhole) first = 0, last = size - 1;
    if (range.kind == Kind::kPart) {
      s->headers.emplace_back("Content-Range", "bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" +
                                                   std::to_string(size));
    }
    s->status = range.kind == Kind::kPart ? 206 : 200;
    s->sha256 = a.sha256;
    s->first = first;
    s->length = size == 0 ? 0 : last - first + 1;
    s->head = req.head;
    StartStream(std::move(s));
    return;
  } else if (range.kind == Kind::kPart) {
    body = std::string_view(a.body).substr(first, last - first + 1);
    prep->head = "HTTP/1.1 206 Partial Content\r\nContent-Type: " + ah.content_type + "\r\n" + common +
                 "Content-Range: bytes " + std::to_string(first) + "-" + std::to_string(last) + "/" +
                 std::to_string(size) + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
    counters_.ok->Increment();
  } else {
    body = gzip ? std::string_view(a.body_gzip) : std::string_view(a.body);
    prep->head = "HTTP/1.1 200 OK\r\nContent-Type: " + ah.content_type + "\r\n" + common +
                 (gzip ? "Content-Encoding: gzip\r\n" : "") + "Content-Length: " + std::to_string(body.size()) +
                 "\r\n";
    counters_.ok->Increment();
  }
  prep->asset = std::move(keep);
  http::PreparedResponse resp;
  resp.head = prep->head;
  resp.body = body;
  resp.keep = std::move(prep);
  r.SendPrepared(resp);
}

void Worker::StartStream(std::unique_ptr<PendingStream> p) {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(p->head ? 1 : StorageSource::kPiece, p->length));
  const std::string sha256 = p->sha256;
  const uint64_t first = p->first;
  const uint64_t id = next_asset_id_++;
  pending_streams_.emplace(id, std::move(p));
  if (n == 0) {
    FinishStream(id, std::string());
    return;
  }
  assets_->ReadRange(sha256, first, n, [this, id](Result<std::string> piece) {
    loop_.Post([this, id, piece = std::move(piece)]() mutable { FinishStream(id, std::move(piece)); });
  });
}

void Worker::FinishStream(uint64_t id, Result<std::string> piece) {
  auto it = pending_streams_.find(id);
  if (it == pending_streams_.end()) return;
  std::unique_ptr<PendingStream> p = std::move(it->second);
  pending_streams_.erase(it);
  if (!piece.ok()) {
    SendAssetError(std::move(p->responder), piece.status());
    return;
  }
  std::string first = p->head ? std::string() : std::move(piece).value();
  const uint64_t next = p->first + first.size();
  counters_.ok->Increment();
  p->responder.SendStream(p->status, std::move(p->headers), p->length,
                          std::make_shared<StorageSource>(assets_, &loop_, p->sha256, std::move(first), next,
                                                          p->first + p->length));
}

void Worker::SendNotFound(http::Responder r, std::string_view host, bool head_only) {
  std::shared_ptr<const Page> page = builtin_404_;
  if (const PageTable* pages = sites_.Find(host)) {
    if (auto nf = pages->find(kNotFoundKey); nf != pages->end()) page = nf->second;
  }
  SendPage(std::move(r), std::move(page), /*gzip=*/false, /*not_modified=*/false, head_only);
}

}  // namespace folio::edge
