// The Session's trace records (OBS-1): tool.call.start and tool.call.end on the loop,
// timeout.fired and cancel.received as they happen; the attempt records are written by the
// worker job (MakeJob). One call span per call, one child span per attempt.
#include "server/call/idempotency_key.h"
#include "server/session/session.h"

namespace keel {
namespace {

const char* Outcome(CallState state) {
  switch (state) {
    case CallState::kCompleted: return "ok";
    case CallState::kFailed: return "error";
    case CallState::kCancelled: return "cancelled";
    case CallState::kTimedOut: return "timeout";
    case CallState::kShutDown: return "error";
    case CallState::kQueued:
    case CallState::kRunning: break;
  }
  return "error";
}

}  // namespace

void Session::TraceCallStart(uint64_t generation, const Tool& tool, const Json& request_id,
                             const Json& meta, const Json& arguments, const std::string& task_id) {
  if (options_.trace == nullptr) return;
  CallTrace trace;
  std::optional<TraceContext> context;
  if (meta.is_object()) {
    const auto header = meta.find("traceparent");
    if (header != meta.end() && header->is_string()) {
      context = ParseTraceparent(header->get_ref<const std::string&>());
    }
  }
  if (!context) context = NewTraceContext();
  trace.trace_id = context->trace_id;
  trace.parent_span = context->parent_span_id;
  trace.call_span = NewSpanId();
  trace.start = loop_.clock().Now();
  const std::string call_id = coordinator_.CorrelationId(generation);
  std::string problem;
  const std::string key = ApprovalScopedKey(IdempotencyKey(meta, arguments, &problem), arguments);
  Json& attributes = trace.attributes;
  attributes = {{"mcp.method.name", "tools/call"},
                {"gen_ai.operation.name", "execute_tool"},
                {"gen_ai.tool.name", tool.spec().name},
                {"mcp.protocol.version", protocol_version_},
                {"network.transport", "pipe"},
                {"keel.call.id", call_id},
                {"keel.intent.id", key.empty() ? call_id : tool.spec().name + "/" + key},
                {"keel.effect", std::string(EffectClassName(tool.spec().effect))},
                {"keel.backend", tool.spec().backend_or_name()}};
  if (!request_id.is_null()) attributes["jsonrpc.request.id"] = IdKey(request_id);
  if (policy_) attributes["keel.policy.version"] = policy_->version;
  if (!key.empty()) attributes["idempotency.key"] = key;
  if (!task_id.empty()) attributes["task.id"] = task_id;
  TraceEvent event{"tool.call.start", "INFO", trace.trace_id, trace.call_span, trace.parent_span,
                   attributes};
  if (options_.trace_arguments) event.attributes["gen_ai.tool.call.arguments"] = arguments.dump();
  options_.trace->Emit(event);
  traces_[generation] = std::move(trace);
}

void Session::TraceCallEnd(uint64_t generation, CallState state, const std::string& reason) {
  auto it = traces_.find(generation);
  if (it == traces_.end()) return;
  const CallTrace& trace = it->second;
  const long long elapsed_ms = ToMillis(loop_.clock().Now() - trace.start);
  if (state == CallState::kTimedOut) {
    TraceEvent fired{"timeout.fired", "WARN", trace.trace_id, trace.call_span, trace.parent_span,
                     trace.attributes};
    fired.attributes["timeout.kind"] = reason == "idle timeout" ? "idle" : "max";
    fired.attributes["keel.timeout.layer"] = reason == "idle timeout" ? "idle" : "call";
    fired.attributes["duration_ms"] = elapsed_ms;
    options_.trace->Emit(fired);
  }
  TraceEvent end{"tool.call.end", state == CallState::kCompleted ? "INFO" : "WARN",
                 trace.trace_id, trace.call_span, trace.parent_span, trace.attributes};
  end.attributes["outcome"] = Outcome(state);
  end.attributes["keel.reason"] = reason;
  end.attributes["duration_ms"] = elapsed_ms;
  options_.trace->Emit(end);
  traces_.erase(it);
}

}  // namespace keel
