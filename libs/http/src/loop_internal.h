// Loop::Impl: the libuv loop behind folio::http::Loop, for this lib's own use
// (Server reaches uv_loop_t and the cached Date header through it).
// Loop thread only, except the members marked GUARDED_BY(mu).
#pragma once

#include <uv.h>

#include <atomic>
#include <cstdint>
#include <ctime>
#include <functional>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "folio/http/loop.h"

namespace folio::http {

// Something that owns handles on the loop and must close them, through its
// own close path, when the loop stops (a Server and its connections).
class LoopCloser {
 public:
  virtual void CloseForStop() = 0;

 protected:
  ~LoopCloser() = default;
};

struct Loop::Impl {
  uv_loop_t uv;
  uv_async_t async;  // wakes the loop for Post() and Stop()

  std::mutex mu;
  std::vector<std::function<void()>> tasks;  // GUARDED_BY(mu)
  bool closed = false;                       // GUARDED_BY(mu): async is closed
  std::atomic<bool> stop_requested{false};

  struct Timer;
  uint64_t next_timer_id = 1;
  std::unordered_map<uint64_t, Timer*> timers;
  std::vector<uv_signal_t*> signals;
  std::vector<LoopCloser*> closers;
  bool handles_closed = false;

  // "Date: <IMF-fixdate>\r\n", refreshed at most once per second.
  char date_line[64] = {};
  size_t date_line_len = 0;
  time_t date_second = 0;

  std::string_view DateLine();
  void AddCloser(LoopCloser* c) { closers.push_back(c); }
  void RemoveCloser(LoopCloser* c);
  // Closes every handle (closers first), then runs the loop until they are gone.
  void CloseAll();
};

}  // namespace folio::http
