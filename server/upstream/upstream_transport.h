// UpstreamTransport: how keel reaches the MCP server it wraps (`keel wrap`): one connection
// that carries keel's JSON-RPC messages to the upstream and the upstream's back. The stdio
// kind runs the upstream as a child process (stdio_upstream.h); the Streamable HTTP kind
// sends each message in its own HTTP POST (http_upstream.h). The protocol over it (ids,
// handshake, routing) is UpstreamClient's (upstream_client.h); a transport only moves whole
// messages.
//
// Thread-safety: Send and Abandon may be called from any thread. The events run on the
// transport's own thread, one at a time, and must not block.
// Invariants:
//  1. on_message gets only JSON-RPC 2.0 objects (a request, a notification or a response);
//     anything else the upstream writes is dropped and logged by the transport.
//  2. on_closed runs once, last: after it no event runs. It says why (the process exited with
//     status 3, the stream ended, ...).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/runtime/clock.h"

namespace keel {

using Json = nlohmann::json;

struct UpstreamEvents {
  // `related`: the id of keel's request whose stream carried the message (HTTP), or null
  // when the transport cannot tell (stdio: one stream for everything).
  std::function<void(Json message, const Json& related)> on_message;
  std::function<void(std::string why)> on_closed;
};

// Invariant 1: the junk an upstream sends is logged this many times, then once a thousand.
inline constexpr size_t kMaxJunkLogged = 20;

// Invariant 1's test: a JSON-RPC 2.0 request, notification or response object.
inline bool IsJsonRpcMessage(const Json& value) {
  if (!value.is_object()) return false;
  const auto version = value.find("jsonrpc");
  if (version == value.end() || *version != "2.0") return false;
  const auto method = value.find("method");
  if (method != value.end()) return method->is_string();
  return value.contains("id") && (value.contains("result") || value.contains("error"));
}

// The code of a transport's own answer to a request it could not deliver (HttpUpstream rule
// 2: a failed POST), with the message "upstream HTTP: <what happened>" and data.sent (a
// boolean: false when the upstream surely got nothing). It is what the official TypeScript
// SDK's client gives a transport failure. ForwardToUpstream turns it into keel's failure
// classes (upstream_call.h rule 5), so it never reaches a client as a JSON-RPC error.
inline constexpr int kUpstreamHttpFailure = -32000;
inline constexpr std::string_view kUpstreamHttpFailurePrefix = "upstream HTTP: ";

class UpstreamTransport {
 public:
  virtual ~UpstreamTransport() = default;
  // Queues one message for the upstream. False, with *why, when it cannot be sent: the
  // connection is closed, or the upstream has stopped reading and keel's bounded queue for
  // it is full.
  virtual bool Send(const Json& message, std::string* why) = 0;
  // keel no longer wants anything more about request `id` (HTTP: its response stream is
  // closed, the 2026-07-28 way to cancel; nothing more about it is delivered). Does nothing
  // on stdio.
  virtual void Abandon(const Json& id) { (void)id; }
  // Ends the connection within `grace` (blocking): stdio closes the upstream's stdin, then
  // SIGTERMs and SIGKILLs its process group; HTTP ends a legacy session with DELETE. on_closed
  // has run when it returns.
  virtual void Shutdown(Duration grace) = 0;
};

}  // namespace keel
