// RequestSpans: the OTLP SERVER span (ADO-3) of every MCP request that no CallTracer traces —
// initialize, ping, tools/list, resources/*, prompts/*, tasks/*, and the tools/call requests
// answered without an admitted call (refused, unknown tool, a tool run on the loop). A
// tools/call that is admitted gets its span from its CallTracer instead (its attempts are
// that span's children), so each request has exactly one SERVER span.
//
// The span runs from the request's arrival to the return of its handler; what the handler
// answered is noted on the way (NoteResult / NoteError). A request answered later without a
// call (a subscriptions/listen stream) ends its span when its handler returns, marked
// keel.answered_later.
//
// Loop thread only: the session handles one message at a time, so one request is open at a
// time. With no trace log, or a JSON lines one, every method does nothing.
// Bounds: one session id per initialized legacy peer, forgotten with the peer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "server/trace/trace_log.h"

namespace keel {

class RequestSpans {
 public:
  explicit RequestSpans(TraceLog* log) : log_(log != nullptr && log->otlp() ? log : nullptr) {}

  bool enabled() const { return log_ != nullptr; }
  // A request arrived: `meta` is its params' _meta (its traceparent is the span's parent);
  // `transport` is network.transport ("pipe" or "tcp").
  void Begin(const std::string& method, const Json& id, const Json& meta, const char* transport);
  // The open request `id` was answered with `result` (a CallToolResult with isError: a
  // tool_error) or with a JSON-RPC error.
  void NoteResult(const Json& id, const Json& result);
  void NoteError(const Json& id, int code, const std::string& message);
  // A CallTracer took the open request `id` over: End writes nothing.
  void NoteTraced(const Json& id);
  // Its handler returned: writes the span. `answered`: the request no longer has an id in
  // use (false: it is answered later).
  void End(const std::string& protocol_version, const std::string& session_id, bool answered);

  // The mcp.session.id of a legacy peer (the stdio connection, one HTTP session): random,
  // made at its first use. Never the Mcp-Session-Id header, which lets its holder act in the
  // session and so stays out of trace files.
  const std::string& SessionIdOf(uint64_t peer);
  void ForgetPeer(uint64_t peer) { session_ids_.erase(peer); }

 private:
  struct Open {
    OtlpSpan span;
    Json id;
    bool traced = false;
  };
  TraceLog* log_;
  std::optional<Open> open_;
  std::unordered_map<uint64_t, std::string> session_ids_;
};

}  // namespace keel
