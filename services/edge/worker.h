// Worker: one serving thread of the edge: its own Loop, Server (sharing the
// port with the other workers through SO_REUSEPORT) and its own copy of the
// site tables (site_table.h).
// Readers never lock: updates reach each worker as tasks posted to its loop
// (Loop::Post, from the page feed, page_feed.h) and are applied between
// requests on that worker's thread.
// The worker also answers GET /search (search_handler.cc): the search runs
// on the SearchBackend's pool and the answer comes back to this loop.
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "folio/auth/session.h"
#include "folio/bus/search_schema.h"
#include "folio/http/body_budget.h"
#include "folio/http/server.h"
#include "folio/metrics/metrics.h"
#include "folio/site/i18n.h"
#include "folio/site/search_page.h"
#include "asset_store.h"
#include "page.h"
#include "search_backend.h"
#include "search_params.h"
#include "signins.h"
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
  // is shared likewise. So is `signins` (may be null: nobody can sign in,
  // a sign-in POST answers 503; private sites and pages stay closed).
  Worker(std::string default_site, ServeCounters counters, SearchBackend* search = nullptr,
         AssetStore* assets = nullptr, Signins* signins = nullptr);

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
  // True if `req` carries a valid session of an owner of the site whose
  // SiteAuth is `auth` (null: a site without readers, which has no owner).
  bool IsOwner(const http::Request& req, const SiteAuth* auth) const;
  // Whether the reader holds a session: unknown until checked (a public
  // site's pages never check: its hot path parses no cookie).
  enum class Session : uint8_t { kUnknown, kNo, kYes };
  // The page at scratch_ (the decoded path) of `pages` (null: no such site),
  // as Serve answers it; `auth` is the site's (null: public, no readers). A
  // signed-in-only page is the sign-in page (401) unless the reader has a
  // session; an answer to a signed-in reader is private (RespondPrivate).
  void ServePath(const http::Request& req, http::Responder r, const PageTable* pages, const SiteAuth* auth,
                 Session session, std::string_view site);

  // Private sites and signed-in-only pages (signin_handler.cc).
  // A GET or HEAD of a site with a SiteAuth: a private site answers only a
  // reader with a session (else the sign-in page, 401 JSON for data URLs,
  // a robots.txt that disallows all, folio's own script and style).
  void ServeGuarded(const http::Request& req, http::Responder r, const PageTable* pages, const SiteAuth& auth);
  // The checks every page request passes first: GET or HEAD (else 405 with
  // Allow: `allow`), a path that percent-decodes into scratch_ (else 400).
  // False when it answered.
  bool DecodePagePath(const http::Request& req, http::Responder& r, std::string_view allow);
  // POST to any URL: a sign-in (form), or a sign-out at /_/signout; 405 on
  // a site without a SiteAuth. AdmitPost refuses those bodies unread (413).
  void ServePost(const http::Request& req, http::Responder r);
  void AdmitPost(const http::Request& req, http::AdmissionGate gate);
  // GET /_/search on a private site without a session: answered (true).
  bool GateSearch(const http::Request& req, http::Responder* r, bool data);
  // Whether `req` carries a valid session of `auth`'s site (its cookie
  // verifies: auth::VerifySession), and which (`out`, if not null: the
  // reader and the owner flag, e.g. for an owners-only page).
  bool HasSession(const http::Request& req, const SiteAuth& auth, auth::Session* out = nullptr) const;
  // The sign-in page of `site` (or the built-in one in its language) with
  // `status`, `error` (plain text) written into it, never cached, never
  // indexed.
  void SendSignin(http::Responder r, const PageTable* pages, std::string_view site, int status,
                  std::string_view error = {}, int64_t retry_after_s = 0);
  // The i18n.h table of `site`'s language (its 404 page's <html lang>).
  const site::Strings& WordsOf(std::string_view site) const;
  void StartSignin(const http::Request& req, http::Responder r, const SiteAuth& auth);
  void FinishSignin(uint64_t id, std::optional<bus::SiteReader> reader);
  void Signout(const http::Request& req, http::Responder r);
  struct PendingSignin {
    http::Responder responder;
    std::string host, location, site, key;  // copied: the request and the SiteAuth may go meanwhile
    int64_t ttl_s = 0;
    bool secure = false;
  };
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
  // `private_answer`: for a signed-in reader of a private site (never for a
  // shared cache).
  bool ServeAsset(const http::Request& req, http::Responder* r, bool private_answer = false);
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
    bool private_answer = false;  // for a signed-in reader: Cache-Control private
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
  // `private_answer`: RespondPrivate (a signed-in reader's answer).
  void SendPage(http::Responder r, std::shared_ptr<const Page> page, bool gzip, bool not_modified, bool head_only,
                bool private_answer = false);

  http::Loop loop_;
  http::Router router_;
  // Sign-in forms are the only bodies an edge reads (4 KiB each, at most
  // 256 at once per worker); declared before the server that uses it.
  http::BodyBudget body_budget_{1u << 20};
  std::unique_ptr<http::Server> server_;
  SiteTables sites_;
  std::shared_ptr<const Page> builtin_404_;
  // The built-in sign-in page per shipped language (site::AllStrings()
  // order), made when a site without its own first needs it.
  std::array<std::shared_ptr<const Page>, 8> builtin_signin_;
  Signins* signins_;
  std::unordered_map<uint64_t, std::unique_ptr<PendingSignin>> pending_signins_;
  uint64_t next_signin_id_ = 1;
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
