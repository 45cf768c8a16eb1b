#include "server/call/call_tracer.h"

#include <string_view>

#include "protocol/json_rpc.h"
#include "server/call/degraded_answer.h"
#include "server/catalog/tool.h"

namespace keel {
namespace {

const char* Outcome(CallState state) {
  switch (state) {
    case CallState::kCompleted:
      return "ok";
    case CallState::kFailed:
      return "error";
    case CallState::kCancelled:
      return "cancelled";
    case CallState::kTimedOut:
      return "timeout";
    case CallState::kShutDown:
      return "error";
    case CallState::kQueued:
    case CallState::kRunning:
      break;
  }
  return "error";
}

// The method a call made for another method answers (AnswerAs); null for a tools/call.
const char* AnsweredMethod(AnswerAs answer) {
  switch (answer) {
    case AnswerAs::kResource:
      return "resources/read";
    case AnswerAs::kPrompt:
      return "prompts/get";
    case AnswerAs::kCompletion:
      return "completion/complete";
    case AnswerAs::kToolResult:
      break;
  }
  return nullptr;
}

TraceContext ContextOf(const Json& meta) {
  if (meta.is_object()) {
    const auto header = meta.find("traceparent");
    if (header != meta.end() && header->is_string()) {
      if (auto parsed = ParseTraceparent(header->get_ref<const std::string&>())) return *parsed;
    }
  }
  return NewTraceContext();
}

}  // namespace

std::shared_ptr<const CallTracer> CallTracer::Start(TraceLog& log, const CallIdentity& call,
                                                    const Json& meta, const Json& arguments,
                                                    const StartInfo& info) {
  const ToolSpec& spec = call.tool->spec();
  std::shared_ptr<CallTracer> tracer(new CallTracer(log, IsWrite(spec.effect)));
  const TraceContext context = ContextOf(meta);
  tracer->trace_id_ = context.trace_id;
  tracer->parent_span_ = context.parent_span_id;
  tracer->call_span_ = NewSpanId();
  tracer->start_ = info.now;
  const std::string& key = call.idempotency_key;
  Json& attributes = tracer->attributes_;
  attributes = {{"mcp.method.name", "tools/call"},
                {"gen_ai.operation.name", "execute_tool"},
                {"gen_ai.tool.name", spec.name},
                {"mcp.protocol.version", info.protocol_version},
                {"network.transport", call.exchange >= kFirstNetworkId ? "tcp" : "pipe"},
                {"keel.call.id", call.correlation_id},
                {"keel.intent.id", key.empty() ? call.correlation_id : spec.name + "/" + key},
                {"keel.effect", std::string(EffectClassName(spec.effect))},
                {"keel.backend", spec.backend_or_name()}};
  if (!call.request_id.is_null()) attributes["jsonrpc.request.id"] = IdKey(call.request_id);
  if (info.policy_version) attributes["keel.policy.version"] = *info.policy_version;
  if (!key.empty()) attributes["idempotency.key"] = key;
  if (!call.task_id.empty()) attributes["task.id"] = call.task_id;
  TraceEvent event = tracer->CallRecord("tool.call.start", "INFO");
  if (info.with_arguments) event.attributes["gen_ai.tool.call.arguments"] = arguments.dump();
  // Only the OTLP form (ADO-3) reads these; the JSON lines stay as they were.
  if (const char* method = AnsweredMethod(call.answer)) event.otlp["mcp.method.name"] = method;
  if (!info.session_id.empty()) event.otlp["mcp.session.id"] = info.session_id;
  log.Emit(event);
  return tracer;
}

TraceEvent CallTracer::CallRecord(std::string name, const char* severity) const {
  return TraceEvent{std::move(name), severity, trace_id_, call_span_, parent_span_, attributes_};
}

TraceEvent CallTracer::ChildRecord(std::string name, const char* severity, std::string span) const {
  return TraceEvent{std::move(name), severity, trace_id_, std::move(span), call_span_, attributes_};
}

TraceEvent CallTracer::AttemptRecord(const char* name, const char* severity,
                                     const std::string& span, const AttemptInfo& info) const {
  TraceEvent event = ChildRecord(name, severity, span);
  event.attributes["retry.attempt"] = info.attempt;
  event.attributes["keel.attempt.id"] = info.attempt_id;
  return event;
}

std::string CallTracer::AttemptStart(const AttemptInfo& info, const BreakerPermit* permit) const {
  std::string span = NewSpanId();
  TraceEvent event = AttemptRecord("tool.attempt.start", "INFO", span, info);
  if (permit != nullptr) {
    event.attributes["keel.circuit.state"] = std::string(BreakerStateName(permit->state));
    event.attributes["keel.circuit.generation"] = permit->generation;
    if (permit->probe) event.attributes["keel.circuit.probe"] = true;
  }
  log_.Emit(event);
  return span;
}

void CallTracer::AttemptEnd(const std::string& span, const AttemptInfo& info,
                            const AttemptOutcome& outcome, double elapsed_ms) const {
  const bool is_error = outcome.is_error();
  const std::string error_type = is_error ? outcome.failure->type : std::string();
  if (error_type == "attempt_timeout") {
    TraceEvent fired = AttemptRecord("timeout.fired", "WARN", span, info);
    fired.attributes["timeout.kind"] = "attempt";
    fired.attributes["keel.timeout.layer"] = "attempt";
    fired.attributes["duration_ms"] = elapsed_ms;
    log_.Emit(fired);
  }
  if (error_type == "idempotency_key_mismatch") {
    log_.Emit(AttemptRecord("idempotency.mismatch", "WARN", span, info));
  }
  if (outcome.replayed) log_.Emit(AttemptRecord("idempotency.replay", "INFO", span, info));

  TraceEvent end = AttemptRecord("tool.attempt.end", "INFO", span, info);
  end.attributes["duration_ms"] = elapsed_ms;
  end.attributes["outcome"] = outcome.stopped ? "cancelled" : is_error ? "error" : "ok";
  if (is_error) {
    end.severity = "WARN";
    end.attributes["error.type"] = error_type;
    end.attributes["keel.failure.class"] = std::string(FailureClassName(outcome.failure->failure));
  }
  if (outcome.replayed) end.attributes["idempotency.ledger"] = "replayed";
  // The backend operation a write's attempt created or found (OBS-1); a read's result may
  // name an operation, but creates none.
  if (write_ && outcome.operation_id) {
    end.attributes["keel.backend.operation.id"] = *outcome.operation_id;
  }
  log_.Emit(end);
}

void CallTracer::Breaker(const char* event, const AttemptInfo& info, const BreakerPermit& permit,
                         const BreakerSnapshot& now) const {
  TraceEvent record = ChildRecord(event, "WARN", NewSpanId());
  Json& a = record.attributes;
  a["retry.attempt"] = info.attempt;
  a["keel.attempt.id"] = info.attempt_id;
  a["keel.circuit.state"] = std::string(BreakerStateName(permit.state));
  a["keel.circuit.generation"] = permit.generation;
  if (permit.probe) a["keel.circuit.probe"] = true;
  if (permit.retry_after_ms) a["keel.retry_after_ms"] = *permit.retry_after_ms;
  if (std::string_view(event) == "breaker.state") {
    // The machine's state (closed, open, half_open), also under metrics_only.
    record.severity = now.circuit == BreakerState::kClosed ? "INFO" : "WARN";
    a["keel.circuit.state"] = std::string(BreakerStateName(now.circuit));
    a["keel.circuit.previous_state"] = std::string(BreakerStateName(permit.circuit));
    a["keel.circuit.mode"] = std::string(BreakerModeName(now.mode));
    a["keel.circuit.generation"] = now.generation;
    a["keel.circuit.trip"] = std::string(BreakerTripName(now.last_trip));
    a["keel.circuit.failure_rate_percent"] = now.failure_rate_percent;
    a["keel.circuit.slow_rate_percent"] = now.slow_rate_percent;
  }
  a["keel.incident"] = BreakerIncidentId(attributes_.value("keel.backend", ""),
                                         a["keel.circuit.generation"].get<uint64_t>());
  log_.Emit(record);
}

void CallTracer::Retry(const RetryEvent& event) const {
  TraceEvent record = ChildRecord(std::string(RetryEventName(event.kind)), "INFO", NewSpanId());
  Json& a = record.attributes;
  a["retry.attempt"] = event.attempt;
  a["error.type"] = event.failure.type;
  a["keel.failure.class"] = std::string(FailureClassName(event.failure.failure));
  a["keel.retry.reason"] = std::string(RetryReasonName(event.decision.reason));
  a["keel.retry.delay_ms"] = event.decision.delay_ms;
  a["keel.budget.remaining_ms"] = event.remaining_budget_ms;
  if (event.failure.retry_after_ms) a["keel.retry_after_ms"] = *event.failure.retry_after_ms;
  if (event.decision.needs_reconciliation) a["keel.needs_reconciliation"] = true;
  if (event.kind == RetryEvent::Kind::kWouldHave) {
    a["keel.shadow"] = true;
    a["keel.would_have.retry"] = event.decision.retry;
  }
  if (event.kind != RetryEvent::Kind::kRetryScheduled) record.severity = "WARN";
  log_.Emit(record);
}

void CallTracer::End(CallState state, const std::string& reason, TimePoint now) const {
  const long long elapsed_ms = ToMillis(now - start_);
  if (state == CallState::kTimedOut) {
    TraceEvent fired = CallRecord("timeout.fired", "WARN");
    fired.attributes["timeout.kind"] = reason == "idle timeout" ? "idle" : "max";
    fired.attributes["keel.timeout.layer"] = reason == "idle timeout" ? "idle" : "call";
    fired.attributes["duration_ms"] = elapsed_ms;
    log_.Emit(fired);
  }
  TraceEvent end = CallRecord("tool.call.end", state == CallState::kCompleted ? "INFO" : "WARN");
  end.attributes["outcome"] = Outcome(state);
  end.attributes["keel.reason"] = reason;
  end.attributes["duration_ms"] = elapsed_ms;
  log_.Emit(end);
}

}  // namespace keel
