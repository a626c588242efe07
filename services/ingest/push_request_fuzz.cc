// libFuzzer target: bytes -> DecodePushRequest (the body of POST
// /api/v1/push) with small limits, so the fuzzer reaches every limit.
// Checks what folio/ingest_api/push.h promises whatever the body:
//   - refused: the status is kInvalidArgument or kTooLarge with a message;
//   - accepted: every path is a valid vault path, notes end in ".md" and
//     nothing else does, note content is valid UTF-8 and within the limit,
//     attachments are within the limit, no path appears twice, and the
//     count stays within max_notes.
// Seeds: tests/fuzz/corpus/ingest_push_fuzz; build and run: tests/fuzz/README.md.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>

#include "folio/core/text.h"
#include "folio/ingest_api/push.h"

namespace {

void Require(bool ok, const char* what, std::string_view detail = "") {
  if (ok) return;
  std::fprintf(stderr, "push_request_fuzz: %s: %.*s\n", what, static_cast<int>(std::min<size_t>(detail.size(), 400)),
               detail.data());
  std::abort();
}

bool IsNote(std::string_view path) { return folio::EndsWith(folio::AsciiLower(path), ".md"); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  folio::ingest_api::PushLimits limits;
  limits.max_notes = 5;
  limits.max_note_bytes = 64;
  limits.max_attachment_bytes = 48;
  folio::ingest_api::PushRequest req;
  folio::ingest_api::PushError err;
  if (!folio::ingest_api::DecodePushRequest(body, limits, &req, &err)) {
    folio::Code code = err.status.code();
    Require(code == folio::Code::kInvalidArgument || code == folio::Code::kTooLarge, "unexpected error code",
            err.status.message());
    Require(!err.status.message().empty(), "error without a message");
    return 0;
  }
  std::set<std::string> seen;
  auto check_path = [&](const std::string& p) {
    Require(folio::CheckVaultPath(p).ok(), "accepted an invalid path", p);
    Require(seen.insert(p).second, "accepted a path twice", p);
  };
  for (const auto& n : req.notes) {
    check_path(n.path);
    Require(IsNote(n.path), "note without .md", n.path);
    Require(n.content.size() <= limits.max_note_bytes, "note over the limit", n.path);
    Require(folio::IsValidUtf8(n.content), "note content is not valid UTF-8", n.path);
  }
  for (const auto& a : req.attachments) {
    check_path(a.path);
    Require(!IsNote(a.path), "attachment with .md", a.path);
    Require(a.data.size() <= limits.max_attachment_bytes, "attachment over the limit", a.path);
  }
  for (const auto& d : req.deletes) {
    check_path(d);
    Require(IsNote(d), "note deletion without .md", d);
  }
  for (const auto& d : req.delete_attachments) {
    check_path(d);
    Require(!IsNote(d), "attachment deletion with .md", d);
  }
  Require(req.notes.size() <= limits.max_notes, "more notes than max_notes");
  Require(req.attachments.size() + req.deletes.size() + req.delete_attachments.size() + req.notes.size() <=
              limits.max_notes,
          "more entries than max_notes");
  return 0;
}
