// SiteWriter: the manifest delta (GET /api/v1/manifest?since=V).
#include <string>

#include "folio/core/json.h"
#include "site_writer.h"

namespace folio::ingest {
namespace {

void Entries(JsonWriter* w, std::string_view key, const std::vector<ManifestEntry>& entries) {
  w->Key(key).BeginArray();
  for (const ManifestEntry& e : entries) {
    w->BeginObject().Key("path").String(e.path).Key("sha256").String(e.sha256).Key("url").String(e.url).EndObject();
  }
  w->EndArray();
}

}  // namespace

Result<std::string> SiteWriter::ManifestDeltaJson(const PushLimits& limits, int64_t since) const {
  if (since > version_) {
    return Status::Invalid("since=" + std::to_string(since) + " is newer than the site's version " +
                           std::to_string(version_) + " (a restored server? fetch the full manifest)");
  }
  Result<std::string> epoch = store_->Epoch(options_.site);
  if (!epoch.ok()) return epoch.status();
  Result<ManifestDelta> delta = store_->ManifestSince(options_.site, since);
  if (!delta.ok()) return delta.status();
  JsonWriter w;
  w.BeginObject().Key("version").Int(version_).Key("site").String(options_.site).Key("epoch").String(*epoch);
  w.Key("since").Int(since);
  w.Key("limits").BeginObject();
  w.Key("max_note_bytes").Int(static_cast<int64_t>(limits.max_note_bytes));
  w.Key("max_attachment_bytes").Int(static_cast<int64_t>(limits.max_attachment_bytes));
  w.EndObject();
  w.Key("settings").BeginObject().Key("strict_line_breaks").Bool(strict_line_breaks_).EndObject();
  if (delta->too_old) {
    w.Key("too_old").Bool(true).EndObject();
    return w.Take();
  }
  Entries(&w, "notes", delta->notes);
  Entries(&w, "attachments", delta->attachments);
  w.Key("deleted").BeginArray();
  for (const std::string& p : delta->deleted) w.String(p);
  w.EndArray();
  w.Key("note_count").Int(static_cast<int64_t>(vault_.notes().size()));
  w.Key("attachment_count").Int(static_cast<int64_t>(vault_.attachments().size()));
  w.EndObject();
  return w.Take();
}

}  // namespace folio::ingest
