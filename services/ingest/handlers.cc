// The ingest API's routes (handlers.h); the handlers themselves live by
// concern in handlers_{gate,push,stage,read}.cc (handlers_internal.h).
#include "handlers.h"

#include "folio/ingest_api/limits.h"
#include "handlers_internal.h"
#include "site_check.h"

namespace folio::ingest {

void MountApi(http::Router* router, HandlerContext* ctx) {
  if (!ctx->storage.url.empty() && !ctx->census) ctx->census = std::make_shared<BlobCensus>(ctx->storage);
  std::shared_ptr<PushCounters> counters = NewPushCounters(ctx->registry);
  // Every route of the API needs a site's token, checked from the headers
  // before a body is read (site_check.h); writes also need the lease.
  auto reload = std::make_shared<ReloadGate>(ctx->http_loop, ctx->writer_loop, ctx->sites);
  http::AdmissionCheck push_check = LeaderFirst(ctx->leader, SiteTokenCheck(reload, ctx->sites, &counters->rejected));
  http::AdmissionCheck read_check = SiteTokenCheck(reload, ctx->sites, nullptr);
  const std::string push_path(ingest_api::kPushPath), commit_path(ingest_api::kCommitPath);
  const std::string manifest_path(ingest_api::kManifestPath), export_path(ingest_api::kExportPath);

  router->Handle("POST", push_path, push_check, [ctx, counters](const http::Request& req, http::Responder r) {
    HandlePush(ctx, counters, req, std::move(r));
  }, "push");
  router->Handle("POST", commit_path, push_check, [ctx, counters](const http::Request& req, http::Responder r) {
    HandleCommit(ctx, counters, req, std::move(r));
  }, "push_commit");
  router->Handle("GET", manifest_path, read_check, [ctx](const http::Request& req, http::Responder r) {
    HandleManifest(ctx, req, std::move(r));
  }, "manifest");
  router->Handle("GET", export_path, read_check, [ctx](const http::Request& req, http::Responder r) {
    HandleExport(ctx, req, std::move(r));
  }, "export");
}

}  // namespace folio::ingest
