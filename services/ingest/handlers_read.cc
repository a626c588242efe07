// The ingest API's reads (handlers_internal.h): the manifest, full or since
// a version, and the export's pages. Encoded with libs/ingest_api.
#include <algorithm>

#include "folio/core/log.h"
#include "folio/ingest_api/export.h"
#include "folio/ingest_api/manifest.h"
#include "handlers_internal.h"

namespace folio::ingest {
namespace {

// HTTP loop. The manifest's ?since=VERSION: -1 when absent (the full
// manifest), else a version >= 0, or an error naming the problem.
Result<int64_t> ParseSince(const http::Request& req) {
  bool present = false;
  for (std::string_view q = req.query; !q.empty();) {
    std::string_view part = q.substr(0, q.find('&'));
    q.remove_prefix(std::min(q.size(), part.size() + 1));
    present = present || part == "since" || part.starts_with("since=");
  }
  if (!present) return int64_t{-1};
  std::string v = req.QueryParam("since");
  if (v.starts_with('-')) return Status::Invalid("since must not be negative, not '" + v + "'");
  bool digits = !v.empty() && v.size() <= 18;
  for (char c : v) digits = digits && c >= '0' && c <= '9';
  if (!digits) return Status::Invalid("since must be a version number (at most 18 digits), not '" + v + "'");
  return static_cast<int64_t>(std::stoll(v));
}

// Writer loop. The manifest (full, or the delta since `since`).
Result<ingest_api::Manifest> ManifestOf(const SiteWriter& writer, const PushLimits& limits, int64_t since) {
  if (since >= 0) return writer.ManifestSince(limits, since);
  Result<std::string> epoch = writer.Epoch();
  if (!epoch.ok()) return epoch.status();
  return writer.FullManifest(limits, *epoch);
}

// Writer loop. The manifest; with storage, the census then adds
// "missing_attachments": the paths of the site's attachments whose blobs
// storage cannot serve, so the CLI sends them again instead of counting
// them unchanged (issue 23). A census that cannot list storage leaves the
// key out (the manifest still answers).
void AnswerManifest(HandlerContext* ctx, std::shared_ptr<http::Responder> responder, const std::string& site,
                    int64_t since) {
  SiteWriter* writer = ctx->sites->writer(site);
  if (!writer) return Answer(ctx, responder, SiteGone());
  Result<ingest_api::Manifest> m = ManifestOf(*writer, ctx->limits, since);
  if (!m.ok()) return Answer(ctx, responder, http::Response::Error(m.status()));
  std::vector<std::pair<std::string, std::string>> attachments;
  if (ctx->census) attachments = writer->AttachmentHashes();
  if (attachments.empty()) return Answer(ctx, responder, http::Response::Json(200, ingest_api::EncodeManifest(*m)));
  std::vector<std::string> hashes;
  hashes.reserve(attachments.size());
  for (const auto& a : attachments) hashes.push_back(a.second);
  auto on_checked = [ctx, responder, m = std::move(m).value(),
                     attachments = std::move(attachments)](Result<std::vector<size_t>> missing) mutable {
    if (!missing.ok()) {
      log::Warn("manifest: could not check storage for the attachments' blobs",
                {{"error", missing.status().message()}});
    } else {
      std::vector<std::string>& paths = m.missing_attachments.emplace();
      for (size_t i : *missing) paths.push_back(attachments[i].first);
    }
    Answer(ctx, responder, http::Response::Json(200, ingest_api::EncodeManifest(m)));
  };
  ctx->census->Check(std::move(hashes), std::move(on_checked));
}

}  // namespace

void HandleManifest(HandlerContext* ctx, const http::Request& req, http::Responder r) {
  Result<int64_t> since = ParseSince(req);
  if (!since.ok()) {
    r.SendError(since.status());
    return;
  }
  std::string site = SiteOf(ctx, req, r, nullptr);
  if (site.empty()) return;
  auto responder = std::make_shared<http::Responder>(std::move(r));
  ctx->writer_loop->Post([ctx, responder, site, since = *since] { AnswerManifest(ctx, responder, site, since); });
}

// Every URL the site publishes, in bounded pages (ingest_api/export.h).
void HandleExport(HandlerContext* ctx, const http::Request& req, http::Responder r) {
  std::string after = req.QueryParam("after");
  if (after.size() > ingest_api::kMaxExportAfterBytes) {
    r.SendError(Status::Invalid("after must be a URL path of at most " +
                                std::to_string(ingest_api::kMaxExportAfterBytes) + " bytes"));
    return;
  }
  std::string site = SiteOf(ctx, req, r, nullptr);
  if (site.empty()) return;
  OnWriter(ctx, std::make_shared<http::Responder>(std::move(r)), [ctx, site, after] {
    SiteWriter* writer = ctx->sites->writer(site);
    if (!writer) return SiteGone();
    constexpr int kPage = ingest_api::kExportPageUrls;
    Result<std::vector<std::string>> urls = writer->PageUrls(after, kPage);
    if (!urls.ok()) return http::Response::Error(urls.status());
    ingest_api::ExportPage page;
    page.urls = std::move(urls).value();
    if (static_cast<int>(page.urls.size()) == kPage) page.next = page.urls.back();
    return http::Response::Json(200, ingest_api::EncodeExportPage(page));
  });
}

}  // namespace folio::ingest
