// Server::Impl: the listener and the list of open connections of a Server.
// Loop thread only.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <functional>

#include "folio/http/server.h"
#include "loop_internal.h"

namespace folio::http {

class Connection;

struct Server::Impl final : LoopCloser {
  Impl(Loop* l, const Router* r, ServerOptions o);
  ~Impl();

  // Closes the listener and every connection (the loop is stopping).
  void CloseForStop() override;
  void CloseListener();
  void CloseConnections();
  // Accepts every connection queued on the listener (Shutdown, before the
  // listener closes: closing it would reset them).
  void AcceptPending();
  void Link(Connection* c);
  // Called by Connection::Close exactly once per linked connection.
  void OnConnectionClosed(Connection* c);
  void MaybeFinishShutdown();
  Status StartListening(int port_hint);

  Loop* loop;
  Loop::Impl* loop_impl;
  const Router* router;
  ServerOptions options;
  uv_tcp_t* listener = nullptr;  // heap: freed by its close callback
  int port = 0;
  Connection* connections = nullptr;  // intrusive list of open connections
  size_t open_connections = 0;
  uint64_t requests_served = 0;
  bool shutting_down = false;
  std::function<void()> shutdown_done;
  uint64_t shutdown_timer = 0;  // Loop timer id of the drain's bound; 0 = none
};

}  // namespace folio::http
