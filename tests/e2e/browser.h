// Browser: headless Chromium driven over the DevTools protocol, for
// end-to-end tests. No node, no WebSocket: Chromium is started with
// --remote-debugging-pipe and reads NUL-terminated JSON commands on fd 3 and
// writes NUL-terminated JSON replies and events on fd 4 (simdjson parses
// them). One Browser is one Chromium process with a fresh profile and one
// tab; Load() navigates that tab, so many pages share one ~1 s start.
//
// What a Load() observes, and why it is reliable:
//  - console errors: Runtime.consoleAPICalled of type "error"/"assert",
//    Runtime.exceptionThrown (uncaught exceptions, also in inline handlers)
//    and Log.entryAdded of level "error" (failed loads, CSP violations,
//    blocked navigations). `--enable-logging=stderr` was tried first and is
//    not enough: it prints every console level as "INFO:CONSOLE" and never
//    reports failed resource loads.
//  - script execution: every console message (any level), every dialog
//    (alert/confirm/prompt, dismissed so the page never blocks), navigations
//    of the main frame after load, and a probe expression evaluated in the
//    page after it settled.
//  - colour scheme: Emulation.setEmulatedMedia(prefers-color-scheme) per
//    load, so light and dark pages come from the same process.
//  - screenshots: Page.captureScreenshot (PNG) at the emulated viewport
//    (Emulation.setDeviceMetricsOverride).
//
// Threading: one thread. Errors: methods return a Status whose message
// includes the tail of Chromium's own log.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/status.h"
#include "folio/testing/testing.h"

namespace folio::e2e {

inline constexpr const char* kChromium = "/usr/bin/chromium";

// One thing the page reported.
struct ConsoleEntry {
  std::string source;  // "console.error", "console.log", ..., "exception", "log.network", "log.security", ...
  std::string level;   // "error", "warning", "info", ...
  std::string text;
  std::string url;     // resource or script URL if known
};

struct Visit {
  std::string url;
  bool dark = false;  // prefers-color-scheme: dark
  int width = 1200;
  int height = 1600;
  double scale = 1;     // device scale factor
  bool mobile = false;  // mobile viewport emulation (phone screenshots)
  std::string screenshot;  // PNG written here if non-empty
  // A JavaScript expression evaluated in the page once it settled; its
  // value, converted to a string, goes to PageResult::probe.
  std::string probe;
  // How long to keep listening after the load event (favicon request, meta
  // refresh, timers, late console messages).
  int settle_ms = 300;
};

struct PageResult {
  int status = 0;                     // HTTP status of the main document
  std::string final_url;              // main frame URL after settling
  std::vector<ConsoleEntry> messages;  // everything, any level
  std::vector<std::string> dialogs;   // alert/confirm/prompt/beforeunload texts
  std::vector<std::string> navigations;  // main-frame navigations started after the load event
  std::string probe;

  // Entries of level "error" (console.error, console.assert, uncaught
  // exceptions, failed loads...).
  std::vector<ConsoleEntry> Errors() const;
  // Human-readable dump of messages, dialogs and navigations for failures.
  std::string Describe() const;
};

class Browser {
 public:
  // Starts Chromium (fresh --user-data-dir, network-free flags) and opens a
  // tab. Check status(): fails if `chromium` is not executable.
  explicit Browser(std::string chromium = kChromium);
  ~Browser();  // closes Chromium (Browser.close, then SIGKILL to its process group)
  Browser(const Browser&) = delete;
  Browser& operator=(const Browser&) = delete;

  const Status& status() const { return status_; }

  // Navigates the tab to v.url with v's viewport and colour scheme, waits for
  // the load event plus a settle period (late events: favicon, refresh,
  // timers), evaluates v.probe, saves the screenshot. Messages that arrive
  // during this call belong to *out.
  Status Load(const Visit& v, PageResult* out);

  // Chromium's stderr, without the D-Bus noise of a container.
  std::string Log() const;

 private:
  // Sends a command and waits for its reply; *result gets the reply's
  // "result" object as JSON text. Events read meanwhile are dispatched.
  Status Call(const std::string& method, const std::string& params_json, std::string* result = nullptr,
              bool in_session = true, int timeout_ms = 15000);
  // Reads and dispatches messages until `done()` or the deadline.
  Status Pump(int timeout_ms, const std::function<bool()>& done);
  void Dispatch(std::string_view message);
  Status Failed(const std::string& what) const;

  testing::TempDir profile_;
  std::string log_path_;
  pid_t pid_ = -1;
  int to_chrome_ = -1;    // our end of Chromium's fd 3
  int from_chrome_ = -1;  // our end of Chromium's fd 4
  std::string inbuf_;
  int64_t next_id_ = 1;
  std::string target_;   // the tab's target id (= its main frame id)
  std::string session_;
  Status status_;

  // Per-Load state filled by Dispatch.
  struct Pending;
  Pending* pending_ = nullptr;
  int64_t reply_id_ = 0;
  bool reply_seen_ = false;
  std::string reply_;
  std::string reply_error_;
};

}  // namespace folio::e2e
