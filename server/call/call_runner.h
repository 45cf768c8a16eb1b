// CallRunner: the worker side of calls. For each admitted call or task's work it makes the
// job a worker runs: the attempts under the retry executor (RET-1, RET-2, BUD-2, OPS-1), each
// behind the tool's circuit breaker (CB-1, CB-2) with the kill switch (OPS-2) checked just
// before it, each classified once (AttemptOutcome) and traced (CallTracer). What a job learns
// (progress, log messages, scheduled retries, its return) goes back through a CallInbox::Port.
//
// Threads: Job() runs on the loop; jobs run on workers, concurrently. The state the runner
// owns — breakers per (tool, backend), last good results, retry budgets per backend — is
// thread-safe. The clock, random source and kill switch it is handed must be thread-safe too.
// Lifetime: a job holds the runner by shared_ptr, so a tool that returns after the Session is
// gone (a test harness tearing down while a worker still runs) finds it alive; nothing here
// refers back to the Session (see CallInbox).
// Time: workers read `clock` (the steady clock in production, like the loop's); every
// deadline a tool waits within (ToolContext::deadline, remaining) is on it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ledger/kill_switch.h"
#include "server/call/attempt_outcome.h"
#include "server/call/call_control.h"
#include "server/call/call_identity.h"
#include "server/call/call_inbox.h"
#include "server/call/call_tracer.h"
#include "server/call/degraded_answer.h"
#include "server/catalog/tool.h"
#include "server/policy/breaker_registry.h"
#include "server/policy/retry_executor.h"
#include "server/runtime/clock.h"
#include "server/runtime/worker_pool.h"

namespace keel {

using Json = nlohmann::json;

class CallRunner : public std::enable_shared_from_this<CallRunner> {
 public:
  struct Options {
    // The kill switch for writes (OPS-2), read just before a write-class attempt would start.
    // Null: writes are never blocked.
    std::function<KillSwitchState()> writes_blocked;
    // 64 random bits for backoff jitter. Null: a per-thread std::mt19937_64.
    std::function<uint64_t()> random;
    // What workers read the time from; it must outlive the runner. Null: the steady clock.
    const Clock* clock = nullptr;
  };

  // The work of one admitted call or task (built on the loop).
  struct Work {
    uint64_t generation = 0;
    std::shared_ptr<CallControl> control;  // shared with the coordinator
    CallIdentity identity;                 // with its correlation id
    ToolPolicy policy;                     // the tool's effective policy
    RetryBudgetSettings budget;            // its backend's retry budget
    Duration max;                          // bounds the whole call, from now
    Json arguments;
    Json meta;                                 // the request's _meta, as the tool sees it
    std::shared_ptr<const CallTracer> tracer;  // null: not traced
  };

  CallRunner(Options options, CallInbox::Port inbox);
  CallRunner(const CallRunner&) = delete;
  CallRunner& operator=(const CallRunner&) = delete;

  // The job for `work`; its call deadline is the clock's now + work.max.
  WorkerPool::Job Job(Work work);

 private:
  // The job's body, on a worker.
  void Run(Work& work, const RetryCall& call);
  ToolContext ContextFor(Work& work);
  // One attempt behind the tool's breaker: rejected fast with a degraded answer while open,
  // else run and recorded (not when the client withdrew the call meanwhile: CallControl); a
  // read's success becomes its last good result.
  AttemptOutcome GuardedAttempt(Tool& tool, ToolContext& ctx, CircuitBreaker& breaker,
                                const CallControl& control, const CallTracer* tracer,
                                const AttemptInfo& info);
  // One attempt: the kill switch, the tool, its classification and trace records.
  AttemptOutcome RunAttempt(Tool& tool, ToolContext& ctx, const CallTracer* tracer,
                            const AttemptInfo& info, const BreakerPermit& permit);
  // The kill switch's state when it blocks this write-class tool (on, or unreadable).
  std::optional<KillSwitchState> WriteBlocked(const Tool& tool) const;
  // A legacy call of a tool that asks for input: keel itself sends the tool's questions to
  // the client (InputRound::server_asks) instead of answering an InputRequiredResult.
  static bool KeelAsks(const CallIdentity& call);
  // Sends the questions of `result` (the tool's AskForInput) to the client and waits for
  // the answers, the call's cancellation or its deadline. The answers by key; or nullopt
  // with `result` replaced by what ends the call (the client lacks a capability, answered
  // an error, or the wait ended without answers).
  std::optional<Json> AskClient(uint64_t generation, const ToolContext& ctx,
                                TimePoint call_deadline, Json& result);

  Options options_;
  CallInbox::Port inbox_;
  SteadyClock steady_;
  const Clock& clock_;
  BreakerRegistry breakers_{clock_};  // per (tool, backend) (CB-1)
  LastGoodResults last_good_;         // reads' fallback while open (CB-2)
  RetryBudgetPool retry_budgets_;     // per backend (BUD-2)
};

}  // namespace keel
