// RetryBudget: a per-backend token bucket that stops retry storms (BUD-2, RET-2). Every
// first attempt deposits `ratio` tokens, up to `burst`; every retry withdraws one token or
// is refused. When a backend fails everything, retries are bounded by about
// burst + ratio * calls instead of (max_attempts - 1) * calls (reference/resilience.md §3.4:
// Finagle RetryBudget, gRPC retryThrottling, AWS retry quota).
//
// Not thread-safe: the caller serialises (one owner per process, e.g. the loop thread).
// Deterministic: no clock. Tokens are kept in thousandths, so ratio and burst count to 3
// decimals (as gRPC's) and a long run of deposits does not drift with float rounding.
//
// Invariants:
//  1. The bucket starts full: tokens() == burst.
//  2. 0 <= tokens() <= burst at all times.
//  3. TryWithdraw() succeeds iff tokens() >= 1 beforehand, and then takes exactly 1.
//
// RetryBudgets: one RetryBudget per backend name, created full on first use. Backend
// names come from the catalog, so the map is bounded by the configuration.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "server/policy/policy_types.h"

namespace keel {

class RetryBudget {
 public:
  explicit RetryBudget(const RetryBudgetSettings& settings);

  // A call's first attempt (not a retry) was made: deposit `ratio`, up to `burst`.
  void RecordFirstAttempt();
  // Whether a retry could withdraw a token now.
  bool HasToken() const { return milli_tokens_ >= kMilliPerToken; }
  // Takes a token for a retry; false (and nothing taken) when the bucket holds less than one.
  bool TryWithdraw();

  double tokens() const { return static_cast<double>(milli_tokens_) / kMilliPerToken; }

 private:
  static constexpr int64_t kMilliPerToken = 1000;

  int64_t milli_ratio_;
  int64_t milli_burst_;
  int64_t milli_tokens_;
};

class RetryBudgets {
 public:
  explicit RetryBudgets(const RetryBudgetSettings& settings) : settings_(settings) {}

  // The backend's bucket, created full on first use. The reference stays valid for the
  // life of this object (std::map never moves its nodes).
  RetryBudget& For(std::string_view backend);

 private:
  RetryBudgetSettings settings_;
  std::map<std::string, RetryBudget, std::less<>> budgets_;
};

}  // namespace keel
