#include "server/policy/retry_executor.h"

#include <algorithm>
#include <cassert>

#include "server/policy/attempt_ids.h"
#include "server/policy/backoff.h"

namespace keel {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kReconcileText =
    "keel did not retry: the effect may have happened (ambiguous failure of an unsafe or "
    "unkeyed write). Look the idempotency key up (ledger_lookup, or the backend's own lookup "
    "tool), or reconcile by hand, before trying again.";

bool SameSettings(const RetryBudgetSettings& a, const RetryBudgetSettings& b) {
  return a.ratio == b.ratio && a.burst == b.burst;
}

// Contract 5: marks the effect unknown and says so in a text block; existing fields stay.
void AnnotateNeedsReconciliation(Json& result) {
  if (!result.is_object()) result = Json::object();
  Json& structured = result["structuredContent"];
  if (!structured.is_object()) structured = Json::object();
  Json& error = structured["error"];
  if (!error.is_object()) error = Json::object();
  error["needs_reconciliation"] = true;
  error["effect"] = "unknown";

  Json& content = result["content"];
  if (!content.is_array()) content = Json::array();
  Json block = Json::object();
  block["type"] = "text";
  block["text"] = kReconcileText;
  content.push_back(std::move(block));
  result["isError"] = true;
}

int64_t RemainingMs(TimePoint now, TimePoint deadline) {
  if (deadline <= now) return 0;
  return std::chrono::duration_cast<Millis>(deadline - now).count();
}

// Nothing was ever going to retry a call whose policy allows one attempt: no event.
bool SilentRefusal(const RetryDecision& decision, const RetrySettings& settings) {
  return decision.reason == RetryReason::kMaxAttempts && settings.max_attempts <= 1;
}

}  // namespace

RetryBudget& RetryBudgetPool::BucketLocked(std::string_view backend,
                                           const RetryBudgetSettings& settings) {
  auto it = buckets_.find(backend);
  if (it == buckets_.end()) {
    it = buckets_.emplace(std::string(backend), Entry{settings, RetryBudget(settings)}).first;
  } else if (!SameSettings(it->second.settings, settings)) {
    // A policy reload changed the settings: start over with a full bucket.
    it->second = Entry{settings, RetryBudget(settings)};
  }
  return it->second.budget;
}

void RetryBudgetPool::RecordFirstAttempt(std::string_view backend,
                                         const RetryBudgetSettings& settings) {
  std::lock_guard<std::mutex> lock(mu_);
  BucketLocked(backend, settings).RecordFirstAttempt();
}

RetryDecision RetryBudgetPool::DecideAndWithdraw(std::string_view backend,
                                                 const RetryBudgetSettings& settings,
                                                 const RetryInput& input) {
  std::lock_guard<std::mutex> lock(mu_);
  return keel::DecideAndWithdraw(input, BucketLocked(backend, settings));
}

RetryDecision RetryBudgetPool::DecideOnly(std::string_view backend,
                                          const RetryBudgetSettings& settings,
                                          const RetryInput& input) {
  RetryInput copy = input;
  {
    std::lock_guard<std::mutex> lock(mu_);
    copy.retry_token_available = BucketLocked(backend, settings).HasToken();
  }
  return Decide(copy);
}

double RetryBudgetPool::Tokens(std::string_view backend) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = buckets_.find(backend);
  return it == buckets_.end() ? 0.0 : it->second.budget.tokens();
}

std::string_view RetryEventName(RetryEvent::Kind kind) {
  switch (kind) {
    case RetryEvent::Kind::kRetryScheduled:
      return "retry.scheduled";
    case RetryEvent::Kind::kRetrySuppressed:
      return "retry.suppressed";
    case RetryEvent::Kind::kWouldHave:
      return "retry.would_have";
  }
  return "retry.scheduled";
}

RetryOutcome RetryExecutor::Run(const RetryCall& call, const Deps& deps, const AttemptFn& attempt,
                                const EventFn& on_event) {
  assert(deps.now && deps.random && deps.wait && deps.cancelled && deps.budgets != nullptr);
  assert(attempt);
  const RetrySettings& settings = call.policy.retry;
  const auto emit = [&](RetryEvent::Kind kind, int n, const AttemptFailure& failure,
                        const RetryDecision& decision, int64_t remaining_ms) {
    if (!on_event) return;
    on_event(RetryEvent{.kind = kind,
                        .attempt = n,
                        .failure = failure,
                        .decision = decision,
                        .remaining_budget_ms = remaining_ms});
  };

  RetryOutcome outcome;
  for (int n = 1;; ++n) {
    // Contract 6: a retry does not start once the call is cancelled (or timed out).
    if (n > 1 && deps.cancelled()) {
      outcome.cancelled = true;
      break;
    }
    // Contract 2: the first attempt deposits before it runs.
    if (n == 1) deps.budgets->RecordFirstAttempt(call.backend, call.budget);

    const TimePoint start = deps.now();
    const TimePoint attempt_end = start + Millis(call.policy.timeouts.attempt_ms);
    const AttemptInfo info{.attempt = n,
                           .attempt_id = AttemptId(call.intent_id, n),
                           .started = start,
                           .deadline = attempt_end < call.call_deadline
                                           ? attempt_end
                                           : call.call_deadline + kAfterCallDeadline};
    AttemptResult attempted = attempt(info);
    outcome.result = std::move(attempted.result);
    outcome.attempts = n;

    const std::optional<AttemptFailure>& failure = attempted.failure;
    if (!failure) break;  // success

    const TimePoint now = deps.now();
    const int64_t remaining_ms = RemainingMs(now, call.call_deadline);
    const RetryInput input{.effect = call.effect,
                           .failure = failure->failure,
                           .has_idempotency_key = call.has_idempotency_key,
                           .attempt = n,
                           .settings = settings,
                           .remaining_budget_ms = remaining_ms,
                           .retry_after_ms = failure->retry_after_ms,
                           .sample = UnitSample(deps.random())};
    const RetryDecision decision =
        call.shadow ? deps.budgets->DecideOnly(call.backend, call.budget, input)
                    : deps.budgets->DecideAndWithdraw(call.backend, call.budget, input);
    outcome.last_decision = decision;
    if (decision.needs_reconciliation) {
      outcome.needs_reconciliation = true;
      AnnotateNeedsReconciliation(outcome.result);
    }

    if (call.shadow) {
      // Contract 4: record what would have happened; behave as max_attempts = 1.
      if (!SilentRefusal(decision, settings)) {
        emit(RetryEvent::Kind::kWouldHave, n, *failure, decision, remaining_ms);
      }
      break;
    }
    if (!decision.retry) {
      if (!SilentRefusal(decision, settings)) {
        emit(RetryEvent::Kind::kRetrySuppressed, n, *failure, decision, remaining_ms);
      }
      break;
    }
    emit(RetryEvent::Kind::kRetryScheduled, n, *failure, decision, remaining_ms);
    if (deps.wait(now + Millis(decision.delay_ms))) {
      outcome.cancelled = true;
      break;
    }
  }
  return outcome;
}

}  // namespace keel
