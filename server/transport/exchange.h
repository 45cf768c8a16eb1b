// Exchange: where the output of one exchange goes: the responses, progress and log lines a
// dispatcher writes for the messages that arrived on it. It is the OutputSink of that
// exchange, with an identity and an end. Loop thread only.
//
// What an exchange is depends on the transport (transport.h):
//  - stdio: the one pipe pair; one exchange for the life of the process;
//  - Streamable HTTP: one POST; its response (a JSON body or a request-scoped SSE stream)
//    carries the answer to that POST's request and the notifications about it.
// The Session finds an exchange's sink by its id through an OutputRouter (output_router.h).
//
// A peer is the scope of JSON-RPC ids and of legacy session state (initialize, the
// negotiated era, client capabilities, log level, keel's own server-to-client requests):
// two peers may use the same id at once, and a response or a notifications/cancelled from one
// peer never touches another's requests. Which exchanges make one peer is the transport's:
//  - stdio: the one exchange is the one peer;
//  - Streamable HTTP, modern (2026-07-28, stateless): each POST is its own peer;
//  - Streamable HTTP, legacy (2025-11-25, 2025-06-18): one Mcp-Session-Id is one peer,
//    spanning the exchanges of all its POSTs (Session::ForgetPeer ends it).
// Invariants:
//  1. id() is unique among the exchanges of one process and never reused (0 is never an
//     id), so a request can remember the exchange it came on without holding it. Peer ids
//     and exchange ids come from one counter in a process, so they never collide: an
//     exchange that is its own peer uses its id as the peer id.
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
// no exchange's close reaches it. Output for kNoExchange is output that concerns no request
// (OutputRouter::Find decides where it goes).
inline constexpr ExchangeId kNoExchange = 0;
// Exchange and peer ids below this are stdio's (its one exchange is 1); network transports
// (Streamable HTTP) number theirs from here, so a trace can name the transport of a call.
inline constexpr ExchangeId kFirstNetworkId = 1000;

using PeerId = uint64_t;
// Given for a peer: "the exchange is its own peer" (the peer id is the exchange id).
inline constexpr PeerId kNoPeer = 0;

class Exchange : public OutputSink {
 public:
  explicit Exchange(ExchangeId id, PeerId peer = kNoPeer)
      : id_(id), peer_(peer == kNoPeer ? id : peer) {}
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;

  ExchangeId id() const { return id_; }
  // The peer whose messages come on this exchange: the one given, or id() when none was.
  PeerId peer() const { return peer_; }
  // Who sent it, for the per-client share of --max-inflight: the peer unless the transport
  // says otherwise (HTTP: the legacy session, or a modern request's remote address).
  uint64_t client() const { return client_ != 0 ? client_ : peer_; }
  void set_client(uint64_t client) { client_ = client; }
  bool closed() const { return closed_; }

  // The transport learned that the exchange is gone (invariant 2).
  bool MarkClosed() {
    if (closed_) return false;
    closed_ = true;
    return true;
  }

 private:
  const ExchangeId id_;
  const PeerId peer_;
  uint64_t client_ = 0;
  bool closed_ = false;
};

}  // namespace keel
