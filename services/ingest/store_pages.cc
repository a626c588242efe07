// Store (store.h): reads of the pages table (written by Apply,
// store_commit.cc).
#include "store.h"

namespace folio::ingest {

Result<std::string> Store::PageRecord(const std::string& site, const std::string& url) {
  auto v = SelectOne("SELECT record FROM pages WHERE site=? AND url=?", site, url);
  if (!v.ok()) return v.status();
  if (!*v) return Status::NotFound("no page " + url);
  return std::move(**v);
}

Result<std::vector<PageRow>> Store::AllPages(const std::string& site) {
  auto q = db_->Prepare("SELECT url, record FROM pages WHERE site=? ORDER BY url");
  if (!q.ok()) return q.status();
  q->Bind(1, site);
  std::vector<PageRow> out;
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back({std::string(q->Text(0)), std::string(q->Blob(1))});
  }
  return out;
}

Result<std::vector<std::string>> Store::PageUrls(const std::string& site, const std::string& after, int limit) {
  auto q = db_->Prepare("SELECT url FROM pages WHERE site=? AND url>? ORDER BY url LIMIT ?");
  if (!q.ok()) return q.status();
  q->Bind(1, site).Bind(2, after).Bind(3, int64_t{limit});
  std::vector<std::string> out;
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.emplace_back(q->Text(0));
  }
  return out;
}

}  // namespace folio::ingest
