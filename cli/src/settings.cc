#include "settings.h"

#include <simdjson.h>

#include "folio/core/status.h"
#include "vault.h"

namespace folio::cli {

// The DOM parser: the one the CLI's simdjson picks a fast kernel for at run
// time (see libs/ingest_api/src/push_request.cc); app.json is small anyway.
VaultSettings ParseAppJson(std::string_view json, std::string* warning) {
  warning->clear();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto e = parser.parse(json.data(), json.size()).get(doc)) {
    *warning = std::string("not valid JSON (") + simdjson::error_message(e) + "); its settings are ignored";
    return {};
  }
  simdjson::dom::object root;
  if (doc.get_object().get(root)) {
    *warning = "not a JSON object; its settings are ignored";
    return {};
  }
  VaultSettings out;
  simdjson::dom::element v;
  if (root["strictLineBreaks"].get(v) == simdjson::SUCCESS) {
    bool strict = false;
    if (v.get_bool().get(strict)) {
      *warning = "\"strictLineBreaks\" is not true or false; ignored";
      return {};
    }
    out.strict_line_breaks = strict;
  }
  return out;
}

VaultSettings ReadVaultSettings(const std::filesystem::path& dir, std::string* warning) {
  warning->clear();
  Result<std::string> text = ReadAttachment(dir, kObsidianAppJson, kMaxAppJsonBytes);
  if (text.status().code() == Code::kNotFound) return {};
  if (!text.ok()) {
    *warning = text.status().message() + "; its settings are ignored";
    return {};
  }
  return ParseAppJson(*text, warning);
}

VaultSettings ApplySettingsFlags(VaultSettings from_vault, std::optional<bool> flag_strict) {
  if (flag_strict) from_vault.strict_line_breaks = flag_strict;
  return from_vault;
}

}  // namespace folio::cli
