#include "server/policy/policy_validation.h"

#include <algorithm>
#include <string_view>

namespace keel {
namespace {

std::string Ms(int64_t value) { return std::to_string(value); }

// The worst-case backoff before retry n (1-based): the top of the full-jitter range.
// Doubling stops at the cap, so large n cannot overflow.
int64_t MaxBackoffMs(const RetrySettings& retry, int n) {
  int64_t backoff = retry.base_ms;
  for (int i = 1; i < n && backoff < retry.cap_ms; ++i) backoff *= 2;
  return std::min(backoff, retry.cap_ms);
}

std::string BackoffSum(const RetrySettings& retry) {
  if (retry.max_attempts <= 1) return "no backoff";
  std::string text = "backoffs ";
  for (int n = 1; n < retry.max_attempts; ++n) {
    if (n > 1) text += " + ";
    text += Ms(MaxBackoffMs(retry, n));
  }
  return text;
}

}  // namespace

int64_t WorstCaseCallMs(const ToolPolicy& tool) {
  int64_t total = tool.retry.max_attempts * tool.timeouts.attempt_ms;
  for (int n = 1; n < tool.retry.max_attempts; ++n) total += MaxBackoffMs(tool.retry, n);
  return total;
}

std::vector<std::string> ValidateToolPolicy(const ToolPolicy& tool) {
  const TimeoutSettings& t = tool.timeouts;
  const RetrySettings& r = tool.retry;
  const BreakerSettings& b = tool.breaker;
  std::vector<std::string> problems;
  if (t.attempt_ms >= t.max_ms) {
    problems.push_back("timeouts.attempt_ms (" + Ms(t.attempt_ms) +
                       ") must be less than timeouts.max_ms (" + Ms(t.max_ms) +
                       "): an attempt must time out before the call it belongs to");
  }
  if (t.idle_ms > t.max_ms) {
    problems.push_back("timeouts.idle_ms (" + Ms(t.idle_ms) +
                       ") must not exceed timeouts.max_ms (" + Ms(t.max_ms) +
                       "); 0 turns the idle clock off");
  }
  if (const int64_t worst = WorstCaseCallMs(tool); worst > t.max_ms) {
    problems.push_back("worst case " + std::to_string(r.max_attempts) + " attempts × " +
                       Ms(t.attempt_ms) + " ms + " + BackoffSum(r) + " = " + Ms(worst) +
                       " ms exceeds timeouts.max_ms (" + Ms(t.max_ms) +
                       "): lower retry.max_attempts, timeouts.attempt_ms or the backoff, or "
                       "raise timeouts.max_ms");
  }
  if (r.cap_ms < r.base_ms) {
    problems.push_back("retry.cap_ms (" + Ms(r.cap_ms) + ") must be at least retry.base_ms (" +
                       Ms(r.base_ms) + ")");
  }
  if (r.min_useful_attempt_ms > t.attempt_ms) {
    problems.push_back("retry.min_useful_attempt_ms (" + Ms(r.min_useful_attempt_ms) +
                       ") must not exceed timeouts.attempt_ms (" + Ms(t.attempt_ms) +
                       "): no attempt can use more time than that");
  }
  if (r.retry_after_cap_ms + r.min_useful_attempt_ms > t.max_ms) {
    problems.push_back("retry.retry_after_cap_ms (" + Ms(r.retry_after_cap_ms) +
                       ") + retry.min_useful_attempt_ms (" + Ms(r.min_useful_attempt_ms) +
                       ") = " + Ms(r.retry_after_cap_ms + r.min_useful_attempt_ms) +
                       " exceeds timeouts.max_ms (" + Ms(t.max_ms) +
                       "): a retry-after wait that long leaves no time for the retry");
  }
  if (b.window_ms < 2 * t.attempt_ms) {
    problems.push_back("breaker.window_ms (" + Ms(b.window_ms) +
                       ") must be at least 2 × timeouts.attempt_ms (2 × " + Ms(t.attempt_ms) +
                       " = " + Ms(2 * t.attempt_ms) +
                       "): a shorter window cannot see enough outcomes to judge");
  }
  if (b.slow_call_ms > t.attempt_ms) {
    problems.push_back("breaker.slow_call_ms (" + Ms(b.slow_call_ms) +
                       ") must not exceed timeouts.attempt_ms (" + Ms(t.attempt_ms) +
                       "): an attempt is cut off before it could count as slow");
  }
  if (b.half_open_max_wait_ms < t.attempt_ms) {
    problems.push_back("breaker.half_open_max_wait_ms (" + Ms(b.half_open_max_wait_ms) +
                       ") must be at least timeouts.attempt_ms (" + Ms(t.attempt_ms) +
                       "): a probe must be able to finish before half-open gives up");
  }
  if (b.max_open_ms < b.open_ms) {
    problems.push_back("breaker.max_open_ms (" + Ms(b.max_open_ms) +
                       ") must be at least breaker.open_ms (" + Ms(b.open_ms) +
                       "): it caps how far the open duration grows on repeated trips");
  }
  if (b.probe_timeout_ms < t.attempt_ms) {
    problems.push_back("breaker.probe_timeout_ms (" + Ms(b.probe_timeout_ms) +
                       ") must be at least timeouts.attempt_ms (" + Ms(t.attempt_ms) +
                       "): a probe still inside its attempt timeout is not hung");
  }
  return problems;
}

std::vector<std::string> ValidatePolicy(const Policy& policy) {
  std::vector<std::string> problems;
  if (policy.version.empty()) {
    problems.push_back("version: missing or empty; a policy must say which version it is");
  }
  const std::vector<std::string> inherited = ValidateToolPolicy(policy.defaults);
  for (const std::string& problem : inherited) problems.push_back("defaults: " + problem);
  for (const auto& [name, tool] : policy.tools) {
    for (const std::string& problem : ValidateToolPolicy(tool)) {
      if (std::find(inherited.begin(), inherited.end(), problem) != inherited.end()) continue;
      problems.push_back("tools." + name + ": " + problem);
    }
  }
  return problems;
}

}  // namespace keel
