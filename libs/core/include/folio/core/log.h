// Logging: one line per event, as text or JSON, to stderr.
//
//   log::Info("push committed", {{"site", site}, {"notes", std::to_string(n)}});
//   text: 2026-11-30T21:40:00.123Z INFO push committed site=docs notes=12
//   json: {"ts":"...","level":"info","msg":"push committed","site":"docs","notes":"12"}
//
// Thread-safe: each line is formatted then written with one write(2).
// Not for hot paths: bump a metric there instead.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

namespace folio::log {

enum class Level { kDebug, kInfo, kWarn, kError };
enum class Format { kText, kJson };

using Field = std::pair<std::string_view, std::string_view>;

// Defaults: kInfo, kText. Call once at startup (main thread).
void Configure(Level min_level, Format format);
// "text" or "json"; anything else is rejected with false.
bool ParseFormat(std::string_view s, Format* out);

void Write(Level level, std::string_view msg, std::initializer_list<Field> fields = {});
inline void Debug(std::string_view m, std::initializer_list<Field> f = {}) { Write(Level::kDebug, m, f); }
inline void Info(std::string_view m, std::initializer_list<Field> f = {}) { Write(Level::kInfo, m, f); }
inline void Warn(std::string_view m, std::initializer_list<Field> f = {}) { Write(Level::kWarn, m, f); }
inline void Error(std::string_view m, std::initializer_list<Field> f = {}) { Write(Level::kError, m, f); }

}  // namespace folio::log
