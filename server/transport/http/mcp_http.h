// McpHttpTransport: MCP over Streamable HTTP (reference/mcp-2026-07-28.md §3; 2025-11-25
// basic/transports) — the Transport (server/transport/transport.h) that turns each POST on
// the MCP endpoint into a message and the Exchange its answer goes to (http_exchange.h).
// The HTTP itself is HttpServer's (libmicrohttpd, http_server.h); who may connect is
// HttpGuard's (http_guard.h). It is also the OutputRouter of its exchanges. Loop thread only.
//
// Invariants:
//  1. Refused before the dispatcher sees anything: a path other than the endpoint (404),
//     Origin, Host or token (HttpGuard: 403, 401), a method other than POST and DELETE (405;
//     there is no GET stream), a body that is not application/json (415), an Accept that
//     takes neither JSON nor SSE (406), an undecodable body (400 with its JSON-RPC error), a
//     JSON-RPC response outside a legacy session (400).
//  2. Modern requests (the 2026-07-28 envelope in _meta, or server/discover, or the
//     MCP-Protocol-Version header naming it): an envelope without its required keys is 400
//     -32602; headers that disagree with the body are 400 -32020 (protocol/http_headers.h);
//     then the dispatcher. Each is its own peer: nothing is shared between two POSTs but
//     what the server keeps (tasks, the ledger).
//  3. Legacy requests (2025-11-25, 2025-06-18): `initialize` mints a session (a random id
//     sent as Mcp-Session-Id on its successful answer, one peer for all its requests);
//     every other legacy message names its session (400 without, 404 for one keel does not
//     know, or no longer: DELETE ended it, or it was the least recently used past
//     max_sessions). DELETE ends a session (204) and the dispatcher forgets its peer.
//  4. Notifications, and a legacy client's responses to keel's requests, are delivered and
//     answered 202 with no body.
//  5. A request streams (SSE) when it may say more than its answer: a modern tools/call
//     with a progressToken or a logLevel, any legacy tools/call (its progress, logs and
//     keel's questions to the client travel on it), a subscriptions/listen; and only if the
//     client's Accept takes text/event-stream. Everything else is one JSON body.
//  6. A client that leaves before its answer was sent closes the exchange: for a modern
//     request that is its cancellation (CAN-5: Dispatcher::OnExchangeClosed); a legacy
//     request goes on (its client sends notifications/cancelled to cancel) and its answer
//     is dropped.
//  7. Exchange and peer ids come from one counter above every stdio id (kFirstId).
//  8. Each exchange names its client (Exchange::client) for the per-client share of
//     --max-inflight: a legacy request its session, a modern one its remote address.
#pragma once

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "protocol/json_rpc.h"
#include "server/runtime/event_loop.h"
#include "server/transport/http/http_exchange.h"
#include "server/transport/http/http_guard.h"
#include "server/transport/http/http_server.h"
#include "server/transport/output_router.h"
#include "server/transport/transport.h"

namespace keel {

struct McpHttpOptions {
  HttpServer::Options server;
  std::string path = "/mcp";
  GuardOptions guard;
  Duration sse_keepalive = Millis(15000);
  size_t stream_bytes = 1 << 20;  // per SSE stream (--outbox-bytes)
  size_t max_sessions = 1024;     // legacy sessions kept
};

class McpHttpTransport final : public Transport, public HttpServer::Handler, public OutputRouter {
 public:
  static constexpr uint64_t kFirstId = kFirstNetworkId;
  // The input schema of a tool, for Mcp-Param-* checks; null when unknown.
  using SchemaFn = std::function<const nlohmann::json*(const std::string& tool)>;
  // A legacy session ended (DELETE, or evicted): the dispatcher forgets its peer.
  using PeerEndedFn = std::function<void(PeerId peer)>;

  McpHttpTransport(EventLoop& loop, McpHttpOptions options, Dispatcher& dispatcher, SchemaFn schema,
                   PeerEndedFn peer_ended);
  ~McpHttpTransport() override;

  bool Start(std::string* error) { return server_.Start(error); }
  uint16_t port() const { return server_.port(); }

  // Transport.
  void StopReading() override;
  bool FlushBlocking(TimePoint deadline) override;

  // OutputRouter.
  OutputSink* Find(ExchangeId id) override;

  // HttpServer::Handler.
  void OnRequest(HttpCall& call, const HttpRequest& request) override;
  void OnCallEnded(HttpCall& call, bool completed) override;

  size_t open_exchanges() const { return exchanges_.size(); }
  size_t sessions() const { return sessions_.size(); }
  const HttpServer& server() const { return server_; }

 private:
  struct Session {
    PeerId peer = 0;
    bool aged = false;                     // `age` is set
    std::list<std::string>::iterator age;  // place in lru_
  };

  // What the client's Accept takes.
  struct Accepted {
    bool json = true;
    bool sse = true;
  };
  // Where a request goes: its peer, and for a legacy initialize the session it may start.
  struct Route {
    PeerId peer = kNoPeer;  // kNoPeer: the exchange is its own peer (modern)
    bool minted = false;
    std::string session_id;
  };

  void OnPost(HttpCall& call, const HttpRequest& request);
  // Content-Type, Accept and the body (invariant 1); nullopt after answering the call.
  std::optional<Message> ReadPost(HttpCall& call, const HttpRequest& request, Accepted* accepts);
  // Invariant 2 before the dispatcher; false after answering the call.
  bool CheckModern(HttpCall& call, const HttpRequest& request, const Message& message);
  // Invariant 3: the session a legacy message names or starts; nullopt after answering.
  std::optional<Route> RouteLegacy(HttpCall& call, const HttpRequest& request,
                                   const Message& message);
  // A request, to the dispatcher on its own exchange (invariant 5).
  void Deliver(HttpCall& call, const HttpRequest& request, Message message, bool modern,
               const Route& route, Accepted accepts);
  // After a legacy initialize was answered: its session starts, or not (refused).
  void AdmitSession(HttpExchange& exchange, const std::string& session_id);
  void OnDelete(HttpCall& call, const HttpRequest& request);
  void EndSession(const std::string& id);
  void Touch(Session& session);
  HttpExchange& NewExchange(HttpCall& call, PeerId peer, HttpExchange::Options options);
  void KeepAliveTick();
  // The client id of a modern request from `address` (HttpRequest::client).
  uint64_t ClientOfAddress(const std::string& address);
  static constexpr size_t kMaxClientAddresses = 65536;

  EventLoop& loop_;
  McpHttpOptions options_;
  Dispatcher& dispatcher_;
  SchemaFn schema_;
  PeerEndedFn peer_ended_;
  HttpServer server_;
  uint64_t next_id_ = kFirstId;
  bool accepting_ = true;
  std::unordered_map<uint64_t, std::unique_ptr<HttpExchange>> exchanges_;  // by exchange id
  std::unordered_map<uint64_t, ExchangeId> by_call_;                       // HttpCall id -> it
  std::unordered_map<std::string, Session> sessions_;  // Mcp-Session-Id -> legacy session
  std::list<std::string> lru_;                         // session ids, least recently used first
  std::unordered_map<std::string, uint64_t> clients_;  // remote address -> client id
  std::optional<EventLoop::TimerId> keepalive_timer_;
};

}  // namespace keel
