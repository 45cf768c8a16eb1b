// HttpExchange: the Exchange (server/transport/exchange.h) of one POSTed request: where the
// dispatcher's answer to it, and the notifications about it, go. Loop thread only.
//
// Two forms (reference/mcp-2026-07-28.md §3.4):
//  - JSON: the response is the body (Content-Type: application/json), with the status
//    StatusOfAnswer gives it; progress and log lines have nowhere to go and are dropped.
//  - SSE (the request may stream: a call that asked for progress or logs, or a legacy call,
//    whose server-to-client requests travel there): `text/event-stream`, one `data:` event
//    per message, the response last; the stream then ends. `Cache-Control: no-cache` and
//    `X-Accel-Buffering: no`; a comment every keep-alive period (KeepAlive).
// Invariants:
//  1. An answer given while the dispatcher still handles the request (most methods) is sent
//     as JSON with its status, whichever form was planned (Begin).
//  2. The SSE body is an Outbox (server/transport/outbox.h) with its bound (BP-1) per
//     stream: responses and requests never dropped, progress coalesced then dropped first
//     (reported through on_progress_dropped), logs dropped past half.
//  3. Nothing is written after the response, nor once the call is gone (Detach).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "server/transport/exchange.h"
#include "server/transport/http/http_server.h"
#include "server/transport/outbox.h"

namespace keel {

// The HTTP status of a JSON-RPC answer line: 200 for a result (and for most errors); 400 for
// a request keel could not read or refuses by its headers, version or capabilities
// (-32700, -32600, -32020, -32021, -32022); 404 for an unknown method (-32601) on the modern
// path (a legacy client gets 200 for it, as 2025-11-25 servers answer).
int StatusOfAnswer(const std::string& line, bool modern);

class HttpExchange final : public Exchange, public StreamSource {
 public:
  struct Options {
    bool stream = false;  // SSE when the answer is not immediate
    bool modern = true;
    size_t stream_bytes = 1 << 20;
    std::function<void(uint64_t stream)> on_progress_dropped;
  };

  HttpExchange(ExchangeId id, PeerId peer, HttpCall* call, Options options);

  // The dispatcher has seen the request (invariant 1): answers it now when it is answered,
  // else starts the SSE stream, or waits for the JSON response.
  void Begin();
  void AddHeader(std::string name, std::string value) {
    headers_.emplace_back(std::move(name), std::move(value));
  }
  // The HTTP call is gone (the client left, or it ended): nothing more is written.
  void Detach() { call_ = nullptr; }
  void KeepAlive();

  bool modern() const { return options_.modern; }
  bool streaming() const { return streaming_; }
  bool answered() const { return answered_; }
  // The response is a JSON-RPC error (or not there yet).
  bool answer_is_error() const;

  // OutputSink.
  void SendResponse(std::string line) override;
  void SendRequest(std::string line) override;
  void SendProgress(uint64_t stream, std::string line) override;
  void DiscardProgress(uint64_t stream) override;
  void SendLog(std::string line) override;
  // A cancelled request: its stream ends (what was queued is still sent), or a JSON request
  // still waiting is answered 204 with no body.
  void EndUnanswered() override;

  // StreamSource.
  size_t Read(char* buf, size_t max) override;
  bool ended() const override { return answered_ && outbox_.empty(); }

 private:
  bool CanQueue() const { return call_ != nullptr && !answered_ && options_.stream; }
  void Wake();

  HttpCall* call_;
  const Options options_;
  Outbox outbox_;
  HttpHeaders headers_;
  std::string response_;  // the answer, until it is sent
  bool begun_ = false;
  bool streaming_ = false;
  bool answered_ = false;
};

}  // namespace keel
