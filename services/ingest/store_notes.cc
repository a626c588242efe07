// Store (store.h): reads of the vault's tables: notes, attachments, the
// related lists, the site's version, layout and settings. Push writes them
// in Apply (store_commit.cc).
#include "store.h"
#include "store_internal.h"

namespace folio::ingest {

using store_internal::DecodeRelatedList;
using store_internal::kPublishedPrivate;
using store_internal::Split;

Result<int64_t> Store::Version(const std::string& site) {
  auto q = db_->Prepare("SELECT version FROM site_version WHERE site=?");
  if (!q.ok()) return q.status();
  q->Bind(1, site);
  auto row = q->Step();
  if (!row.ok()) return row.status();
  return *row ? q->Int(0) : int64_t{0};
}

Status Store::LoadVault(const std::string& site, site::Vault* vault) {
  auto q = db_->Prepare(
      "SELECT path, url, sha256, title, targets, aliases, updated_ms, version, embeds, tags, permalink, published, "
      "anchors, created_ms, date_ms, modified_ms "
      "FROM notes WHERE site=?");
  if (!q.ok()) return q.status();
  q->Bind(1, site);
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    site::NoteMeta m;
    m.path = q->Text(0);
    m.url = q->Text(1);
    m.sha256 = q->Text(2);
    m.title = q->Text(3);
    m.targets = Split(q->Text(4));
    m.aliases = Split(q->Text(5));
    m.updated_ms = q->Int(6);
    m.version = q->Int(7);
    m.embeds = Split(q->Text(8));
    m.tags = Split(q->Text(9));
    m.permalink = q->Text(10);
    m.published = q->Int(11) != 0;
    m.private_note = q->Int(11) == kPublishedPrivate;
    m.anchors = Split(q->Text(12));
    m.created_ms = q->Int(13);
    m.date_ms = q->Int(14);
    m.modified_ms = q->Int(15);
    vault->Load(std::move(m));
  }
  vault->Rebuild();
  return Status::Ok();
}

Result<std::string> Store::NoteContent(const std::string& site, const std::string& path) {
  auto v = SelectOne("SELECT content FROM notes WHERE site=? AND path=?", site, path);
  if (!v.ok()) return v.status();
  if (!*v) return Status::NotFound("no note " + path);
  return std::move(**v);
}

Result<std::string> Store::LayoutFingerprint(const std::string& site) {
  auto q = db_->Prepare("SELECT fingerprint FROM site_layout WHERE site=?");
  if (!q.ok()) return q.status();
  q->Bind(1, site);
  auto row = q->Step();
  if (!row.ok()) return row.status();
  return *row ? std::string(q->Text(0)) : std::string();
}

Result<std::optional<bool>> Store::StrictLineBreaks(const std::string& site) {
  auto q = db_->Prepare("SELECT strict_line_breaks FROM site_settings WHERE site=?");
  if (!q.ok()) return q.status();
  q->Bind(1, site);
  auto row = q->Step();
  if (!row.ok()) return row.status();
  return *row ? std::optional<bool>(q->Int(0) != 0) : std::nullopt;
}

Result<std::map<std::string, std::vector<std::string>>> Store::LoadWarnings(const std::string& site) {
  auto q = db_->Prepare("SELECT path, warnings FROM notes WHERE site=? AND warnings != ''");
  if (!q.ok()) return q.status();
  q->Bind(1, site);
  std::map<std::string, std::vector<std::string>> out;
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.emplace(q->Text(0), Split(q->Text(1)));
  }
  return out;
}

Result<std::vector<bus::RelatedList>> Store::LoadRelated(const std::string& site) {
  auto q = db_->Prepare("SELECT path, list FROM related WHERE site=? ORDER BY path");
  if (!q.ok()) return q.status();
  q->Bind(1, site);
  std::vector<bus::RelatedList> out;
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back({std::string(q->Text(0)), DecodeRelatedList(q->Text(1))});
  }
  return out;
}

Status Store::LoadAttachments(const std::string& site, site::Vault* vault) {
  auto q = db_->Prepare("SELECT path, sha256, url FROM attachments WHERE site=?");
  if (!q.ok()) return q.status();
  q->Bind(1, site);
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    vault->LoadAttachment({std::string(q->Text(0)), std::string(q->Text(1)), std::string(q->Text(2))});
  }
  return Status::Ok();
}

Status Store::ForEachAttachmentHash(const std::function<void(std::string_view)>& fn) {
  auto q = db_->Prepare("SELECT DISTINCT sha256 FROM attachments");
  if (!q.ok()) return q.status();
  for (;;) {
    auto row = q->Step();
    if (!row.ok()) return row.status();
    if (!*row) return Status::Ok();
    fn(q->Text(0));
  }
}

}  // namespace folio::ingest
