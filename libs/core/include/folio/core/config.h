// Flags: the one config loader for every folio binary.
//
// Each option is a long flag (--listen HOST:PORT or --listen=HOST:PORT) that
// can also come from the environment as FOLIO_<NAME> (dashes become
// underscores, upper case: --log-format -> FOLIO_LOG_FORMAT). Precedence:
// command line, then environment, then the default given at Add().
// Positional arguments (e.g. a subcommand and its operands) are kept in order.
// Not thread-safe: configure once in main() before starting threads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"

namespace folio {

class Flags {
 public:
  explicit Flags(std::string program, std::string summary);

  // Declares a flag with its default and help text. A boolean flag takes no
  // value on the command line ("--dry-run"); env accepts 1/true/yes/0/false/no.
  void Add(std::string name, std::string default_value, std::string help);
  void AddBool(std::string name, bool default_value, std::string help);

  // Parses argv and the environment. On "--help" returns a kNotFound status
  // whose message is the usage text. Unknown flags are kInvalidArgument.
  Status Parse(int argc, const char* const* argv);

  // REQUIRES: the flag was declared with Add/AddBool.
  const std::string& Get(std::string_view name) const;
  bool GetBool(std::string_view name) const;
  // Parses the value as an integer; a malformed value is kInvalidArgument.
  Result<int64_t> GetInt(std::string_view name) const;
  // Parses sizes like "1048576", "64k", "32MiB", "1G".
  Result<int64_t> GetBytes(std::string_view name) const;
  // Parses durations like "30s", "500ms", "5m", "2h" (plain number = seconds), in ms.
  Result<int64_t> GetDurationMs(std::string_view name) const;

  const std::vector<std::string>& positional() const { return positional_; }
  std::string Usage() const;

 private:
  struct Flag {
    std::string value;
    std::string default_value;
    std::string help;
    bool is_bool = false;
  };
  std::string program_, summary_;
  std::map<std::string, Flag, std::less<>> flags_;
  std::vector<std::string> order_;
  std::vector<std::string> positional_;
};

// Splits "host:port" ("[::1]:8080", ":8080" means 0.0.0.0).
Status ParseHostPort(std::string_view s, std::string* host, int* port);

}  // namespace folio
