#include "server/policy/retry_budget.h"

#include <algorithm>
#include <cmath>

namespace keel {
namespace {

// Far above any sane configuration, and far below where llround stops being defined.
constexpr double kMaxTokens = 1e12;

int64_t ToMilli(double tokens) {
  if (!(tokens > 0)) return 0;  // also NaN
  return std::llround(std::min(tokens, kMaxTokens) * 1000.0);
}

}  // namespace

RetryBudget::RetryBudget(const RetryBudgetSettings& settings)
    : milli_ratio_(ToMilli(settings.ratio)),
      milli_burst_(ToMilli(settings.burst)),
      milli_tokens_(milli_burst_) {}

void RetryBudget::RecordFirstAttempt() {
  milli_tokens_ = std::min(milli_burst_, milli_tokens_ + milli_ratio_);
}

bool RetryBudget::TryWithdraw() {
  if (!HasToken()) return false;
  milli_tokens_ -= kMilliPerToken;
  return true;
}

RetryBudget& RetryBudgets::For(std::string_view backend) {
  auto it = budgets_.find(backend);
  if (it == budgets_.end()) {
    it = budgets_.emplace(std::string(backend), RetryBudget(settings_)).first;
  }
  return it->second;
}

}  // namespace keel
