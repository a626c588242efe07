// The vault's own Obsidian settings that change how its pages render, as
// `folio push` sends them ("settings" in the push body, wire.h): for now
// "Strict line breaks" (issue 13), read from DIR/.obsidian/app.json
// ("strictLineBreaks": true; absent or false is Obsidian's default, each
// newline inside a paragraph a line break) unless a flag overrides it.
// Pure functions over the file system; call from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace folio::cli {

inline constexpr std::string_view kObsidianAppJson = ".obsidian/app.json";
inline constexpr int64_t kMaxAppJsonBytes = 1 << 20;  // larger: ignored with a warning

// Settings a push carries; each unset one leaves the site's as it is.
struct VaultSettings {
  std::optional<bool> strict_line_breaks;
  bool empty() const { return !strict_line_breaks; }
};

// The settings of Obsidian's app.json text `json`. A file without the key
// gives none; "strictLineBreaks": false gives false (Obsidian's default,
// said explicitly). Never fails: invalid JSON, a top level that is not an
// object, or a key that is not a bool give no settings and *warning says why
// (e.g. "not valid JSON (...); its settings are ignored"); else *warning is "".
VaultSettings ParseAppJson(std::string_view json, std::string* warning);

// ParseAppJson of DIR/.obsidian/app.json. A missing file gives no settings
// and no warning; one over kMaxAppJsonBytes, unreadable, or leading outside
// DIR gives none and a warning.
VaultSettings ReadVaultSettings(const std::filesystem::path& dir, std::string* warning);

// The flags over the file: --strict-line-breaks (flag_strict = true) or
// --no-strict-line-breaks (false) wins; nullopt keeps `from_vault`'s.
VaultSettings ApplySettingsFlags(VaultSettings from_vault, std::optional<bool> flag_strict);

}  // namespace folio::cli
