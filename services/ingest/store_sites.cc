// Store (store.h): the sites table. A site's row and its outbox messages
// (the site record's KV put or delete) commit together.
#include <algorithm>

#include "folio/sqlite/transaction.h"
#include "store.h"
#include "store_internal.h"

namespace folio::ingest {
namespace {

using store_internal::Join;
using store_internal::Split;

constexpr const char* kSiteColumns = "name, title, hosts, token_sha256, created_ms";

SiteRow ReadSiteRow(const sqlite::Stmt& q) {
  return SiteRow{std::string(q.Text(0)), std::string(q.Text(1)), Split(q.Text(2)), std::string(q.Text(3)), q.Int(4)};
}

// kConflict if row's name, or one of its hosts, is already one of sites'.
Status CheckNewSite(const std::vector<SiteRow>& sites, const SiteRow& row) {
  for (const SiteRow& other : sites) {
    if (other.name == row.name) {
      return Status(Code::kConflict, "site \"" + row.name + "\" already exists (see `folio-ingest site list`)");
    }
    for (const std::string& h : row.hosts) {
      if (std::find(other.hosts.begin(), other.hosts.end(), h) != other.hosts.end()) {
        return Status(Code::kConflict, "host " + h + " is already served by site \"" + other.name + "\"");
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status Store::AddSite(const SiteRow& row, std::vector<OutboxMsg> outbox) {
  auto tx = sqlite::Transaction::Begin(db_.get());
  if (!tx.ok()) return tx.status();
  // Checked inside the write transaction, so two concurrent `site add`s
  // cannot both claim a host.
  auto sites = ListSites();
  if (!sites.ok()) return sites.status();
  if (Status s = CheckNewSite(*sites, row); !s.ok()) return s;
  auto q = db_->Prepare("INSERT INTO sites(name,title,hosts,token_sha256,created_ms) VALUES(?,?,?,?,?)");
  if (!q.ok()) return q.status();
  Status s = q->Bind(1, row.name).Bind(2, row.title).Bind(3, Join(row.hosts)).Bind(4, row.token_sha256)
                 .Bind(5, row.created_ms).Run();
  if (!s.ok()) return s;
  if (Status o = InsertOutbox(outbox); !o.ok()) return o;
  return tx->Commit();
}

Status Store::RemoveSite(const std::string& name, std::vector<OutboxMsg> outbox) {
  auto tx = sqlite::Transaction::Begin(db_.get());
  if (!tx.ok()) return tx.status();
  auto q = db_->Prepare("DELETE FROM sites WHERE name=?");
  if (!q.ok()) return q.status();
  if (Status s = q->Bind(1, name).Run(); !s.ok()) return s;
  if (db_->Changes() == 0) return Status::NotFound("no site \"" + name + "\" (see `folio-ingest site list`)");
  // Its readers and key go with it: a site added again under the name starts public.
  if (Status d = DeleteSitePrefs(name); !d.ok()) return d;
  if (Status o = InsertOutbox(outbox); !o.ok()) return o;
  return tx->Commit();
}

Result<std::vector<SiteRow>> Store::ListSites() {
  auto q = db_->Prepare(std::string("SELECT ") + kSiteColumns + " FROM sites ORDER BY name");
  if (!q.ok()) return q.status();
  std::vector<SiteRow> out;
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back(ReadSiteRow(*q));
  }
  return out;
}

Result<SiteRow> Store::FindSiteByTokenHash(const std::string& token_sha256) {
  auto q = db_->Prepare(std::string("SELECT ") + kSiteColumns + " FROM sites WHERE token_sha256=?");
  if (!q.ok()) return q.status();
  q->Bind(1, token_sha256);
  auto row = q->Step();
  if (!row.ok()) return row.status();
  if (!*row) return Status::NotFound("no site has this token");
  return ReadSiteRow(*q);
}

}  // namespace folio::ingest
