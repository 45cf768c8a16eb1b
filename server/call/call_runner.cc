#include "server/call/call_runner.h"

#include <random>

#include <spdlog/spdlog.h>

#include "protocol/json_rpc.h"
#include "protocol/tool_result.h"
#include "server/call/kill_switch_answer.h"
#include "server/input/client_requests.h"
#include "server/input/input_round.h"

namespace keel {
namespace {

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

// The breaker settings of a call: the policy's, in metrics_only mode when the call runs in
// shadow mode (OPS-1: decisions recorded, none applied).
BreakerSettings BreakerSettingsFor(const ToolPolicy& policy) {
  BreakerSettings settings = policy.breaker;
  if (policy.shadow && settings.mode == BreakerMode::kNormal) {
    settings.mode = BreakerMode::kMetricsOnly;
  }
  return settings;
}

}  // namespace

CallRunner::CallRunner(Options options, CallInbox::Port inbox)
    : options_(std::move(options)),
      inbox_(std::move(inbox)),
      clock_(options_.clock != nullptr ? *options_.clock : steady_) {}

WorkerPool::Job CallRunner::Job(Work work) {
  const ToolSpec& spec = work.identity.tool->spec();
  RetryCall call;
  call.intent_id = work.identity.correlation_id;
  call.effect = spec.effect;
  call.has_idempotency_key = !work.identity.idempotency_key.empty();
  call.backend = spec.backend_or_name();
  call.budget = work.budget;
  call.shadow = work.policy.shadow;
  call.policy = work.policy;
  call.call_deadline = clock_.Now() + work.max;
  return [self = shared_from_this(), work = std::move(work), call = std::move(call)]() mutable {
    self->Run(work, call);
  };
}

bool CallRunner::KeelAsks(const CallIdentity& call) {
  return call.input && call.input->server_asks && call.task_id.empty();
}

std::optional<KillSwitchState> CallRunner::WriteBlocked(const Tool& tool) const {
  const ToolSpec& spec = tool.spec();
  if (!IsWrite(spec.effect) || spec.kill_switch_in_transaction || !options_.writes_blocked) {
    return std::nullopt;
  }
  KillSwitchState state = options_.writes_blocked();
  if (!state.blocked) return std::nullopt;
  return state;
}

ToolContext CallRunner::ContextFor(Work& work) {
  const uint64_t generation = work.generation;
  ToolContext ctx(
      std::move(work.arguments), work.control->token(),
      [this, generation](double progress, std::optional<double> total, std::string text) {
        inbox_.Progress(generation, progress, total, std::move(text));
      });
  ctx.set_log(
      [this, generation, tool = work.identity.tool_name](LoggingLevel level, std::string message) {
        inbox_.Log(generation, tool, level, std::move(message));
      });
  if (work.identity.may_become_task && work.identity.task_id.empty()) {
    // What the task stores as its request: the call's own name, arguments and _meta.
    Json params = {{"name", work.identity.tool_name}, {"arguments", ctx.arguments()}};
    if (!work.meta.is_null()) params["_meta"] = work.meta;
    ctx.set_become_task(
        [this, generation, params = std::move(params)] { inbox_.BecomeTask(generation, params); });
  }
  ctx.set_meta(std::move(work.meta));
  ctx.set_key_components(work.identity.tool->spec().key_components);
  ctx.set_identity(std::move(work.identity));
  ctx.set_clock(&clock_);
  return ctx;
}

void CallRunner::Run(Work& work, const RetryCall& call) {
  // Cancelled, timed out or shut down while queued: it never runs, and the coordinator
  // freed its slot already.
  if (!work.control->TryStart()) {
    // A task's work, or a call that may have become one (PromoteToTask) while queued.
    if (!work.identity.task_id.empty() || work.identity.modern) {
      inbox_.NeverStarted(work.generation, work.identity.task_id);
    }
    return;
  }
  const uint64_t generation = work.generation;
  Tool& tool = *work.identity.tool;
  const CallTracer* tracer = work.tracer.get();
  ToolContext ctx = ContextFor(work);
  const CancellationToken token = work.control->token();
  RetryExecutor::Deps deps;
  deps.now = [this] { return clock_.Now(); };
  deps.random = options_.random ? options_.random : ThreadRandom;
  deps.wait = [token](TimePoint until) { return token.WaitUntil(until); };
  deps.cancelled = [token] { return token.IsCancelled(); };
  deps.budgets = &retry_budgets_;
  const std::shared_ptr<CircuitBreaker> breaker =
      breakers_.For(tool.spec().name, call.backend, BreakerSettingsFor(call.policy));
  bool threw = false;
  bool stopped = false;
  const auto run = [&]() {
    return RetryExecutor::Run(
        call, deps,
        [&](const AttemptInfo& info) {
          ctx.set_deadline(info.deadline);
          ctx.set_attempt_started(info.started);
          ctx.set_attempt(info.attempt, info.attempt_id);
          AttemptOutcome attempt = GuardedAttempt(tool, ctx, *breaker, *work.control, tracer, info);
          threw = attempt.threw;
          stopped = attempt.stopped;
          return AttemptResult(std::move(attempt.result), std::move(attempt.failure));
        },
        [&](const RetryEvent& event) {
          if (tracer != nullptr) tracer->Retry(event);
          if (event.kind != RetryEvent::Kind::kRetryScheduled) return;
          inbox_.RetryScheduled(generation, Millis(event.decision.delay_ms));
        });
  };
  RetryOutcome outcome = run();
  // A legacy call's questions go to the client as requests, and the tool runs again with
  // the answers (server/input/client_requests.h), round after round.
  for (int round = 0; round < kMaxAskRounds && !outcome.cancelled && !stopped &&
                      IsInputRequired(outcome.result) && KeelAsks(ctx.identity());
       ++round) {
    std::optional<Json> answered = AskClient(generation, ctx, call.call_deadline, outcome.result);
    if (!answered) {
      stopped = ctx.cancelled();
      break;  // outcome.result is now what ends the call
    }
    CallIdentity next = ctx.identity();
    auto input = std::make_shared<InputRound>(*next.input);
    for (const auto& [key, answer] : answered->items()) input->answers[key] = answer;
    input->round += 1;
    if (const auto state = outcome.result.find("requestState");
        state != outcome.result.end() && state->is_string()) {
      input->tool_state = state->get<std::string>();
    }
    next.input = std::move(input);
    ctx.set_identity(std::move(next));
    outcome = run();
  }
  Json result = std::move(outcome.result);
  AddCorrelationId(result, call.intent_id);
  inbox_.Returned(generation, ctx.identity().task_id, std::move(result), threw,
                  stopped || outcome.cancelled);
}

std::optional<Json> CallRunner::AskClient(uint64_t generation, const ToolContext& ctx,
                                          TimePoint call_deadline, Json& result) {
  const Json requests = result.value("inputRequests", Json());
  const InputRound& input = *ctx.identity().input;
  const Json missing = MissingCapabilities(requests, input.client_capabilities);
  if (!requests.is_object() || requests.empty()) {
    result = InputUnavailable(ctx.identity().tool_name, result, "it asked nothing keel can send");
    return std::nullopt;
  }
  if (!missing.empty()) {
    result = InputUnavailable(ctx.identity().tool_name, result,
                              "the client did not declare " + DumpCompact(missing) +
                                  " at initialize, so it cannot be asked",
                              missing);
    return std::nullopt;
  }
  auto box = std::make_shared<ClientAnswers>();
  inbox_.AskClient(generation, requests, box);
  // The call deadline is on this runner's clock; the wait is on the steady clock.
  const TimePoint until = std::chrono::steady_clock::now() + (call_deadline - clock_.Now());
  ClientAnswers::Outcome outcome = box->Wait(ctx.token(), until);
  inbox_.AskEnded(generation, box);
  switch (outcome.end) {
    case ClientAnswers::End::kAnswered:
      return std::move(outcome.answers);
    case ClientAnswers::End::kError:
      result = ErrorResult("Tool '" + ctx.identity().tool_name + "' asked the client (" +
                               outcome.error.value("method", std::string()) +
                               ") and it answered with an error; nothing was done.",
                           Json{{"type", "input_failed"},
                                {"key", outcome.error.value("key", Json())},
                                {"clientError", outcome.error.value("error", Json())}});
      return std::nullopt;
    case ClientAnswers::End::kAbandoned:
    case ClientAnswers::End::kCancelled:
    case ClientAnswers::End::kTimedOut:
      // The coordinator settled the call (or will at its deadline): this result is dropped.
      result = ErrorResult(
          "Tool '" + ctx.identity().tool_name +
              "' stopped waiting for the client's answer: " + outcome.error.get<std::string>(),
          Json{{"type", "input_unavailable"}});
      return std::nullopt;
  }
  return std::nullopt;
}

AttemptOutcome CallRunner::GuardedAttempt(Tool& tool, ToolContext& ctx, CircuitBreaker& breaker,
                                          const CallControl& control, const CallTracer* tracer,
                                          const AttemptInfo& info) {
  const ToolSpec& spec = tool.spec();
  const BreakerPermit permit = breaker.Acquire();
  if (!permit.admitted) {
    // CB-2: rejected without touching the backend; a read falls back to its last good result.
    const CircuitRejection rejection{std::string(BreakerStateName(permit.state)),
                                     spec.backend_or_name(), permit.retry_after_ms.value_or(0),
                                     BreakerIncidentId(spec.backend_or_name(), permit.generation)};
    std::optional<CachedResult> cached;
    if (!IsWrite(spec.effect)) cached = last_good_.Get(spec.name, ctx.arguments());
    AttemptOutcome rejected =
        ClassifyAttempt(DegradedAnswer(spec, rejection, cached, WallClockMs()), false, false);
    if (tracer != nullptr) tracer->Breaker("breaker.rejected", info, permit, breaker.Snapshot());
    return rejected;
  }
  if (permit.would_reject && tracer != nullptr) {
    tracer->Breaker("breaker.would_have", info, permit, breaker.Snapshot());
  }
  const TimePoint start = clock_.Now();
  AttemptOutcome attempt = RunAttempt(tool, ctx, tracer, info, permit);
  // A transition this result causes is traced once, by this call: the generation moves
  // inside Record. (Open -> half-open happens in Acquire and shows as probe attempts.)
  const uint64_t generation_before = tracer != nullptr ? breaker.Snapshot().generation : 0;
  // A call the client withdrew ends however the tool stops (a killed command says
  // "ambiguous"): the cancel, not the backend, ended it.
  breaker.Record(permit, control.withdrawn() ? BreakerOutcome::kIgnored : BreakerOutcomeOf(attempt),
                 clock_.Now() - start);
  if (tracer != nullptr) {
    const BreakerSnapshot after = breaker.Snapshot();
    if (after.generation != generation_before) {
      tracer->Breaker("breaker.state", info, permit, after);
    }
  }
  if (!IsWrite(spec.effect) && !attempt.stopped && !attempt.is_error()) {
    last_good_.Put(spec.name, ctx.arguments(), attempt.result, WallClockMs());
  }
  return attempt;
}

AttemptOutcome CallRunner::RunAttempt(Tool& tool, ToolContext& ctx, const CallTracer* tracer,
                                      const AttemptInfo& info, const BreakerPermit& permit) {
  std::string span;
  TimePoint start;
  if (tracer != nullptr) {
    start = clock_.Now();
    span = tracer->AttemptStart(info, &permit);
  }
  Json result;
  bool threw = false;
  bool stopped = false;
  try {
    const std::optional<KillSwitchState> blocked = WriteBlocked(tool);
    result = blocked ? KillSwitchAnswer(tool.spec(), *blocked) : tool.Call(ctx);
  } catch (const CallCancelled&) {
    result = TextResult("cancelled");  // the call settled already; this is dropped
    stopped = true;
  } catch (const std::exception& e) {
    spdlog::error("tool '{}' threw: {}", tool.spec().name, e.what());
    result = ErrorResult("Internal error in tool '" + tool.spec().name + "'",
                         Json{{"type", "internal_error"}});
    threw = true;
  }
  // Every tool's result passes here first: nothing below may copy or encode a value nested
  // deeper than keel can recurse (bounded_json.h).
  AttemptOutcome attempt =
      ClassifyAttempt(BoundedResult(std::move(result), tool.spec().name), threw, stopped);
  if (tracer != nullptr) {
    const double elapsed_ms =
        std::chrono::duration<double, std::milli>(clock_.Now() - start).count();
    tracer->AttemptEnd(span, info, attempt, elapsed_ms);
  }
  return attempt;
}

}  // namespace keel
