// RetryExecutor (RET-1, RET-2, BUD-2, OPS-1): runs one call's attempts on a worker thread:
// attempt, classify the result (failure_classify.h), decide (retry_decision.h), wait the
// backoff, attempt again under the same intent id — until success, a refusal, or the call's
// budget runs out. Everything that varies is injected (clock, RNG, the wait), so tests force
// every path without sleeping.
//
// Threads: Run() is called on worker threads, concurrently for different calls. The only
// shared state is the RetryBudgetPool, which is thread-safe. The executor object itself is
// stateless apart from its injected functions and may be shared.
//
// Contract of Run():
//  1. Attempt 1 always runs (the call was admitted; the kill switch, approval and argument
//     checks happen before). Each attempt n gets AttemptId(intent_id, n) and a deadline:
//     now + policy.timeouts.attempt_ms when that comes before call_deadline, else
//     call_deadline + kAfterCallDeadline. In the second case the call's own maximum timeout
//     ends the call (the coordinator answers the timeout and cancels the attempt), so the
//     attempt's deadline lies a moment after it: a tool that stops at its deadline (a
//     command killed, an upstream given up) must not race the coordinator's timer with an
//     attempt_timeout of its own at about the same instant. The moment bounds a tool that
//     ignores the cancel.
//  2. A first attempt deposits in the backend's retry budget (RecordFirstAttempt) before it
//     runs; a retry withdraws a token (only when the decision is to retry).
//  3. After a failed attempt (its AttemptResult's failure), Decide() is asked with the
//     remaining call budget (call_deadline - now, in ms), one RNG sample and the backend's
//     token. On retry: event kRetryScheduled, then wait(delay); if the wait reports
//     cancellation, Run returns at once with cancelled = true and makes no further attempt.
//     On refusal: event kRetrySuppressed (with the reason) — except after a success, and
//     except the max_attempts refusal of a call whose policy allows one attempt only
//     (nothing was ever going to retry it; no event then).
//  4. Shadow mode (call.shadow): the decision is computed exactly as above, but no retry
//     happens and no token is withdrawn: event kWouldHave with the decision, and Run returns
//     the first attempt's result. Behaviour is that of max_attempts = 1.
//  5. needs_reconciliation (an ambiguous unsafe or unkeyed write): the returned result is
//     the last attempt's result with structuredContent.error.needs_reconciliation = true,
//     error.effect = "unknown", and a text block saying the effect may have happened and is
//     not retried automatically (look the key up, or reconcile by hand). Outcome says so.
//  6. The cancellation check: before each retry's attempt, `cancelled()` is asked; once it
//     is true no further attempt starts.
//  7. The result returned is always the last attempt's (annotated per 5), and
//     outcome.attempts is the number of attempts that ran.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/policy/failure_classify.h"
#include "server/policy/policy.h"
#include "server/policy/retry_budget.h"
#include "server/policy/retry_decision.h"
#include "server/runtime/clock.h"

namespace keel {

// Every backend's retry budget, for the whole process. Thread-safe. A bucket is created
// full on first use with the settings the caller passes; when later calls pass different
// settings (a policy reload changed them), the bucket is replaced by a full new one.
class RetryBudgetPool {
 public:
  void RecordFirstAttempt(std::string_view backend, const RetryBudgetSettings& settings);
  // DecideAndWithdraw on the backend's bucket, under the pool's lock.
  RetryDecision DecideAndWithdraw(std::string_view backend, const RetryBudgetSettings& settings,
                                  const RetryInput& input);
  // Decide with the bucket's HasToken(), withdrawing nothing (shadow mode).
  RetryDecision DecideOnly(std::string_view backend, const RetryBudgetSettings& settings,
                           const RetryInput& input);
  double Tokens(std::string_view backend) const;  // 0 for a backend never used

 private:
  struct Entry {
    RetryBudgetSettings settings;
    RetryBudget budget;
  };
  RetryBudget& BucketLocked(std::string_view backend, const RetryBudgetSettings& settings);

  mutable std::mutex mu_;
  std::map<std::string, Entry, std::less<>> buckets_;
};

struct RetryEvent {
  enum class Kind { kRetryScheduled, kRetrySuppressed, kWouldHave };
  Kind kind = Kind::kRetryScheduled;
  int attempt = 1;         // the attempt that failed
  AttemptFailure failure;  // how it failed
  RetryDecision decision;  // what was decided (for kWouldHave: what would have been)
  int64_t remaining_budget_ms = 0;
};
// "retry.scheduled", "retry.suppressed", "retry.would_have".
std::string_view RetryEventName(RetryEvent::Kind kind);

// Contract 1: how long after the call's deadline an attempt's own deadline lies, when the
// call's comes first.
constexpr Duration kAfterCallDeadline = Millis(500);

struct AttemptInfo {
  int attempt = 1;         // 1-based
  std::string attempt_id;  // AttemptId(intent_id, attempt)
  TimePoint started;       // when the attempt started, on the executor's clock
  TimePoint deadline;      // started + attempt_ms, or call deadline + kAfterCallDeadline
};

// What one attempt returned and how it failed (ClassifyResult; nullopt: success), classified
// once, by whoever ran the attempt; the executor decides from `failure` and never reads the
// result again. Made from a bare result, it classifies the result itself.
struct AttemptResult {
  AttemptResult(nlohmann::json returned)  // implicit: an attempt may return a bare result
      : result(std::move(returned)), failure(ClassifyResult(result)) {}
  AttemptResult(nlohmann::json returned, std::optional<AttemptFailure> classified)
      : result(std::move(returned)), failure(std::move(classified)) {}

  nlohmann::json result;
  std::optional<AttemptFailure> failure;
};

struct RetryCall {
  std::string intent_id;  // the call's id; attempts are "<intent_id>/<n>"
  EffectClass effect = EffectClass::kRead;
  bool has_idempotency_key = false;
  std::string backend;
  ToolPolicy policy;           // timeouts.attempt_ms and retry are used
  RetryBudgetSettings budget;  // the backend's retry budget settings
  TimePoint call_deadline;     // when the call's budget (max timeout) ends
  bool shadow = false;
};

struct RetryOutcome {
  nlohmann::json result;  // the last attempt's result (annotated when needs_reconciliation)
  int attempts = 0;
  bool cancelled = false;  // a backoff wait or the pre-attempt check saw cancellation
  bool needs_reconciliation = false;
  std::optional<RetryDecision> last_decision;  // after the last failed attempt, if any
};

class RetryExecutor {
 public:
  struct Deps {
    std::function<TimePoint()> now;    // the steady clock
    std::function<uint64_t()> random;  // 64 random bits per call (UnitSample)
    // Waits until `until` or cancellation; returns true if cancelled.
    std::function<bool(TimePoint until)> wait;
    std::function<bool()> cancelled;     // the call was cancelled or timed out
    RetryBudgetPool* budgets = nullptr;  // required
  };
  using AttemptFn = std::function<AttemptResult(const AttemptInfo&)>;
  using EventFn = std::function<void(const RetryEvent&)>;  // may be null

  static RetryOutcome Run(const RetryCall& call, const Deps& deps, const AttemptFn& attempt,
                          const EventFn& on_event);
};

}  // namespace keel
