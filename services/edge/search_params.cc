#include "search_params.h"

#include "folio/core/text.h"

namespace folio::edge {
namespace {

// Query components: '+' is a space, then percent-decoding. Unlike
// http::Request::QueryParam a malformed escape is an error, not kept as sent.
bool DecodeComponent(std::string_view in, std::string* out) {
  std::string plus(in);
  for (char& c : plus) {
    if (c == '+') c = ' ';
  }
  return PercentDecode(plus, out);
}

}  // namespace

Status ParseSearchParams(std::string_view query, SearchParams* out) {
  *out = SearchParams{};
  std::string q, mode, k, fragment, format;
  bool seen_q = false, seen_mode = false, seen_k = false, seen_fragment = false, seen_format = false;
  bool bad_escape = false;
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    size_t eq = pair.find('=');
    std::string name;
    if (!DecodeComponent(pair.substr(0, eq), &name)) continue;  // not a name of ours
    std::string_view raw = eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1);
    struct Slot { std::string_view name; bool* seen; std::string* value; };
    for (Slot s : {Slot{"q", &seen_q, &q}, Slot{"mode", &seen_mode, &mode}, Slot{"k", &seen_k, &k},
                   Slot{"fragment", &seen_fragment, &fragment}, Slot{"format", &seen_format, &format}}) {
      if (name != s.name || *s.seen) continue;
      *s.seen = true;
      if (!DecodeComponent(raw, s.value)) bad_escape = true;
    }
  }
  if (format == "json") out->format = SearchFormat::kJson;
  else if (fragment == "1") out->format = SearchFormat::kFragment;
  if (bad_escape) return Status::Invalid("The search address has a malformed %-escape.");
  if (q.size() > bus::kMaxQueryBytes) {
    return Status::Invalid("The search text is too long (at most " + std::to_string(bus::kMaxQueryBytes) +
                           " bytes).");
  }
  if (!IsValidUtf8(q)) return Status::Invalid("The search text is not valid UTF-8.");
  out->q = std::string(TrimAsciiSpace(q));
  if (!format.empty() && format != "json" && format != "html") {
    return Status::Invalid("Unknown answer format; use html or json.");
  }
  if (!mode.empty() && !bus::ParseSearchMode(mode, &out->mode)) {
    return Status::Invalid("Unknown search mode; use hybrid, vector or text.");
  }
  if (!k.empty()) {
    int n = 0;
    bool digits = k.size() <= 3;
    for (char c : k) {
      digits = digits && c >= '0' && c <= '9';
      if (digits) n = n * 10 + (c - '0');
    }
    if (!digits || n < 1 || n > kMaxSearchResults) {
      return Status::Invalid("k must be a number from 1 to " + std::to_string(kMaxSearchResults) + ".");
    }
    out->k = n;
  }
  return Status::Ok();
}

}  // namespace folio::edge
