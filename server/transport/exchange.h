// Exchange: where the output of one exchange goes: the responses, progress and log lines a
// dispatcher writes for the messages that arrived on it. It is the OutputSink of that
// exchange, with an identity and an end. Loop thread only.
//
// What an exchange is depends on the transport (transport.h):
//  - stdio: the one pipe pair; one exchange for the life of the process;
//  - Streamable HTTP (next): one POST; its response (a JSON body or a request-scoped SSE
//    stream) carries the answer to that POST's request and the notifications about it.
// Invariants:
//  1. id() is unique among the exchanges of one process and never reused (0 is never an
//     id), so a request can remember the exchange it came on without holding it.
//  2. MarkClosed() returns true once, the first time: the transport reports the close to
//     its dispatcher exactly then (Dispatcher::OnExchangeClosed), never twice.
//  3. Once closed, nothing written to the exchange reaches the client; writing is still
//     allowed (and harmless), since requests learn of the close only afterwards.
#pragma once

#include <cstdint>

#include "server/transport/output_sink.h"

namespace keel {

using ExchangeId = uint64_t;
// What a message that came on no exchange carries (tests, and work no request waits for):
// no exchange's close reaches it.
inline constexpr ExchangeId kNoExchange = 0;

class Exchange : public OutputSink {
 public:
  explicit Exchange(ExchangeId id) : id_(id) {}
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  ExchangeId id() const { return id_; }
  bool closed() const { return closed_; }

  // The transport learned that the exchange is gone (invariant 2).
  bool MarkClosed() {
    if (closed_) return false;
    closed_ = true;
    return true;
  }

 private:
  const ExchangeId id_;
  bool closed_ = false;
};

}  // namespace keel
