#include "folio/core/config.h"

#include <cctype>
#include <charconv>
#include <cstdlib>

namespace folio {
namespace {

std::string EnvName(std::string_view flag) {
  std::string s = "FOLIO_";
  for (char c : flag) s += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

bool ParseBoolText(std::string_view v, bool* out) {
  if (v == "1" || v == "true" || v == "yes" || v == "on") { *out = true; return true; }
  if (v == "0" || v == "false" || v == "no" || v == "off" || v.empty()) { *out = false; return true; }
  return false;
}

Result<int64_t> ParseNumberWithSuffix(std::string_view name, std::string_view v,
                                      int64_t (*scale)(std::string_view)) {
  int64_t n = 0;
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || n < 0) {
    return Status::Invalid("--" + std::string(name) + ": '" + std::string(v) + "' is not a number");
  }
  std::string_view suffix(p, v.data() + v.size() - p);
  int64_t mul = scale(suffix);
  if (mul <= 0) {
    return Status::Invalid("--" + std::string(name) + ": unknown unit '" + std::string(suffix) + "'");
  }
  return n * mul;
}

int64_t ByteUnit(std::string_view s) {
  std::string u;
  for (char c : s) u += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (u.empty() || u == "b") return 1;
  if (u == "k" || u == "kb" || u == "kib") return 1024;
  if (u == "m" || u == "mb" || u == "mib") return 1024 * 1024;
  if (u == "g" || u == "gb" || u == "gib") return 1024LL * 1024 * 1024;
  return -1;
}

int64_t DurationUnit(std::string_view u) {
  if (u.empty() || u == "s") return 1000;
  if (u == "ms") return 1;
  if (u == "m") return 60 * 1000;
  if (u == "h") return 3600 * 1000;
  return -1;
}

}  // namespace

Flags::Flags(std::string program, std::string summary)
    : program_(std::move(program)), summary_(std::move(summary)) {}

void Flags::Add(std::string name, std::string default_value, std::string help) {
  order_.push_back(name);
  flags_[name] = Flag{default_value, default_value, std::move(help), false};
}

void Flags::AddBool(std::string name, bool default_value, std::string help) {
  order_.push_back(name);
  std::string v = default_value ? "true" : "false";
  flags_[name] = Flag{v, v, std::move(help), true};
}

Status Flags::Parse(int argc, const char* const* argv) {
  for (auto& [name, f] : flags_) {
    if (const char* env = std::getenv(EnvName(name).c_str())) f.value = env;
  }
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--help" || a == "-h") return Status(Code::kNotFound, Usage());
    if (a == "--") {
      for (++i; i < argc; ++i) positional_.emplace_back(argv[i]);
      break;
    }
    if (a.size() < 3 || a.substr(0, 2) != "--") {
      positional_.emplace_back(a);
      continue;
    }
    std::string_view body = a.substr(2);
    std::string_view name = body, value;
    bool has_value = false;
    if (auto eq = body.find('='); eq != std::string_view::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    auto it = flags_.find(name);
    if (it == flags_.end()) {
      return Status::Invalid("unknown flag --" + std::string(name) + " (see --help)");
    }
    Flag& f = it->second;
    if (f.is_bool) {
      bool b = true;
      if (has_value && !ParseBoolText(value, &b)) {
        return Status::Invalid("--" + std::string(name) + " takes true or false");
      }
      f.value = b ? "true" : "false";
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) return Status::Invalid("--" + std::string(name) + " needs a value");
      value = argv[++i];
    }
    f.value = std::string(value);
  }
  for (auto& [name, f] : flags_) {
    bool b;
    if (f.is_bool && !ParseBoolText(f.value, &b)) {
      return Status::Invalid(EnvName(name) + " must be true or false, not '" + f.value + "'");
    }
    if (f.is_bool) f.value = b ? "true" : "false";
  }
  return Status::Ok();
}

const std::string& Flags::Get(std::string_view name) const {
  auto it = flags_.find(name);
  if (it == flags_.end()) std::abort();  // programming error: undeclared flag
  return it->second.value;
}

bool Flags::GetBool(std::string_view name) const { return Get(name) == "true"; }

Result<int64_t> Flags::GetInt(std::string_view name) const {
  return ParseNumberWithSuffix(name, Get(name), [](std::string_view u) -> int64_t { return u.empty() ? 1 : -1; });
}

Result<int64_t> Flags::GetBytes(std::string_view name) const {
  return ParseNumberWithSuffix(name, Get(name), ByteUnit);
}

Result<int64_t> Flags::GetDurationMs(std::string_view name) const {
  return ParseNumberWithSuffix(name, Get(name), DurationUnit);
}

std::string Flags::Usage() const {
  std::string u = "usage: " + program_ + " [flags]\n" + summary_ + "\n\nflags (each also FOLIO_<NAME> in the environment):\n";
  for (const auto& name : order_) {
    const Flag& f = flags_.find(name)->second;
    u += "  --" + name + (f.is_bool ? "" : " VALUE");
    u += "\n      " + f.help + " (default: " + (f.default_value.empty() ? "\"\"" : f.default_value) + ", env " + EnvName(name) + ")\n";
  }
  return u;
}

Status ParseHostPort(std::string_view s, std::string* host, int* port) {
  auto colon = s.rfind(':');
  if (colon == std::string_view::npos) return Status::Invalid("'" + std::string(s) + "' is not HOST:PORT");
  std::string_view h = s.substr(0, colon), p = s.substr(colon + 1);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  int v = 0;
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), v);
  if (ec != std::errc() || end != p.data() + p.size() || v < 0 || v > 65535) {
    return Status::Invalid("'" + std::string(s) + "': port must be 0..65535");
  }
  *host = h.empty() ? "0.0.0.0" : std::string(h);
  *port = v;
  return Status::Ok();
}

}  // namespace folio
