#include "server/policy/retry_decision.h"

#include <cassert>

#include "server/policy/backoff.h"

namespace keel {
namespace {

RetryDecision Refuse(RetryReason reason, bool needs_reconciliation = false) {
  return RetryDecision{.retry = false,
                       .delay_ms = 0,
                       .reason = reason,
                       .needs_reconciliation = needs_reconciliation};
}

// The matrix in the header: nullopt when the failure may be retried, else the refusal.
std::optional<RetryDecision> Classify(const RetryInput& input) {
  switch (input.failure) {
    case FailureClass::kNotSent:
    case FailureClass::kRejectedTransient:
      return std::nullopt;
    case FailureClass::kRejectedPermanent:
      return Refuse(RetryReason::kPermanentFailure);
    case FailureClass::kAmbiguous:
      switch (input.effect) {
        case EffectClass::kRead:
        case EffectClass::kExpensiveRead:
          return std::nullopt;
        case EffectClass::kIdempotentWrite:
          if (input.has_idempotency_key) return std::nullopt;
          return Refuse(RetryReason::kUnkeyedWrite, /*needs_reconciliation=*/true);
        case EffectClass::kUnsafeWrite:
          return Refuse(RetryReason::kUnsafeWriteAmbiguous, /*needs_reconciliation=*/true);
      }
      break;
  }
  // Unreachable for valid enums; refusing is the safe answer for a write.
  return Refuse(RetryReason::kUnsafeWriteAmbiguous, IsWrite(input.effect));
}

}  // namespace

std::string_view RetryReasonName(RetryReason reason) {
  switch (reason) {
    case RetryReason::kRetry:
      return "retry";
    case RetryReason::kMaxAttempts:
      return "max_attempts";
    case RetryReason::kPermanentFailure:
      return "permanent_failure";
    case RetryReason::kUnsafeWriteAmbiguous:
      return "unsafe_write_ambiguous";
    case RetryReason::kUnkeyedWrite:
      return "unkeyed_write";
    case RetryReason::kBudgetExhausted:
      return "budget_exhausted";
    case RetryReason::kRetryBudgetEmpty:
      return "retry_budget_empty";
  }
  return "max_attempts";
}

RetryDecision Decide(const RetryInput& input) {
  assert(input.attempt >= 1);
  if (auto refusal = Classify(input)) return *refusal;
  if (input.attempt >= input.settings.max_attempts) return Refuse(RetryReason::kMaxAttempts);
  // The retry after attempt n is retry n.
  const int64_t delay_ms =
      RetryDelayMs(input.settings, input.attempt, input.sample, input.retry_after_ms);
  if (input.remaining_budget_ms < delay_ms + input.settings.min_useful_attempt_ms) {
    return Refuse(RetryReason::kBudgetExhausted);
  }
  if (!input.retry_token_available) return Refuse(RetryReason::kRetryBudgetEmpty);
  return RetryDecision{.retry = true,
                       .delay_ms = delay_ms,
                       .reason = RetryReason::kRetry,
                       .needs_reconciliation = false};
}

RetryDecision DecideAndWithdraw(RetryInput input, RetryBudget& budget) {
  input.retry_token_available = budget.HasToken();
  RetryDecision decision = Decide(input);
  if (decision.retry) {
    [[maybe_unused]] const bool withdrawn = budget.TryWithdraw();
    assert(withdrawn);  // HasToken() said so, and nothing ran in between
  }
  return decision;
}

}  // namespace keel
