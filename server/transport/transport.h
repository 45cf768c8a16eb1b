// The transport boundary. A Transport carries MCP messages: it frames and decodes what a
// client sends and delivers each message to a Dispatcher together with the Exchange
// (exchange.h) its answers go to. The Dispatcher (MCP methods, admission, the request
// coordinator, tasks) knows nothing of pipes or sockets; the Transport knows nothing of
// MCP methods. Loop thread only, on both sides: a transport calls its dispatcher from the
// loop, and the dispatcher writes to exchanges from the loop, finding each by its id through
// the transport's OutputRouter (output_router.h): every answer follows its request's exchange.
//
// Invariants (every transport keeps them):
//  1. Messages are delivered decoded (a Message of protocol/json_rpc.h). What cannot be
//     decoded, or is too large to read, is answered by the transport on the exchange it
//     came on (inbound.h) and never reaches the dispatcher.
//  2. OnExchangeClosed(exchange) is called once per exchange, when the transport learns
//     that nothing written to it can reach the client any more. It is a cancellation
//     input, next to notifications/cancelled: the requests that came on that exchange
//     and are not settled yet are cancelled (settled without a response; CAN-2, CAN-5):
//     Session::OnExchangeClosed, which reaches RequestCoordinator::CancelExchange and the
//     TaskManager's waiting requests. Over stdio the one exchange's close is also the end
//     of the session: keel cancels its calls, then stops and exits.
//  3. After OnInputEnded() no message is delivered again; exchanges already open still
//     carry output (stdio: the answers to calls in flight are written after stdin EOF).
//
// stdio (StdioTransport): one exchange, the pipe pair. A line on stdin is one message.
// OnInputEnded is stdin EOF (how an MCP client ends the session, DC-2); OnExchangeClosed is
// stdout gone (EPIPE), after which keel has no one to answer and exits.
//
// Streamable HTTP (next issue; reference/mcp-2026-07-28.md §3) will use it so:
//  - one Exchange per POST. Its request is delivered with it; the answer ends it: a JSON
//    body (200) or a request-scoped SSE stream (progress and log notifications for that
//    request, then the response) when the request asked for progress or logs.
//    A notification POST is delivered with an exchange that the transport answers 202
//    and closes without reporting it.
//  - peers (exchange.h): a modern POST is its own peer; a legacy session (Mcp-Session-Id)
//    is one peer across its POSTs, given with each of its exchanges, and its end (DELETE,
//    expiry) is Session::ForgetPeer.
//  - a closed response stream (the client disconnected, or a stuck SSE reader was cut
//    off, HTTP-3) is OnExchangeClosed: the dispatcher cancels that exchange's request as
//    it would for notifications/cancelled (CAN-5: HTTP clients never send it). For a
//    legacy (2025-11-25) session a disconnect is not a cancellation: the dispatcher knows
//    the era of the exchange's requests and may keep them running.
//  - the bounds the outbox gives stdio (BP-1) apply per SSE stream; dropped progress is
//    OnProgressDropped with that exchange.
//  - OnInputEnded when the listener stops (shutdown), not per connection.
//  - HTTP-level refusals (403 Origin, 404 unknown session, 405, 413, 400 header mismatch)
//    are the transport's and never reach the dispatcher; JSON-RPC errors are the
//    dispatcher's, written to the exchange (the transport picks the status code).
#pragma once

#include <cstdint>

#include "protocol/json_rpc.h"
#include "server/runtime/clock.h"
#include "server/transport/exchange.h"

namespace keel {

class Dispatcher {
 public:
  virtual ~Dispatcher() = default;
  // One decoded message that arrived on `exchange`; its answers go to `exchange`.
  virtual void OnMessage(Exchange& exchange, Message message) = 0;
  // `exchange` is gone (invariant 2).
  virtual void OnExchangeClosed(Exchange& exchange) = 0;
  // The transport dropped unsent progress of request stream `stream` on `exchange` to stay
  // within its bound (BP-1): that request needs a resync.
  virtual void OnProgressDropped(Exchange& exchange, uint64_t stream) = 0;
  // No more messages will come (invariant 3).
  virtual void OnInputEnded() = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Stops delivering messages (shutdown began); output still flows.
  virtual void StopReading() = 0;
  // Blocks until all queued output is written or `deadline` passes (the exit path only).
  // True when everything was written.
  virtual bool FlushBlocking(TimePoint deadline) = 0;
};

}  // namespace keel
