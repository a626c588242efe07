// GET /api/v1/manifest and GET /api/v1/manifest?since=V: what a site holds
// (or what changed after version V), with the one encoder folio-ingest
// answers with and the one decoder the CLI reads with. The Obsidian plugin
// (clients/obsidian/src/api.ts) checks the same fixtures
// (tests/fixtures/api/manifest*.json). Pure; any thread.
//
// Wire shape (compact JSON; readers skip unknown keys):
//   full   {"version":N,"site":NAME,("epoch":EPOCH,)"site_url":URL,
//           "limits":{"max_note_bytes":N,"max_attachment_bytes":N},
//           "settings":{"strict_line_breaks":B},
//           "notes":[{"path","sha256","url",("warnings":[..])}],
//           "attachments":[{"path","sha256","url"}],
//           ("missing_attachments":["path"])}
//   delta  {"version":N,"site":NAME,"epoch":EPOCH,"since":V,"limits":{..},
//           "settings":{..},"notes":[..],"attachments":[..],"deleted":["path"],
//           "note_count":N,"attachment_count":N,("missing_attachments":[..])}
//          or, when the server no longer knows every deletion since V,
//          {"version","site","epoch","since","limits","settings","too_old":true,
//           ("missing_attachments":[..])} (the client fetches the full one).
// "epoch" (the site's history, new after a restore) is left out of a full
// manifest when the server has none; "warnings" when a note has none;
// "missing_attachments" (attachments whose bytes storage cannot serve, so
// a client sends them again; issue 23) when the server has no storage or
// could not check. limits are what a push accepts, so a client can leave
// out (and name) the files over them.
// Errors: ?since= that is not a version, or newer than the site's:
// kInvalidArgument (400, error.h). Versioning: keys are only added; a
// reader defaults what an older server leaves out (limits 0, counts -1).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"

namespace folio::ingest_api {

struct ManifestFile {
  std::string path, sha256, url;
  std::vector<std::string> warnings;  // a full manifest's notes only; empty: left out
};

struct Manifest {
  int64_t version = 0;
  std::string site;                      // "" from servers that do not say
  std::string epoch;                     // "" from servers that do not say
  std::optional<std::string> site_url;   // full manifests: the site's public base URL ("" when unset)
  std::optional<int64_t> since;          // set: a delta since this version
  int64_t max_note_bytes = 0;            // "limits"; 0 when not said (older servers)
  int64_t max_attachment_bytes = 0;
  std::optional<bool> strict_line_breaks;  // "settings"; unset when not said
  bool too_old = false;                  // a delta that cannot list every deletion
  bool has_notes = false;                // decoded: "notes" was present
  std::vector<ManifestFile> notes;
  std::vector<ManifestFile> attachments;
  std::vector<std::string> deleted;      // a delta's deletions (notes and attachments)
  int64_t note_count = -1;               // a delta's: what the server holds in all; -1: not said
  int64_t attachment_count = -1;
  std::optional<std::vector<std::string>> missing_attachments;
};

// The bytes folio-ingest sends: a delta when m.since is set, else a full
// manifest. REQUIRES: m.max_* >= 0.
std::string EncodeManifest(const Manifest& m);
// kInvalidArgument ("manifest: ...") when it is not a JSON object, a known
// key has the wrong type, "notes" is missing (except from a too_old delta),
// a limit is negative, or a note or attachment has no path.
Result<Manifest> DecodeManifest(std::string_view json);

}  // namespace folio::ingest_api
