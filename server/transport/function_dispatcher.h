// FunctionDispatcher: a Dispatcher made of four functions, to wire a transport to code that
// is not a Dispatcher itself (server/app wires the stdio transport to the Session so) and
// to record what a transport delivers in tests. A null function ignores its event.
// Loop thread only, like every Dispatcher (transport.h).
#pragma once

#include <cstdint>
#include <functional>
#include <utility>

#include "server/transport/transport.h"

namespace keel {

class FunctionDispatcher final : public Dispatcher {
 public:
  struct Functions {
    std::function<void(Exchange& exchange, Message message)> on_message;
    std::function<void(Exchange& exchange)> on_exchange_closed;
    std::function<void(Exchange& exchange, uint64_t stream)> on_progress_dropped;
    std::function<void()> on_input_ended;
  };

  explicit FunctionDispatcher(Functions functions) : functions_(std::move(functions)) {}

  void OnMessage(Exchange& exchange, Message message) override {
    if (functions_.on_message) functions_.on_message(exchange, std::move(message));
  }
  void OnExchangeClosed(Exchange& exchange) override {
    if (functions_.on_exchange_closed) functions_.on_exchange_closed(exchange);
  }
  void OnProgressDropped(Exchange& exchange, uint64_t stream) override {
    if (functions_.on_progress_dropped) functions_.on_progress_dropped(exchange, stream);
  }
  void OnInputEnded() override {
    if (functions_.on_input_ended) functions_.on_input_ended();
  }

 private:
  Functions functions_;
};

}  // namespace keel
