// folio-storage's API (api.h): the routes, the token check in front of
// them, deletes and listings. Uploads are in api_upload.cc, downloads in
// api_download.cc.
#include "api.h"

#include <charconv>

#include "api_internal.h"
#include "auth.h"
#include "folio/core/json.h"
#include "folio/core/log.h"

namespace folio::storage {
namespace {

using namespace api_internal;

void Delete(ApiContext* ctx, http::Responder resp, std::string key) {
  M(ctx)->deletes.Increment();
  auto shared = std::make_shared<http::Responder>(std::move(resp));
  // Replicated: known in the cluster is enough (this journal may not have
  // copied it yet); the delete is recorded in JetStream before the 204.
  const bool known = ctx->replica != nullptr && ctx->replica->Find(key) != nullptr;
  ctx->io->Submit([ctx, shared, key, known] {
    const Status local = ctx->journal->Delete(key);
    Status s = local;
    if (known && (s.ok() || s.code() == Code::kNotFound)) {
      Status pub = ctx->replica->PublishDelete(key);
      s = pub.ok() ? Status::Ok() : Status::Unavailable("could not record the delete in JetStream (" + pub.message() + "); retry");
    }
    ctx->loop->Post([ctx, shared, s, local, key, known] {
      if (known && s.ok()) ctx->replica->Forgotten(key);
      ObserveWrite(ctx, local);  // the disk's state: what the journal's own write said
      if (s.ok()) {
        shared->Send(http::Response{204, {}, ""});
      } else {
        shared->SendError(s.code() == Code::kNotFound ? Status::NotFound("no object " + key)
                                                      : WriteFailedStatus(ctx, s, key));
      }
    });
  });
}

void List(ApiContext* ctx, const http::Request& req, http::Responder resp, bool blobs) {
  M(ctx)->lists.Increment();
  std::string prefix = req.QueryParam("prefix"), after = req.QueryParam("after"), limit_s = req.QueryParam("limit");
  size_t limit = 1000;
  if (!limit_s.empty()) {
    auto [p, ec] = std::from_chars(limit_s.data(), limit_s.data() + limit_s.size(), limit);
    if (ec != std::errc() || p != limit_s.data() + limit_s.size() || limit < 1 || limit > kMaxListLimit) {
      resp.SendError(Status::Invalid("limit must be an integer in 1.." + std::to_string(kMaxListLimit)));
      return;
    }
  }
  if (blobs && (!IsHexPrefix(prefix) || !IsHexPrefix(after))) {
    resp.SendError(Status::Invalid("prefix and after must be lower-case hex (at most 64 digits)"));
    return;
  }
  if (!IsValidUtf8(prefix) || !IsValidUtf8(after) || prefix.size() > kMaxObjectName || after.size() > kMaxObjectName) {
    resp.SendError(Status::Invalid("prefix and after must be UTF-8 of at most 512 bytes"));
    return;
  }
  std::string kp(blobs ? kBlobKeyPrefix : kObjectKeyPrefix);
  if (ctx->replica != nullptr) {  // the cluster-wide view: every replica answers the same
    std::vector<const BlobMeta*> known = ctx->replica->List(kp + prefix, after.empty() ? "" : kp + after, limit);
    JsonWriter w;
    w.BeginObject().Key(blobs ? "blobs" : "objects").BeginArray();
    for (const BlobMeta* b : known) {
      w.BeginObject().Key(blobs ? "sha256" : "name").String(std::string_view(b->key).substr(kp.size()));
      w.Key("size").Int(static_cast<int64_t>(b->size)).Key("content_type").String(b->content_type);
      // The KV revision: one order on every replica (-1 until this replica's watcher saw its own write).
      w.Key("seq").Int(b->revision == kPendingRevision ? -1 : static_cast<int64_t>(b->revision)).EndObject();
    }
    w.EndArray().Key("truncated").Bool(known.size() == limit).EndObject();
    resp.Send(http::Response::Json(200, w.Take()));
    return;
  }
  auto items = ctx->journal->List(kp + prefix, limit, after.empty() ? "" : kp + after);
  if (!items.ok()) {
    resp.SendError(items.status());
    return;
  }
  JsonWriter w;
  w.BeginObject().Key(blobs ? "blobs" : "objects").BeginArray();
  for (const journal::BlobInfo& b : *items) {
    w.BeginObject().Key(blobs ? "sha256" : "name").String(std::string_view(b.key).substr(kp.size()));
    w.Key("size").Int(static_cast<int64_t>(b.size)).Key("content_type").String(b.meta);
    w.Key("seq").Int(static_cast<int64_t>(b.seq)).EndObject();
  }
  w.EndArray().Key("truncated").Bool(items->size() == limit).EndObject();
  resp.Send(http::Response::Json(200, w.Take()));
}

// `h` behind the token check (auth.h): refused requests never reach it.
http::Handler Guard(ApiContext* ctx, Access need, http::Handler h) {
  return [ctx, need, h = std::move(h)](const http::Request& req, http::Responder resp) {
    if (Status s = Authorize(ctx->tokens, req, need); !s.ok()) {
      SendDenied(resp, s);
      return;
    }
    h(req, std::move(resp));
  };
}

// The check of an upload (http/admission.h): the write token, from the
// headers, before a byte of the body is read or counted against the body
// budget; a refusal closes the connection without reading the body.
http::AdmissionCheck UploadCheck(ApiContext* ctx) {
  return [ctx](const http::Request& req, http::AdmissionGate gate) {
    if (Status s = Authorize(ctx->tokens, req, Access::kWrite); !s.ok()) return gate.Refuse(Denied(s));
    gate.Admit();
  };
}

// The streamed PUT routes, each checked before its body is read.
void MountUploads(http::Router* router, ApiContext* ctx) {
  router->HandleStreamingPrefix(
      "PUT", std::string(kBlobPrefix), UploadCheck(ctx),
      [ctx](const http::Request& req, http::Responder resp) -> std::shared_ptr<http::BodyReader> {
        std::string_view hex = req.path.substr(kBlobPrefix.size());
        if (!IsHex64(hex)) {
          resp.SendError(Status::Invalid("expected /blobs/sha256/<64 lower-case hex digits>"));
          return nullptr;
        }
        return StartUpload(ctx, req, std::move(resp), std::string(kBlobKeyPrefix) + std::string(hex),
                           std::string(hex), 0);
      },
      ctx->options.max_blob_bytes, "blob");
  router->HandleStreamingPrefix(
      "PUT", std::string(kObjectPrefix), UploadCheck(ctx),
      [ctx](const http::Request& req, http::Responder resp) -> std::shared_ptr<http::BodyReader> {
        std::string name;
        if (Status s = ObjectName(req.path.substr(kObjectPrefix.size()), &name); !s.ok()) {
          resp.SendError(s);
          return nullptr;
        }
        int keep = 0;
        if (std::string k = req.QueryParam("keep"); !k.empty()) {
          auto [p, ec] = std::from_chars(k.data(), k.data() + k.size(), keep);
          if (ec != std::errc() || p != k.data() + k.size() || keep < 1 || keep > 10000) {
            resp.SendError(Status::Invalid("keep must be an integer in 1..10000"));
            return nullptr;
          }
        }
        return StartUpload(ctx, req, std::move(resp), std::string(kObjectKeyPrefix) + name, "", keep);
      },
      ctx->options.max_blob_bytes, "object");
}

// The buffered routes and the fallback.
void MountBuffered(http::Router* router, ApiContext* ctx) {
  // Buffered routes, each behind the token check for what it needs.
  // Route classes for request metrics: "blob" and "object" (one named
  // thing), "list" (GET /blobs, /objects), the rest "other".
  auto route = [router, ctx](std::string_view method, std::string_view path, Access need, http::Handler h) {
    std::string_view cls = path == kBlobPrefix ? "blob" : path == kObjectPrefix ? "object" : "list";
    if (path.back() == '/') router->HandlePrefix(method, std::string(path), Guard(ctx, need, std::move(h)), cls);
    else router->Handle(method, std::string(path), Guard(ctx, need, std::move(h)), cls);
  };
  route("GET", kBlobPrefix, Access::kRead, [ctx](const http::Request& req, http::Responder resp) {
    ServeBlob(ctx, req, std::move(resp));
  });
  route("DELETE", kBlobPrefix, Access::kWrite, [ctx](const http::Request& req, http::Responder resp) {
    std::string_view hex = req.path.substr(kBlobPrefix.size());
    if (!IsHex64(hex)) {
      resp.SendError(Status::Invalid("expected /blobs/sha256/<64 lower-case hex digits>"));
      return;
    }
    Delete(ctx, std::move(resp), std::string(kBlobKeyPrefix) + std::string(hex));
  });
  route("GET", "/blobs", Access::kWrite, [ctx](const http::Request& req, http::Responder resp) {
    List(ctx, req, std::move(resp), true);
  });
  route("GET", kObjectPrefix, Access::kWrite, [ctx](const http::Request& req, http::Responder resp) {
    std::string name;
    if (Status s = ObjectName(req.path.substr(kObjectPrefix.size()), &name); !s.ok()) {
      resp.SendError(s);
      return;
    }
    Serve(ctx, req, std::move(resp), std::string(kObjectKeyPrefix) + name, false);
  });
  route("DELETE", kObjectPrefix, Access::kWrite, [ctx](const http::Request& req, http::Responder resp) {
    std::string name;
    if (Status s = ObjectName(req.path.substr(kObjectPrefix.size()), &name); !s.ok()) {
      resp.SendError(s);
      return;
    }
    Delete(ctx, std::move(resp), std::string(kObjectKeyPrefix) + name);
  });
  route("GET", "/objects", Access::kWrite, [ctx](const http::Request& req, http::Responder resp) {
    List(ctx, req, std::move(resp), false);
  });
  // Unknown paths: a caller without a token learns nothing, not even that.
  router->Fallback(Guard(ctx, Access::kRead, [](const http::Request&, http::Responder resp) {
    resp.SendError(Status::NotFound("no route for this path"));
  }));
}

}  // namespace

std::string NotReadyReason(const ApiContext& ctx) {
  // The journal's error names the data directory: it is in the log, not here.
  if (!ctx.journal->WriteError().ok()) return "a write or fsync failed: restart needed (the error is in the log)";
  if (ctx.disk != nullptr && ctx.disk->full()) return "disk full: writes refused until space returns; reads work";
  if (ctx.replica != nullptr) return ctx.replica->NotReadyReason();
  return "";
}

void MountApi(http::Router* router, ApiContext* ctx) {
  M(ctx);
  MountUploads(router, ctx);
  MountBuffered(router, ctx);
}

}  // namespace folio::storage
