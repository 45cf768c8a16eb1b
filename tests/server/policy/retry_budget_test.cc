// Retry budget (BUD-2, RET-2): a per-backend token bucket that starts full, gains `ratio`
// per first attempt up to `burst`, and pays one token per retry, so a failing backend sees
// about burst + ratio * calls retries instead of two per call.
#include "server/policy/retry_budget.h"

#include <catch2/catch.hpp>

#include "server/policy/retry_decision.h"

namespace keel::retry_budget_test {
namespace {

TEST_CASE("a retry budget starts full and refuses once it holds less than a token", "[retry]") {
  RetryBudget budget(RetryBudgetSettings{.ratio = 0.2, .burst = 10});
  CHECK(budget.tokens() == 10);
  for (int i = 0; i < 10; ++i) REQUIRE(budget.TryWithdraw());
  CHECK_FALSE(budget.HasToken());
  CHECK_FALSE(budget.TryWithdraw());
  CHECK(budget.tokens() == 0);
}

TEST_CASE("first attempts refill the retry budget by ratio, never above burst", "[retry]") {
  RetryBudget budget(RetryBudgetSettings{.ratio = 0.2, .burst = 10});
  REQUIRE(budget.TryWithdraw());
  for (int i = 0; i < 100; ++i) budget.RecordFirstAttempt();
  CHECK(budget.tokens() == 10);
}

TEST_CASE("fractional deposits add up exactly to a whole token", "[retry]") {
  RetryBudget budget(RetryBudgetSettings{.ratio = 0.1, .burst = 1});
  REQUIRE(budget.TryWithdraw());
  for (int i = 0; i < 9; ++i) budget.RecordFirstAttempt();
  CHECK_FALSE(budget.HasToken());  // 0.9
  budget.RecordFirstAttempt();
  CHECK(budget.HasToken());  // ten times 0.1 is one token, not 0.9999...
  CHECK(budget.TryWithdraw());
}

TEST_CASE("a retry storm against a dead backend is held to burst plus ratio per call", "[retry]") {
  const RetryBudgetSettings budget_settings{.ratio = 0.2, .burst = 10};
  RetryBudget budget(budget_settings);
  constexpr int kCalls = 100;
  int retries = 0;
  int refused_by_budget = 0;
  for (int call = 0; call < kCalls; ++call) {
    budget.RecordFirstAttempt();
    for (int attempt = 1;; ++attempt) {  // every attempt fails: 100% failure
      RetryInput input{.effect = EffectClass::kRead,
                       .failure = FailureClass::kRejectedTransient,
                       .attempt = attempt,
                       .remaining_budget_ms = 60000,
                       .sample = 0.5};
      RetryDecision decision = DecideAndWithdraw(input, budget);
      if (!decision.retry) {
        if (decision.reason == RetryReason::kRetryBudgetEmpty) ++refused_by_budget;
        break;
      }
      ++retries;
    }
  }
  // Without the budget: (3 - 1) * 100 = 200 retries. With it: 10 + 0.2 * 100 = 30, less
  // the 0.2 the first call could not deposit into a full bucket and any fraction left over.
  CHECK(retries <= 30);
  CHECK(retries >= 29);
  CHECK(refused_by_budget > 60);
}

TEST_CASE("each backend has its own retry budget", "[retry]") {
  RetryBudgets budgets(RetryBudgetSettings{.ratio = 0.2, .burst = 2});
  RetryBudget& a = budgets.For("a");
  REQUIRE(a.TryWithdraw());
  REQUIRE(a.TryWithdraw());
  CHECK_FALSE(budgets.For("a").HasToken());
  CHECK(&budgets.For("a") == &a);
  CHECK(budgets.For("b").tokens() == 2);  // a's storm does not spend b's tokens
}

}  // namespace
}  // namespace keel::retry_budget_test
