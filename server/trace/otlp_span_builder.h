// OtlpSpanBuilder: turns the trace records of calls (TraceEvent, written by CallTracer) into
// OTLP spans (ADO-3). A call's records share its span; so:
//   - tool.call.start opens the call's SERVER span, named per the MCP semantic conventions
//     "{mcp.method.name} {gen_ai.tool.name}"; tool.call.end closes it (a task's work, which
//     answers no request, gets an INTERNAL span of the same name);
//   - tool.attempt.start opens an INTERNAL child span per attempt; tool.attempt.end closes it;
//   - every other record (retry.*, breaker.*, timeout.fired, idempotency.*) becomes a span
//     event (with its time) on the open span it belongs to: the attempt's when its span id is
//     an open attempt, else the call's (its parent span id);
//   - a call or attempt that ends cancelled gets a keel.cancelled event.
// Record attribute names that are not in the OTel registry or the MCP conventions are moved
// under keel.* (retry.attempt -> keel.retry.attempt, idempotency.key ->
// keel.idempotency.key, task.id -> keel.task.id, outcome -> keel.outcome, duration_ms ->
// keel.duration_ms, timeout.kind -> keel.timeout.kind, idempotency.ledger ->
// keel.idempotency.ledger). A call that failed gets error.type: "tool_error" when its result
// was a CallToolResult with isError (a failure or a timeout), the JSON-RPC error code when
// it was answered with an error (a shutdown), and span status ERROR.
//
// Pure (times come in with the records) and not thread-safe: TraceLog serialises calls.
// Bounds: at most kMaxOpenSpans open spans; records of spans not open (already closed, or
// beyond the bound) are counted in dropped() and skipped.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/trace/otlp_json.h"
#include "server/trace/trace_log.h"

namespace keel {

class OtlpSpanBuilder {
 public:
  // A span stays open from its start record to its end record; calls are bounded by
  // --max-inflight and attempts by one per call, so this is far above any real need.
  static constexpr size_t kMaxOpenSpans = 65536;

  // The spans `event` (at `unix_ns`) finished: none, or one.
  std::vector<OtlpSpan> Add(const TraceEvent& event, int64_t unix_ns);
  size_t open_spans() const { return open_.size(); }
  uint64_t dropped() const { return dropped_; }

 private:
  OtlpSpan* Open(const std::string& span_id);
  void Start(const TraceEvent& event, int64_t unix_ns, SpanKind kind);
  std::vector<OtlpSpan> Finish(const TraceEvent& event, int64_t unix_ns);

  std::unordered_map<std::string, OtlpSpan> open_;  // by span id
  // By span id: attributes its start left out on purpose (an attempt's copies of its call's,
  // a method hint's gen_ai.*), which its end record's copies must not bring back.
  std::unordered_map<std::string, std::vector<std::string>> omitted_;
  uint64_t dropped_ = 0;
};

// A record's attributes with the names OTLP output uses (see above).
Json OtlpAttributeNames(const Json& attributes);

}  // namespace keel
