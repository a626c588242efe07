// Worker: one serving thread of the edge: its own Loop, Server (sharing the
// port with the other workers through SO_REUSEPORT) and its own copy of the
// site tables (site_table.h).
// Readers never lock: updates reach each worker as tasks posted to its loop
// (Loop::Post, from the page feed, page_feed.h) and are applied between
// requests on that worker's thread.
// The worker also answers GET /search (search_handler.cc): the search runs
// on the SearchBackend's pool and the answer comes back to this loop.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "folio/bus/search_schema.h"
#include "folio/http/server.h"
#include "folio/metrics/metrics.h"
#include "folio/site/search_page.h"
#include "asset_store.h"
#include "page.h"
#include "search_backend.h"
#include "search_params.h"
#include "site_table.h"
#include "view_counter.h"

namespace folio::edge {

struct ServeCounters {
  metrics::Counter* ok;
  metrics::Counter* not_modified;
  metrics::Counter* not_found;
  metrics::Counter* other;
  // Identity answers refused because the page's gzip body did not inflate
  // (500; counted under "other" as well): BuildPage checks only its structure.
  metrics::Counter* corrupt_body;
};

class Worker {
 public:
  // `search` (may be null: searches then answer 503) is shared by every
  // worker and must outlive the loop's run.
  // `assets` (may be null: /assets/ URLs not in the page tables are 404)
  // is shared likewise.
  Worker(std::string default_site, ServeCounters counters, SearchBackend* search = nullptr,
         AssetStore* assets = nullptr);

  http::Loop& loop() { return loop_; }
  http::Server& server() { return *server_; }
  // The worker's routes (search, then every other path as a page); more
  // (metrics::OpsEndpoints::MountPublic) may be added before it serves.
  http::Router& router() { return router_; }

  // Loop thread only (post these from elsewhere).
  SiteTables& sites() { return sites_; }

  // Counts readers' views (view_counter.h) into `mine` and answers
  // /_/stats from `all` (every worker's). REQUIRES: before serving; both
  // outlive the loop's run. Without it nothing is counted and /_/stats is 404.
  void CountViews(ViewCounter* mine, const ViewCounters* all) {
    views_ = mine;
    all_views_ = all;
  }

 private:
  void Serve(const http::Request& req, http::Responder r);
  // GET /_/stats (view_stats.h): the site's page views, for its signed-in
  // owners only; anyone else gets the site's 404 page, as for a URL that
  // does not exist (nothing revealed).
  void ServeStats(const http::Request& req, http::Responder r);
  // True if `req` carries a session of an owner of `site`. The session check
  // is the private-site edge's (issue 29); until it is wired here, nobody is.
  bool IsOwner(const http::Request& req, std::string_view site) const;
  // GET /search (search_handler.cc). Answers at once (400, the empty page,
  // 503 when overloaded) or parks the Responder in pending_searches_ until
  // FinishSearch, posted back to this loop by the backend's pool.
  void ServeSearch(const http::Request& req, http::Responder r);
  void FinishSearch(uint64_t id, site::SearchPage page, SearchFormat format, Result<bus::SearchReply> reply);
  // GET/HEAD /assets/<hash16>/<name> missing from the page tables
  // (asset_handler.cc): from the AssetStore, else parked in pending_assets_
  // until FinishAsset is posted back. Returns false if the path is not of
  // that shape or there is no store (the caller goes on as for any page).
  // Every /assets/ response carries http::kUntrustedCsp and nosniff, and a
  // download disposition unless the type is inline-safe (attachment.h).
  bool ServeAsset(const http::Request& req, http::Responder* r);
  // A page whose body is a blob in folio-storage (Page::blob(): the bundled
  // mermaid): served as ServeAsset serves, with the record's Content-Type
  // (ingest's, never an author's) and only if storage's blob has exactly
  // that SHA-256; 503 on an edge without --storage.
  void ServeBlobPage(const http::Request& req, const BlobRef& blob, http::Responder r);
  struct PendingAsset {
    http::Responder responder;
    std::string host, range, if_none_match, name;  // copied: the request's views die with it
    std::string sha256, content_type;  // a blob page's: the blob it must be and its type; "" for attachments
    bool head = false;
    bool gzip = false;  // the client accepts gzip (AcceptsGzip)
  };
  // Parks `p` and asks the AssetStore for `hash16`; FinishAsset answers.
  void FetchAsset(const std::string& hash16, std::unique_ptr<PendingAsset> p);
  void FinishAsset(uint64_t id, Result<std::shared_ptr<const Asset>> asset);
  void SendAsset(http::Responder r, const Asset& asset, std::shared_ptr<const Asset> keep, const PendingAsset& req);
  // A streamed asset's status line waits for its first piece from storage
  // (one byte for HEAD): a blob storage cannot read is answered an error
  // status, never a 200 cut short (issue 9). Parked in pending_streams_
  // meanwhile.
  struct PendingStream {
    http::Responder responder;
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string sha256;
    uint64_t first = 0, length = 0;
    bool head = false;
  };
  void StartStream(std::unique_ptr<PendingStream> p);
  void FinishStream(uint64_t id, Result<std::string> piece);
  // 503 (storage unreachable; retry) or 502 (storage failed to serve the
  // blob: damaged, or another error), as JSON; never cached.
  void SendAssetError(http::Responder r, const Status& why);
  // The site's 404 page (identity); `head_only` for HEAD (nothing inflated).
  void SendNotFound(http::Responder r, std::string_view host, bool head_only);
  // Answers `page` (REQUIRES: not a blob page) as Respond builds it and
  // counts the answer by its status; 500 if an identity body fails to inflate.
  void SendPage(http::Responder r, std::shared_ptr<const Page> page, bool gzip, bool not_modified, bool head_only);

  http::Loop loop_;
  http::Router router_;
  std::unique_ptr<http::Server> server_;
  SiteTables sites_;
  std::shared_ptr<const Page> builtin_404_;
  std::string scratch_;  // decoded path; reused across requests
  ServeCounters counters_;
  ViewCounter* views_ = nullptr;             // this worker's; null: views are not counted
  const ViewCounters* all_views_ = nullptr;  // every worker's, for /_/stats
  SearchBackend* search_;
  // Responders of searches in flight, by id: they never leave this thread
  // (a Responder is loop-thread only). Dropped ones answer nothing once
  // their connection is gone.
  std::unordered_map<uint64_t, http::Responder> pending_searches_;
  uint64_t next_search_id_ = 1;
  AssetStore* assets_;
  std::unordered_map<uint64_t, std::unique_ptr<PendingAsset>> pending_assets_;
  std::unordered_map<uint64_t, std::unique_ptr<PendingStream>> pending_streams_;
  uint64_t next_asset_id_ = 1;
};

}  // namespace folio::edge
