// Retry decision (RET-1, RET-2, BUD-2): after an attempt fails, whether to retry, after how
// long, and why (or why not). Pure: the caller supplies the remaining call budget, the
// random sample (from its injected RNG) and whether its backend's retry budget has a token;
// nothing here reads a clock, sleeps, or does I/O. The catalog's effect class is the
// authority, not the client's annotations (RET-3).
//
// The matrix. "retry" means: retry if the gates below let it; "never" cells refuse with the
// reason shown whatever the gates say. The key column is "the call carries an idempotency
// key"; for reads the key changes nothing.
//
//   effect class            key | not_sent | rejected_transient | rejected_permanent | ambiguous
//   ------------------------+---+----------+--------------------+--------------------+--------------------------
//   read                    | - | retry    | retry              | permanent_failure  | retry
//   expensive_read          | - | retry    | retry              | permanent_failure  | retry
//   idempotent_write        | y | retry    | retry              | permanent_failure  | retry (same
//   key, same args) idempotent_write        | n | retry    | retry              | permanent_failure
//   | unkeyed_write      [R] unsafe_write            | - | retry    | retry              |
//   permanent_failure  | unsafe_write_ambiguous [R]
//
//   [R] needs_reconciliation = true: the effect may have happened; the caller marks the
//       ledger row needs_reconciliation and the result says so. Never retried automatically.
//
// Why each column:
//   not_sent            nothing reached the backend, so a repeat cannot double an effect:
//                       safe for every effect class.
//   rejected_transient  the backend refused it (transport_unavailable, 429, 503): nothing
//                       happened, so even an unsafe write may retry.
//   rejected_permanent  invalid_arguments, policy_denied, approval_required, other 4xx: a
//                       repeat gets the same answer.
//   ambiguous           sent, then a timeout or lost response: it may have happened. Only
//                       effect-free reads and keyed idempotent writes (the key lets the
//                       backend recognise the repeat; the caller must resend the same key and
//                       identical arguments) may repeat it.
//   An idempotent write WITHOUT a key is treated as an unsafe write (the backend has nothing
//   to recognise a repeat by); its ambiguous refusal is reported as `unkeyed_write`. A key on
//   an unsafe write does not make it safe (by definition a repeat may redo it), so the key
//   is ignored for unsafe writes.
//
// The gates, checked in this order after the matrix allows a retry (the first that fails
// names the reason):
//   1. attempt < settings.max_attempts                                  else max_attempts
//   2. remaining_budget_ms >= delay_ms + settings.min_useful_attempt_ms  else budget_exhausted
//      (BUD-2: no retry without budget; delay_ms includes a clamped retry-after hint)
//   3. a retry-budget token is available                                else retry_budget_empty
// Every retry, not_sent included, counts as an attempt and needs a token: a backend that
// refuses connections is also one that a storm would hurt.
//
// Invariants of the result:
//  1. retry == (reason == RetryReason::kRetry).
//  2. delay_ms is 0 unless retry; then it is RetryDelayMs(settings, attempt, sample, hint).
//  3. needs_reconciliation only for the [R] cells, whatever the gates say (an ambiguous
//     unsafe write on the last attempt still needs reconciliation).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "server/policy/policy_types.h"
#include "server/policy/retry_budget.h"

namespace keel {

enum class RetryReason {
  kRetry,
  kMaxAttempts,
  kPermanentFailure,
  kUnsafeWriteAmbiguous,
  kUnkeyedWrite,
  kBudgetExhausted,   // the call's remaining time does not cover backoff + a useful attempt
  kRetryBudgetEmpty,  // the backend's retry budget (token bucket) is empty
};
// "retry", "max_attempts", "permanent_failure", "unsafe_write_ambiguous", "unkeyed_write",
// "budget_exhausted", "retry_budget_empty".
std::string_view RetryReasonName(RetryReason reason);

struct RetryInput {
  EffectClass effect = EffectClass::kRead;
  FailureClass failure = FailureClass::kNotSent;
  bool has_idempotency_key = false;
  int attempt = 1;  // 1-based: the attempt that just failed
  RetrySettings settings;
  int64_t remaining_budget_ms = 0;        // of the whole call, at the moment of deciding
  std::optional<int64_t> retry_after_ms;  // the backend's hint, if it gave one
  double sample = 0.0;                    // uniform in [0, 1), from the caller's RNG
  bool retry_token_available = true;      // the backend's RetryBudget::HasToken()
};

struct RetryDecision {
  bool retry = false;
  int64_t delay_ms = 0;
  RetryReason reason = RetryReason::kMaxAttempts;
  bool needs_reconciliation = false;
};

RetryDecision Decide(const RetryInput& input);

// Decide with the backend's bucket: its HasToken() replaces input.retry_token_available,
// and a token is withdrawn only if the decision is to retry. (The caller still deposits
// with budget.RecordFirstAttempt() when a call makes its first attempt.)
RetryDecision DecideAndWithdraw(RetryInput input, RetryBudget& budget);

}  // namespace keel
