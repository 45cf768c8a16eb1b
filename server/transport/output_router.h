// OutputRouter: how the Session and its parts find where a line goes. Every line they write
// concerns one request, and goes to the exchange that request came on (Find(its exchange));
// a line that concerns no request (a legacy task's status notification, a task's progress)
// goes to Find(kNoExchange). The router is the transport's: stdio and the unit tests use a
// SingleSinkRouter (every exchange is the one sink); Streamable HTTP maps each open POST's
// exchange to its response, and kNoExchange to nothing.
//
// Thread: loop thread only. Ownership: a router is borrowed; it outlives whoever holds it.
// Invariants:
//  1. Find(id) is the exchange's sink while it is open; nullptr once it is closed, or for
//     an id the router does not know. A line for nullptr is dropped: the writer counts it
//     (DroppingSink) and goes on; nothing waits for it.
//  2. A sink returned by Find is used at once, never kept: the exchange may close on the
//     next turn of the loop.
#pragma once

#include <cstdint>
#include <string>

#include "server/transport/exchange.h"
#include "server/transport/output_sink.h"

namespace keel {

class OutputRouter {
 public:
  virtual ~OutputRouter() = default;
  // The sink of exchange `id` while it is open; nullptr when it is closed or unknown (output
  // for it is dropped).
  virtual OutputSink* Find(ExchangeId id) = 0;
};

// Every exchange, and kNoExchange, is one sink (stdio's one exchange; unit tests).
class SingleSinkRouter final : public OutputRouter {
 public:
  explicit SingleSinkRouter(OutputSink& sink) : sink_(sink) {}
  OutputSink* Find(ExchangeId) override { return &sink_; }

 private:
  OutputSink& sink_;
};

// Where a writer sends the lines of an exchange that is gone (invariant 1): they are counted
// and dropped.
class DroppingSink final : public OutputSink {
 public:
  void SendResponse(std::string) override { ++lines_; }
  void SendProgress(uint64_t, std::string) override { ++lines_; }
  void DiscardProgress(uint64_t) override {}
  void SendLog(std::string) override { ++lines_; }
  uint64_t lines() const { return lines_; }

 private:
  uint64_t lines_ = 0;
};

// The sink of `exchange`, or `dropped` when the router has none.
inline OutputSink& SinkOf(OutputRouter& router, ExchangeId exchange, DroppingSink& dropped) {
  OutputSink* sink = router.Find(exchange);
  return sink != nullptr ? *sink : dropped;
}

}  // namespace keel
