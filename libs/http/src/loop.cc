#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "folio/core/time.h"
#include "loop_internal.h"

namespace folio::http {

struct Loop::Impl::Timer {
  uv_timer_t handle;
  Loop::Impl* loop;
  uint64_t id;
  bool repeat;
  std::function<void()> fn;
};

namespace {

void OnAsync(uv_async_t* a) {
  auto* impl = static_cast<Loop::Impl*>(a->data);
  std::vector<std::function<void()>> batch;
  {
    std::lock_guard<std::mutex> lock(impl->mu);
    batch.swap(impl->tasks);
  }
  for (auto& fn : batch) fn();
  if (impl->stop_requested.load()) uv_stop(&impl->uv);
}

void OnTimerClosed(uv_handle_t* h) { delete static_cast<Loop::Impl::Timer*>(h->data); }

void CloseTimer(Loop::Impl::Timer* t) {
  t->loop->timers.erase(t->id);
  uv_timer_stop(&t->handle);
  uv_close(reinterpret_cast<uv_handle_t*>(&t->handle), OnTimerClosed);
}

void OnTimer(uv_timer_t* h) {
  auto* t = static_cast<Loop::Impl::Timer*>(h->data);
  if (t->repeat) {
    t->fn();  // may CancelTimer(t->id); t stays alive until its close callback
    return;
  }
  auto fn = std::move(t->fn);
  CloseTimer(t);
  fn();
}

void OnSignalReceived(uv_signal_t* s, int) { (*static_cast<std::function<void()>*>(s->data))(); }

void OnSignalClosed(uv_handle_t* h) {
  delete static_cast<std::function<void()>*>(h->data);
  delete reinterpret_cast<uv_signal_t*>(h);
}

void CloseStray(uv_handle_t* h, void*) {
  if (!uv_is_closing(h)) uv_close(h, nullptr);
}

}  // namespace

std::string_view Loop::Impl::DateLine() {
  time_t now = time(nullptr);
  if (now != date_second || date_line_len == 0) {
    std::string line = "Date: " + HttpDate(now) + "\r\n";
    date_line_len = std::min(line.size(), sizeof(date_line));
    memcpy(date_line, line.data(), date_line_len);
    date_second = now;
  }
  return {date_line, date_line_len};
}

void Loop::Impl::RemoveCloser(LoopCloser* c) {
  closers.erase(std::remove(closers.begin(), closers.end(), c), closers.end());
}

void Loop::Impl::CloseAll() {
  if (handles_closed) return;
  handles_closed = true;
  // A closer may unregister itself while closing.
  for (LoopCloser* c : std::vector<LoopCloser*>(closers)) c->CloseForStop();
  while (!timers.empty()) CloseTimer(timers.begin()->second);
  for (uv_signal_t* s : signals) uv_close(reinterpret_cast<uv_handle_t*>(s), OnSignalClosed);
  signals.clear();
  {
    std::lock_guard<std::mutex> lock(mu);
    closed = true;
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&async), nullptr);
  uv_walk(&uv, CloseStray, nullptr);
  uv_run(&uv, UV_RUN_DEFAULT);
  // Tasks posted but never run are dropped here, on the loop thread.
  std::vector<std::function<void()>> dropped;
  {
    std::lock_guard<std::mutex> lock(mu);
    dropped.swap(tasks);
  }
}

Loop::Loop() : impl_(std::make_unique<Impl>()) {
  if (uv_loop_init(&impl_->uv) != 0) abort();
  impl_->uv.data = impl_.get();
  if (uv_async_init(&impl_->uv, &impl_->async, OnAsync) != 0) abort();
  impl_->async.data = impl_.get();
}

Loop::~Loop() {
  impl_->CloseAll();
  uv_loop_close(&impl_->uv);
}

void Loop::Run() {
  if (!impl_->stop_requested.load()) uv_run(&impl_->uv, UV_RUN_DEFAULT);
  impl_->CloseAll();
}

void Loop::Stop() {
  impl_->stop_requested.store(true);
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (!impl_->closed) uv_async_send(&impl_->async);
}

void Loop::Post(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->closed) return;
  impl_->tasks.push_back(std::move(fn));
  uv_async_send(&impl_->async);
}

static uint64_t StartTimer(Loop::Impl* impl, uint64_t delay, bool repeat, std::function<void()> fn) {
  auto* t = new Loop::Impl::Timer{{}, impl, impl->next_timer_id++, repeat, std::move(fn)};
  uv_timer_init(&impl->uv, &t->handle);
  t->handle.data = t;
  uv_timer_start(&t->handle, OnTimer, delay, repeat ? delay : 0);
  impl->timers[t->id] = t;
  return t->id;
}

uint64_t Loop::Every(uint64_t interval_ms, std::function<void()> fn) {
  return StartTimer(impl_.get(), interval_ms, true, std::move(fn));
}

uint64_t Loop::After(uint64_t delay_ms, std::function<void()> fn) {
  return StartTimer(impl_.get(), delay_ms, false, std::move(fn));
}

void Loop::CancelTimer(uint64_t id) {
  auto it = impl_->timers.find(id);
  if (it != impl_->timers.end()) CloseTimer(it->second);
}

void Loop::OnSignal(int signum, std::function<void()> fn) {
  auto* s = new uv_signal_t;
  uv_signal_init(&impl_->uv, s);
  s->data = new std::function<void()>(std::move(fn));
  uv_signal_start(s, OnSignalReceived, signum);
  impl_->signals.push_back(s);
}

uint64_t Loop::NowMs() const { return uv_now(&impl_->uv); }

}  // namespace folio::http
