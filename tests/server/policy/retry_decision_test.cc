// Retry decision (RET-1, RET-2, BUD-2): every cell of the effect x failure x key matrix,
// then the gates in order (max attempts, the call's remaining budget, the backend's retry
// budget), the retry-after hint, and a whole call driven by an injected clock and RNG.
#include "server/policy/retry_decision.h"

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"
#include "server/policy/attempt_ids.h"
#include "server/policy/backoff.h"

namespace keel::retry_decision_test {
namespace {

using E = EffectClass;
using F = FailureClass;
using R = RetryReason;

struct Cell {
  EffectClass effect;
  FailureClass failure;
  bool keyed;
  RetryReason reason;
  bool needs_reconciliation;
};

// The matrix of retry_decision.h, all 4 x 4 x 2 cells, written out.
const std::vector<Cell> kMatrix = {
    // read: the key changes nothing
    {E::kRead, F::kNotSent, false, R::kRetry, false},
    {E::kRead, F::kRejectedTransient, false, R::kRetry, false},
    {E::kRead, F::kRejectedPermanent, false, R::kPermanentFailure, false},
    {E::kRead, F::kAmbiguous, false, R::kRetry, false},
    {E::kRead, F::kNotSent, true, R::kRetry, false},
    {E::kRead, F::kRejectedTransient, true, R::kRetry, false},
    {E::kRead, F::kRejectedPermanent, true, R::kPermanentFailure, false},
    {E::kRead, F::kAmbiguous, true, R::kRetry, false},
    // expensive read: same rules as read
    {E::kExpensiveRead, F::kNotSent, false, R::kRetry, false},
    {E::kExpensiveRead, F::kRejectedTransient, false, R::kRetry, false},
    {E::kExpensiveRead, F::kRejectedPermanent, false, R::kPermanentFailure, false},
    {E::kExpensiveRead, F::kAmbiguous, false, R::kRetry, false},
    {E::kExpensiveRead, F::kNotSent, true, R::kRetry, false},
    {E::kExpensiveRead, F::kRejectedTransient, true, R::kRetry, false},
    {E::kExpensiveRead, F::kRejectedPermanent, true, R::kPermanentFailure, false},
    {E::kExpensiveRead, F::kAmbiguous, true, R::kRetry, false},
    // idempotent write with a key: retried even when ambiguous (same key, same arguments)
    {E::kIdempotentWrite, F::kNotSent, true, R::kRetry, false},
    {E::kIdempotentWrite, F::kRejectedTransient, true, R::kRetry, false},
    {E::kIdempotentWrite, F::kRejectedPermanent, true, R::kPermanentFailure, false},
    {E::kIdempotentWrite, F::kAmbiguous, true, R::kRetry, false},
    // idempotent write without a key: treated as unsafe
    {E::kIdempotentWrite, F::kNotSent, false, R::kRetry, false},
    {E::kIdempotentWrite, F::kRejectedTransient, false, R::kRetry, false},
    {E::kIdempotentWrite, F::kRejectedPermanent, false, R::kPermanentFailure, false},
    {E::kIdempotentWrite, F::kAmbiguous, false, R::kUnkeyedWrite, true},
    // unsafe write: a key does not make it safe
    {E::kUnsafeWrite, F::kNotSent, false, R::kRetry, false},
    {E::kUnsafeWrite, F::kRejectedTransient, false, R::kRetry, false},
    {E::kUnsafeWrite, F::kRejectedPermanent, false, R::kPermanentFailure, false},
    {E::kUnsafeWrite, F::kAmbiguous, false, R::kUnsafeWriteAmbiguous, true},
    {E::kUnsafeWrite, F::kNotSent, true, R::kRetry, false},
    {E::kUnsafeWrite, F::kRejectedTransient, true, R::kRetry, false},
    {E::kUnsafeWrite, F::kRejectedPermanent, true, R::kPermanentFailure, false},
    {E::kUnsafeWrite, F::kAmbiguous, true, R::kUnsafeWriteAmbiguous, true},
};

// Every gate open: first attempt, plenty of time, a token, retry 1 jitter = 125 ms.
RetryInput Open(EffectClass effect, FailureClass failure, bool keyed) {
  return RetryInput{.effect = effect,
                    .failure = failure,
                    .has_idempotency_key = keyed,
                    .attempt = 1,
                    .remaining_budget_ms = 60000,
                    .sample = 0.5,
                    .retry_token_available = true};
}

TEST_CASE("the retry matrix has one answer for each effect, failure and key", "[retry]") {
  REQUIRE(kMatrix.size() == 4 * 4 * 2);
  const Cell cell = GENERATE(from_range(kMatrix));
  CAPTURE(EffectClassName(cell.effect), FailureClassName(cell.failure), cell.keyed);
  const RetryDecision decision = Decide(Open(cell.effect, cell.failure, cell.keyed));
  CHECK(RetryReasonName(decision.reason) == RetryReasonName(cell.reason));
  CHECK(decision.retry == (cell.reason == R::kRetry));
  CHECK(decision.needs_reconciliation == cell.needs_reconciliation);
  CHECK(decision.delay_ms == (decision.retry ? 125 : 0));
}

TEST_CASE("an ambiguous unsafe write needs reconciliation even when no retry was left", "[retry]") {
  RetryInput input = Open(E::kUnsafeWrite, F::kAmbiguous, false);
  input.attempt = 3;  // the last of 3
  input.remaining_budget_ms = 0;
  input.retry_token_available = false;
  const RetryDecision decision = Decide(input);
  CHECK_FALSE(decision.retry);
  CHECK(decision.reason == R::kUnsafeWriteAmbiguous);
  CHECK(decision.needs_reconciliation);
}

TEST_CASE("a retry stops at max_attempts, the first attempt included", "[retry]") {
  RetryInput input = Open(E::kRead, F::kRejectedTransient, false);
  input.attempt = 2;
  CHECK(Decide(input).retry);
  input.attempt = 3;
  CHECK(Decide(input).reason == R::kMaxAttempts);
  input.attempt = 1;
  input.settings.max_attempts = 1;  // never retry
  CHECK(Decide(input).reason == R::kMaxAttempts);
}

TEST_CASE("a retry starts only if the budget covers backoff plus a useful attempt", "[retry]") {
  RetryInput input = Open(E::kRead, F::kAmbiguous, false);
  // Backoff 125 ms (retry 1, sample 0.5) + min_useful_attempt_ms 200 = 325 ms.
  input.remaining_budget_ms = 325;
  CHECK(Decide(input).retry);
  CHECK(Decide(input).delay_ms == 125);
  input.remaining_budget_ms = 324;
  CHECK(Decide(input).reason == R::kBudgetExhausted);
  input.remaining_budget_ms = -5;  // already past the deadline
  CHECK(Decide(input).reason == R::kBudgetExhausted);
}

TEST_CASE("a clamped retry-after hint sets the delay and counts against the budget", "[retry]") {
  RetryInput input = Open(E::kRead, F::kRejectedTransient, false);
  input.retry_after_ms = 60000;  // clamped to retry_after_cap_ms = 5000
  CHECK(Decide(input).delay_ms == 5000);
  input.remaining_budget_ms = 5199;  // 5000 + 200 does not fit
  CHECK(Decide(input).reason == R::kBudgetExhausted);
  input.remaining_budget_ms = 5200;
  CHECK(Decide(input).retry);
  input.retry_after_ms = 900;
  CHECK(Decide(input).delay_ms == 900);
}

TEST_CASE("an empty retry budget refuses a retry that time would allow", "[retry]") {
  RetryInput input = Open(E::kRead, F::kRejectedTransient, false);
  input.retry_token_available = false;
  CHECK(Decide(input).reason == R::kRetryBudgetEmpty);
  CHECK(Decide(input).delay_ms == 0);
  input.remaining_budget_ms = 0;  // the deadline gate is checked first
  CHECK(Decide(input).reason == R::kBudgetExhausted);
}

TEST_CASE("DecideAndWithdraw takes a token only for a retry", "[retry]") {
  RetryBudget budget(RetryBudgetSettings{.ratio = 0.2, .burst = 2});
  CHECK(DecideAndWithdraw(Open(E::kRead, F::kRejectedPermanent, false), budget).reason ==
        R::kPermanentFailure);
  CHECK(budget.tokens() == 2);
  CHECK(DecideAndWithdraw(Open(E::kRead, F::kAmbiguous, false), budget).retry);
  CHECK(DecideAndWithdraw(Open(E::kRead, F::kAmbiguous, false), budget).retry);
  CHECK(budget.tokens() == 0);
  CHECK(DecideAndWithdraw(Open(E::kRead, F::kAmbiguous, false), budget).reason ==
        R::kRetryBudgetEmpty);
}

TEST_CASE("every attempt gets its own id under the call's intent id", "[retry]") {
  CHECK(AttemptId("intent-7", 1) == "intent-7/1");
  CHECK(AttemptId("intent-7", 2) == "intent-7/2");
  CHECK(AttemptId("intent-7", 2) != AttemptId("intent-7", 3));
}

// One call driven end to end: each attempt times out (ambiguous) after attempt_ms, the
// clock moves by the attempt and the backoff, and the decision sees what time is left.
struct CallRun {
  std::vector<std::string> attempt_ids;
  std::vector<int64_t> delays_ms;
  RetryReason final_reason = R::kRetry;
};

CallRun RunFailingCall(int64_t call_budget_ms, int64_t attempt_ms, uint64_t seed) {
  FakeClock clock;
  std::mt19937_64 rng(seed);
  RetryBudget budget(RetryBudgetSettings{});
  const auto deadline = clock.Now() + std::chrono::milliseconds(call_budget_ms);
  CallRun run;
  budget.RecordFirstAttempt();
  for (int attempt = 1;; ++attempt) {
    run.attempt_ids.push_back(AttemptId("intent-1", attempt));
    clock.Advance(std::chrono::milliseconds(attempt_ms));  // the attempt times out
    const auto remaining =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock.Now());
    RetryInput input{.effect = E::kIdempotentWrite,
                     .failure = F::kAmbiguous,
                     .has_idempotency_key = true,
                     .attempt = attempt,
                     .remaining_budget_ms = remaining.count(),
                     .sample = UnitSample(rng())};
    const RetryDecision decision = DecideAndWithdraw(input, budget);
    if (!decision.retry) {
      run.final_reason = decision.reason;
      return run;
    }
    run.delays_ms.push_back(decision.delay_ms);
    clock.Advance(std::chrono::milliseconds(decision.delay_ms));
  }
}

TEST_CASE("a keyed write that keeps timing out is retried until max_attempts", "[retry]") {
  const CallRun run = RunFailingCall(55000, 10000, 42);
  CHECK(run.attempt_ids == std::vector<std::string>{"intent-1/1", "intent-1/2", "intent-1/3"});
  CHECK(run.final_reason == R::kMaxAttempts);
  REQUIRE(run.delays_ms.size() == 2);
  CHECK(run.delays_ms[0] < 250);  // retry 1: U(0, 250)
  CHECK(run.delays_ms[1] < 500);  // retry 2: U(0, 500)
}

TEST_CASE("a call whose attempts used up its budget is not retried again", "[retry]") {
  // 20 s attempts in a 30 s budget: after the first, 10 s are left and a retry starts;
  // after the second the deadline has passed.
  const CallRun run = RunFailingCall(30000, 20000, 7);
  CHECK(run.attempt_ids == std::vector<std::string>{"intent-1/1", "intent-1/2"});
  CHECK(run.final_reason == R::kBudgetExhausted);
}

}  // namespace
}  // namespace keel::retry_decision_test
