// Retry budget (BUD-2, RET-2): a per-backend token bucket that starts full, gains `ratio`
// per first attempt up to `burst`, and pays one token per retry, so a failing backend sees
// about burst + ratio * calls retries instead of two per call.
#include <catch2/catch.hpp>

#include "server/policy/retry_budget.h"

namespace keel {
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
}  // namespace keel
