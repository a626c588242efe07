// The bundled mermaid: folio ships mermaid.min.js (web/mermaid, installed
// next to folio-ingest), so pages with a diagram work offline. The file is
// ~3.5 MB, over the bus's message limit for a page record
// (kMaxPublishedPage), so at start-up ingest puts it into folio-storage
// (HEAD first: content addressed, so a restart sends nothing) and every site
// publishes a small page record at BundledMermaidUrl(sha256) whose body is
// that blob (bus::PageRecord::body_blob); every edge streams it from storage
// with the record's JavaScript type and immutable caching. Pages load it
// same-origin (script-src 'self') with its Subresource Integrity. Without
// --storage, without the file, or when storage cannot take it, pages load
// the pinned CDN build as before, and the log says why, once.
//
// Call from main() only, before the sites start (it blocks on storage).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "folio/core/status.h"
#include "blob_upload.h"
#include "site_options.h"
#include "storage_client.h"

namespace folio::ingest {

// --mermaid-url's default: the bundled file when it can be served, else the CDN.
inline constexpr std::string_view kMermaidAuto = "auto";
// Larger is not a mermaid build (11.x is ~3.5 MB); it is refused.
inline constexpr size_t kMaxBundledMermaid = 16u << 20;

// "<directory of this process's executable>/<name>"; just `name` if the
// directory cannot be read (/proc/self/exe).
std::string BesideExecutable(std::string_view name);

// "/assets/<first 16 hex of sha256>/mermaid.min.js". REQUIRES: 64 hex digits.
std::string BundledMermaidUrl(std::string_view sha256);

// The bytes of `path`: kNotFound if it does not exist, kTooLarge over
// kMaxBundledMermaid, kInvalidArgument if empty, kUnavailable if unreadable.
Result<std::string> ReadBundledMermaid(const std::string& path);

// With `file` non-empty (--mermaid-url auto) and storage configured: uploads
// the file and points site->mermaid_url, mermaid_integrity ("sha256-...")
// and mermaid_blob at it; the blob is held in `in_flight` (so the blob
// collector leaves it) for as long as *hold lives. Otherwise, or on any
// failure, leaves *site as it is (the CDN build) and logs why. Retries an
// unreachable storage a few times (it may be starting too).
void UseBundledMermaid(const std::string& file, SiteOptions* site, BlobsInFlight* in_flight,
                       std::shared_ptr<void>* hold);

}  // namespace folio::ingest
