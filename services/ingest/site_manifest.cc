// SiteWriter: the manifest, full and since a version (GET /api/v1/manifest),
// as libs/ingest_api's Manifest; handlers encode it (ingest_api::EncodeManifest).
#include <string>

#include "site_writer.h"

namespace folio::ingest {
namespace {

std::vector<ingest_api::ManifestFile> Files(const std::vector<ManifestEntry>& entries) {
  std::vector<ingest_api::ManifestFile> out;
  out.reserve(entries.size());
  for (const ManifestEntry& e : entries) out.push_back({e.path, e.sha256, e.url, {}});
  return out;
}

}  // namespace

ingest_api::Manifest SiteWriter::FullManifest(const PushLimits& limits, std::string_view epoch) const {
  ingest_api::Manifest m;
  m.version = state_.version();
  m.site = options_.site;
  m.epoch = std::string(epoch);
  std::string_view site_url = options_.base_url;
  while (site_url.ends_with('/')) site_url.remove_suffix(1);
  m.site_url = std::string(site_url);
  m.max_note_bytes = static_cast<int64_t>(limits.max_note_bytes);
  m.max_attachment_bytes = static_cast<int64_t>(limits.max_attachment_bytes);
  m.strict_line_breaks = state_.strict_line_breaks();
  m.notes.reserve(state_.vault().notes().size());
  for (const auto& [path, n] : state_.vault().notes()) {
    ingest_api::ManifestFile& f = m.notes.emplace_back(ingest_api::ManifestFile{path, n.sha256, n.url, {}});
    if (auto held = state_.warnings().find(path); held != state_.warnings().end()) f.warnings = held->second;
  }
  m.attachments.reserve(state_.vault().attachments().size());
  for (const auto& [path, a] : state_.vault().attachments()) m.attachments.push_back({path, a.sha256, a.url, {}});
  return m;
}

Result<ingest_api::Manifest> SiteWriter::ManifestSince(const PushLimits& limits, int64_t since) const {
  if (since > state_.version()) {
    return Status::Invalid("since=" + std::to_string(since) + " is newer than the site's version " +
                           std::to_string(state_.version()) + " (a restored server? fetch the full manifest)");
  }
  Result<std::string> epoch = store_->Epoch(options_.site);
  if (!epoch.ok()) return epoch.status();
  Result<ManifestDelta> delta = store_->ManifestSince(options_.site, since);
  if (!delta.ok()) return delta.status();
  ingest_api::Manifest m;
  m.version = state_.version();
  m.site = options_.site;
  m.epoch = std::move(epoch).value();
  m.since = since;
  m.max_note_bytes = static_cast<int64_t>(limits.max_note_bytes);
  m.max_attachment_bytes = static_cast<int64_t>(limits.max_attachment_bytes);
  m.strict_line_breaks = state_.strict_line_breaks();
  m.too_old = delta->too_old;
  if (m.too_old) return m;
  m.notes = Files(delta->notes);
  m.attachments = Files(delta->attachments);
  m.deleted = std::move(delta->deleted);
  m.note_count = static_cast<int64_t>(state_.vault().notes().size());
  m.attachment_count = static_cast<int64_t>(state_.vault().attachments().size());
  return m;
}

}  // namespace folio::ingest
