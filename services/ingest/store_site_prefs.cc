// Store (store.h): the site_prefs and site_readers tables (issue 29). One
// row of site_prefs per site that has settings (a site without one has
// SitePrefs' defaults); one row of site_readers per reader, with the
// password's Argon2id hash only.
#include <map>

#include "folio/sqlite/transaction.h"
#include "store.h"

namespace folio::ingest {
namespace {

constexpr const char* kPrefsColumns =
    "site, private, lang, feed, analytics, analytics_id, analytics_url, session_ttl_s, session_key";

SitePrefs ReadPrefs(const sqlite::Stmt& q) {
  SitePrefs p;
  p.private_site = q.Int(1) != 0;
  p.lang = std::string(q.Text(2));
  p.feed = std::string(q.Text(3));
  p.analytics = std::string(q.Text(4));
  p.analytics_id = std::string(q.Text(5));
  p.analytics_url = std::string(q.Text(6));
  p.session_ttl_s = q.Int(7);
  p.session_key = std::string(q.Text(8));
  return p;
}

}  // namespace

Status Store::MigrateSitePrefs() {
  return db_->Exec(R"sql(
CREATE TABLE IF NOT EXISTS site_prefs(
  site TEXT PRIMARY KEY, private INTEGER NOT NULL DEFAULT 0, lang TEXT NOT NULL DEFAULT 'en',
  feed TEXT NOT NULL DEFAULT 'content', analytics TEXT NOT NULL DEFAULT '',
  analytics_id TEXT NOT NULL DEFAULT '', analytics_url TEXT NOT NULL DEFAULT '',
  session_ttl_s INTEGER NOT NULL DEFAULT 604800, session_key TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS site_readers(
  site TEXT NOT NULL, name TEXT NOT NULL, hash TEXT NOT NULL, owner INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY(site, name));
)sql");
}

Result<std::map<std::string, SitePrefs>> Store::AllSitePrefs() {
  std::map<std::string, SitePrefs> out;
  auto q = db_->Prepare(std::string("SELECT ") + kPrefsColumns + " FROM site_prefs");
  if (!q.ok()) return q.status();
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out[std::string(q->Text(0))] = ReadPrefs(*q);
  }
  auto r = db_->Prepare("SELECT site, name, hash, owner FROM site_readers ORDER BY site, name");
  if (!r.ok()) return r.status();
  for (;;) {
    auto row = r->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out[std::string(r->Text(0))].readers.push_back(
        {std::string(r->Text(1)), std::string(r->Text(2)), r->Int(3) != 0});
  }
  return out;
}

Result<SitePrefs> Store::LoadSitePrefs(const std::string& site) {
  auto all = AllSitePrefs();
  if (!all.ok()) return all.status();
  auto it = all->find(site);
  return it == all->end() ? SitePrefs() : std::move(it->second);
}

Status Store::UpdateSitePrefs(const std::string& site, const std::function<Status(SitePrefs*)>& edit) {
  auto tx = sqlite::Transaction::Begin(db_.get());
  if (!tx.ok()) return tx.status();
  // Read inside the write transaction: two concurrent commands cannot lose each other's change.
  auto prefs = LoadSitePrefs(site);
  if (!prefs.ok()) return prefs.status();
  if (Status s = edit(&*prefs); !s.ok()) return s;  // rolls back: nothing changes
  const SitePrefs& p = *prefs;
  auto q = db_->Prepare(std::string("INSERT OR REPLACE INTO site_prefs(") + kPrefsColumns +
                        ") VALUES(?,?,?,?,?,?,?,?,?)");
  if (!q.ok()) return q.status();
  Status s = q->Bind(1, site).Bind(2, int64_t{p.private_site}).Bind(3, p.lang).Bind(4, p.feed).Bind(5, p.analytics)
                 .Bind(6, p.analytics_id).Bind(7, p.analytics_url).Bind(8, p.session_ttl_s).Bind(9, p.session_key)
                 .Run();
  if (!s.ok()) return s;
  auto del = db_->Prepare("DELETE FROM site_readers WHERE site=?");
  if (!del.ok()) return del.status();
  if (Status d = del->Bind(1, site).Run(); !d.ok()) return d;
  for (const bus::SiteReader& r : p.readers) {
    auto ins = db_->Prepare("INSERT INTO site_readers(site,name,hash,owner) VALUES(?,?,?,?)");
    if (!ins.ok()) return ins.status();
    if (Status i = ins->Bind(1, site).Bind(2, r.name).Bind(3, r.hash).Bind(4, int64_t{r.owner}).Run(); !i.ok()) {
      return i;
    }
  }
  return tx->Commit();
}

Status Store::DeleteSitePrefs(const std::string& site) {
  for (const char* sql : {"DELETE FROM site_prefs WHERE site=?", "DELETE FROM site_readers WHERE site=?"}) {
    auto q = db_->Prepare(sql);
    if (!q.ok()) return q.status();
    if (Status s = q->Bind(1, site).Run(); !s.ok()) return s;
  }
  return Status::Ok();
}

}  // namespace folio::ingest
