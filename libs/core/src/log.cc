#include "folio/core/log.h"

#include <unistd.h>

#include <atomic>

#include "folio/core/json.h"
#include "folio/core/time.h"

namespace folio::log {
namespace {
std::atomic<Level> g_level{Level::kInfo};
std::atomic<Format> g_format{Format::kText};

std::string_view LevelName(Level l) {
  switch (l) {
    case Level::kDebug: return "debug";
    case Level::kInfo: return "info";
    case Level::kWarn: return "warn";
    case Level::kError: return "error";
  }
  return "info";
}

bool NeedsQuotes(std::string_view v) {
  if (v.empty()) return true;
  for (char c : v) {
    if (c == ' ' || c == '"' || c == '=' || static_cast<unsigned char>(c) < 0x20) return true;
  }
  return false;
}
}  // namespace

void Configure(Level min_level, Format format) {
  g_level = min_level;
  g_format = format;
}

bool ParseFormat(std::string_view s, Format* out) {
  if (s == "text") { *out = Format::kText; return true; }
  if (s == "json") { *out = Format::kJson; return true; }
  return false;
}

void Write(Level level, std::string_view msg, std::initializer_list<Field> fields) {
  if (level < g_level.load(std::memory_order_relaxed)) return;
  std::string line;
  line.reserve(128);
  std::string ts = Iso8601Ms(NowUnixMs());
  if (g_format.load(std::memory_order_relaxed) == Format::kJson) {
    JsonWriter w;
    w.BeginObject().Key("ts").String(ts).Key("level").String(LevelName(level)).Key("msg").String(msg);
    for (const auto& [k, v] : fields) w.Key(k).String(v);
    w.EndObject();
    line = w.Take();
  } else {
    line = ts;
    line += ' ';
    for (char c : LevelName(level)) line += static_cast<char>(c - 32);
    line += ' ';
    line += msg;
    for (const auto& [k, v] : fields) {
      line += ' ';
      line += k;
      line += '=';
      if (NeedsQuotes(v)) AppendJsonString(v, &line); else line += v;
    }
  }
  line += '\n';
  ssize_t unused = ::write(2, line.data(), line.size());
  (void)unused;
}

}  // namespace folio::log
