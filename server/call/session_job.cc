// The Session's worker side: the job that runs one call or task's work on a worker — its
// attempts under the retry executor (RET-1, RET-2, BUD-2, OPS-1), each behind the tool's
// circuit breaker (CB-1, CB-2), the kill switch (OPS-2) checked before every attempt, and the
// attempt, retry and breaker trace records (OBS-1).
#include <random>

#include <spdlog/spdlog.h>

#include "server/call/degraded_answer.h"
#include "server/call/idempotency_key.h"
#include "server/session/session.h"

namespace keel {
namespace {

// The answer to a write-class call while the kill switch is on: nothing ran.
Json KillSwitchResult(const Tool& tool) {
  const std::string& name = tool.spec().name;
  return ErrorResult(
      "Writes are blocked: keel's kill switch is on, so '" + name +
          "' did not run and changed nothing. Reads still work. An operator turns it off with "
          "`keel admin block-writes off`.",
      Json{{"type", "kill_switch"},
           {"tool", name},
           {"effect", std::string(EffectClassName(tool.spec().effect))}});
}

uint64_t ThreadRandom() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return engine();
}

// A failed call's answer names the call (keel's correlation id, as timeout answers do), so a
// person can find it in the trace and the logs.
void AddCorrelationId(Json& result, const std::string& correlation_id) {
  if (!result.value("isError", false)) return;
  const Json* error = StructuredErrorOf(result);
  if (error == nullptr || error->contains("correlation_id")) return;
  result["structuredContent"]["error"]["correlation_id"] = correlation_id;
}

// What an attempt's outcome teaches the breaker (CB-1): the backend failed (transport,
// 5xx, timeout, lost response), throttled (429), or the caller's fault — neither.
BreakerOutcome BreakerOutcomeOf(const std::optional<AttemptFailure>& failure, bool threw,
                                bool stopped) {
  if (stopped) return BreakerOutcome::kIgnored;  // cancelled: says nothing about the backend
  if (threw) return BreakerOutcome::kFailure;
  if (!failure) return BreakerOutcome::kSuccess;
  if (failure->type == "backend_429" || failure->type == "rate_limited") {
    return BreakerOutcome::kThrottled;
  }
  if (failure->failure != FailureClass::kRejectedPermanent) return BreakerOutcome::kFailure;
  if (failure->type.rfind("backend_5", 0) == 0 || failure->type == "internal_error") {
    return BreakerOutcome::kFailure;
  }
  return BreakerOutcome::kIgnored;
}

// The breaker settings of a call: the policy's, in metrics_only mode when the call runs in
// shadow mode (OPS-1: decisions recorded, none applied).
BreakerSettings BreakerSettingsFor(const ToolPolicy& policy) {
  BreakerSettings settings = policy.breaker;
  if (policy.shadow && settings.mode == BreakerMode::kNormal) {
    settings.mode = BreakerMode::kMetricsOnly;
  }
  return settings;
}

std::string IncidentId(const std::string& backend, uint64_t generation) {
  return "cb-" + backend + "-" + std::to_string(generation);
}

}  // namespace

bool Session::WriteBlocked(const WorkerShared& w, const Tool& tool) {
  return IsWrite(tool.spec().effect) && w.writes_blocked && w.writes_blocked();
}

Session::AttemptRun Session::RunAttempt(WorkerShared& w, Tool& tool, ToolContext& ctx,
                                        const std::optional<CallTrace>& trace, int attempt,
                                        const std::string& attempt_id,
                                        const BreakerPermit* permit) {
  AttemptRun run;
  const std::string span = trace ? NewSpanId() : std::string();
  const auto start = std::chrono::steady_clock::now();
  if (trace) {
    TraceEvent event{"tool.attempt.start", "INFO", trace->trace_id, span, trace->call_span,
                     trace->attributes};
    event.attributes["retry.attempt"] = attempt;
    event.attributes["keel.attempt.id"] = attempt_id;
    if (permit != nullptr) {
      event.attributes["keel.circuit.state"] = std::string(BreakerStateName(permit->state));
      event.attributes["keel.circuit.generation"] = permit->generation;
      if (permit->probe) event.attributes["keel.circuit.probe"] = true;
    }
    w.trace->Emit(event);
  }
  try {
    run.result = WriteBlocked(w, tool) ? KillSwitchResult(tool) : tool.Call(ctx);
  } catch (const CallCancelled&) {
    run.result = TextResult("cancelled");  // the call settled already; this is dropped
    run.stopped = true;
  } catch (const std::exception& e) {
    spdlog::error("tool '{}' threw: {}", tool.spec().name, e.what());
    run.result = ErrorResult("Internal error in tool '" + tool.spec().name + "'",
                             Json{{"type", "internal_error"}});
    run.threw = true;
  }
  // Every tool's result passes here first: nothing below may copy or encode a value nested
  // deeper than keel can recurse (bounded_json.h).
  run.result = BoundedResult(std::move(run.result), tool.spec().name);
  if (!trace) return run;

  const double elapsed_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  auto record = [&](const char* name, const char* severity) {
    TraceEvent event{name, severity, trace->trace_id, span, trace->call_span, trace->attributes};
    event.attributes["retry.attempt"] = attempt;
    event.attributes["keel.attempt.id"] = attempt_id;
    return event;
  };
  const Json* error = StructuredErrorOf(run.result);
  const std::string error_type =
      error != nullptr ? error->value("type", "tool_error") : std::string("tool_error");
  const bool is_error = run.threw || run.result.value("isError", false);
  if (is_error && error_type == "attempt_timeout") {
    TraceEvent fired = record("timeout.fired", "WARN");
    fired.attributes["timeout.kind"] = "attempt";
    fired.attributes["keel.timeout.layer"] = "attempt";
    fired.attributes["duration_ms"] = elapsed_ms;
    w.trace->Emit(fired);
  }
  if (is_error && error_type == "idempotency_key_mismatch") {
    w.trace->Emit(record("idempotency.mismatch", "WARN"));
  }
  bool replayed = false;
  if (const auto m = run.result.find("_meta"); m != run.result.end() && m->is_object()) {
    replayed = m->value("dev.keel/replayed", false);
  }
  if (replayed) w.trace->Emit(record("idempotency.replay", "INFO"));

  TraceEvent end = record("tool.attempt.end", "INFO");
  end.attributes["duration_ms"] = elapsed_ms;
  end.attributes["outcome"] = run.stopped ? "cancelled" : is_error ? "error" : "ok";
  if (is_error) {
    end.severity = "WARN";
    end.attributes["error.type"] = error_type;
    if (const std::optional<AttemptFailure> failure = ClassifyResult(run.result)) {
      end.attributes["keel.failure.class"] = std::string(FailureClassName(failure->failure));
    }
  }
  if (replayed) end.attributes["idempotency.ledger"] = "replayed";
  // The backend operation a write's attempt created or found (OBS-1); a read's result may
  // name an operation, but creates none.
  if (IsWrite(tool.spec().effect)) {
    if (error != nullptr && error->contains("operation_id")) {
      end.attributes["keel.backend.operation.id"] = (*error)["operation_id"];
    } else if (const auto sc = run.result.find("structuredContent");
               sc != run.result.end() && sc->is_object() && sc->contains("operation_id")) {
      end.attributes["keel.backend.operation.id"] = (*sc)["operation_id"];
    }
  }
  w.trace->Emit(end);
  return run;
}

Json Session::GuardedAttempt(WorkerShared& w, Tool& tool, ToolContext& ctx,
                             CircuitBreaker& breaker, const std::optional<CallTrace>& trace,
                             const AttemptInfo& info, AttemptRun& last) {
  const ToolSpec& spec = tool.spec();
  const BreakerPermit permit = breaker.Acquire();
  if (!permit.admitted) {
    // CB-2: rejected without touching the backend; a read falls back to its last good result.
    const CircuitRejection rejection{std::string(BreakerStateName(permit.state)),
                                     spec.backend_or_name(), permit.retry_after_ms.value_or(0),
                                     IncidentId(spec.backend_or_name(), permit.generation)};
    std::optional<CachedResult> cached;
    if (!IsWrite(spec.effect)) cached = w.last_good.Get(spec.name, ctx.arguments());
    last = AttemptRun{DegradedAnswer(spec, rejection, cached, WallClockMs()), false, false};
    TraceBreaker(w, trace, "breaker.rejected", info, permit, breaker.Snapshot());
    return last.result;
  }
  if (permit.would_reject) {
    TraceBreaker(w, trace, "breaker.would_have", info, permit, breaker.Snapshot());
  }
  const auto start = std::chrono::steady_clock::now();
  last = RunAttempt(w, tool, ctx, trace, info.attempt, info.attempt_id, &permit);
  // A transition this result causes is traced once, by this call: the generation moves
  // inside Record. (Open -> half-open happens in Acquire and shows as probe attempts.)
  const uint64_t generation_before = trace ? breaker.Snapshot().generation : 0;
  const std::optional<AttemptFailure> failure = ClassifyResult(last.result);
  breaker.Record(permit, BreakerOutcomeOf(failure, last.threw, last.stopped),
                 std::chrono::steady_clock::now() - start);
  if (trace) {
    const BreakerSnapshot after = breaker.Snapshot();
    if (after.generation != generation_before) {
      TraceBreaker(w, trace, "breaker.state", info, permit, after);
    }
  }
  if (!IsWrite(spec.effect) && !last.stopped && !failure) {
    w.last_good.Put(spec.name, ctx.arguments(), last.result, WallClockMs());
  }
  return last.result;
}

void Session::TraceBreaker(WorkerShared& w, const std::optional<CallTrace>& trace,
                           const char* event, const AttemptInfo& info,
                           const BreakerPermit& permit, const BreakerSnapshot& now) {
  if (!trace) return;
  TraceEvent record{event, "WARN", trace->trace_id, NewSpanId(), trace->call_span,
                    trace->attributes};
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
  a["keel.incident"] = IncidentId(trace->attributes.value("keel.backend", ""),
                                  a["keel.circuit.generation"].get<uint64_t>());
  w.trace->Emit(record);
}

void Session::TraceRetryEvent(WorkerShared& w, const std::optional<CallTrace>& trace,
                              const RetryEvent& event) {
  if (!trace) return;
  TraceEvent record{std::string(RetryEventName(event.kind)), "INFO", trace->trace_id,
                    NewSpanId(), trace->call_span, trace->attributes};
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
  w.trace->Emit(record);
}

WorkerPool::Job Session::MakeJob(uint64_t generation, std::shared_ptr<CallControl> control,
                                 Tool* tool, ToolPolicy policy, Duration max, Json arguments,
                                 Json meta, std::string task_id) {
  // Workers read the real clock: the deadline a tool waits within is on it.
  const TimePoint deadline = std::chrono::steady_clock::now() + max;
  std::optional<CallTrace> trace;
  if (auto it = traces_.find(generation); it != traces_.end()) trace = it->second;
  const ToolSpec& spec = tool->spec();
  RetryCall call;
  call.intent_id = coordinator_.CorrelationId(generation);
  call.effect = spec.effect;
  {
    std::string problem;
    call.has_idempotency_key =
        !ApprovalScopedKey(IdempotencyKey(meta, arguments, &problem), arguments).empty();
  }
  call.backend = spec.backend_or_name();
  call.budget = policy_->RetryBudgetFor(call.backend);
  call.shadow = policy.shadow;
  call.policy = std::move(policy);
  call.call_deadline = deadline;
  ToolContext::Identity identity{call.intent_id, coordinator_.RequestId(generation), task_id};
  return [this, w = shared_, loop = &loop_, generation, control = std::move(control), tool,
          call = std::move(call),
          arguments = std::move(arguments), meta = std::move(meta),
          task_id = std::move(task_id), trace = std::move(trace),
          identity = std::move(identity)]() mutable {
    // Cancelled, timed out or shut down while queued: it never runs, and the coordinator
    // freed its slot already.
    if (!control->TryStart()) {
      if (!task_id.empty()) {
        loop->Post([this, task_id] {
          tasks_->OnWorkEnded(task_id, TaskManager::WorkEnd::kNeverStarted, Json());
        });
      }
      return;
    }
    ToolContext ctx(std::move(arguments), control->token(),
                    [this, loop, generation](double progress, std::optional<double> total,
                                             std::string text) {
                      loop->Post([this, generation, progress, total, text = std::move(text)]() mutable {
                        coordinator_.Progress(generation, progress, total, std::move(text));
                      });
                    });
    ctx.set_log([this, loop, generation, tool](LogLevel level, std::string message) {
      loop->Post([this, generation, level, tool, message = std::move(message)]() mutable {
        if (!coordinator_.Unsettled(generation)) return;  // late, like progress after a settle
        client_log_.Log(level, tool->spec().name, std::move(message));
      });
    });
    ctx.set_meta(std::move(meta));
    ctx.set_identity(std::move(identity));
    ctx.set_key_components(tool->spec().key_components);
    const CancellationToken token = control->token();
    RetryExecutor::Deps deps;
    deps.now = [] { return std::chrono::steady_clock::now(); };
    deps.random = w->random ? w->random : ThreadRandom;
    deps.wait = [token](TimePoint until) { return token.WaitUntil(until); };
    deps.cancelled = [token] { return token.IsCancelled(); };
    deps.budgets = &w->retry_budgets;
    const std::shared_ptr<CircuitBreaker> breaker =
        w->breakers.For(tool->spec().name, call.backend, BreakerSettingsFor(call.policy));
    AttemptRun last;
    RetryOutcome outcome = RetryExecutor::Run(
        call, deps,
        [&](const AttemptInfo& info) {
          ctx.set_deadline(info.deadline);
          ctx.set_attempt(info.attempt, info.attempt_id);
          return GuardedAttempt(*w, *tool, ctx, *breaker, trace, info, last);
        },
        [&](const RetryEvent& event) {
          TraceRetryEvent(*w, trace, event);
          if (event.kind != RetryEvent::Kind::kRetryScheduled) return;
          loop->Post([this, generation, delay = Millis(event.decision.delay_ms)] {
            coordinator_.RestartIdleClockAt(generation, loop_.clock().Now() + delay);
          });
        });
    const bool threw = last.threw;
    const bool stopped = last.stopped || outcome.cancelled;
    Json result = std::move(outcome.result);
    AddCorrelationId(result, call.intent_id);
    loop->Post([this, generation, threw, stopped, result = std::move(result),
                task_id = std::move(task_id)]() mutable {
      if (task_id.empty()) return coordinator_.Complete(generation, std::move(result), threw);
      Json returned = result;
      coordinator_.Complete(generation, std::move(result), threw);
      tasks_->OnWorkEnded(task_id,
                          stopped ? TaskManager::WorkEnd::kStoppedAtCheckpoint
                                  : TaskManager::WorkEnd::kReturned,
                          std::move(returned));
    });
  };
}

}  // namespace keel
