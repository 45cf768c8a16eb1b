// Policy: keel's resilience policy as one immutable value (BUD-1, BUD-2, RET-2,
// OPS-1): a version, the settings every tool gets by default, each tool's complete settings
// where the policy file overrides some of them, and the per-backend retry budget.
//
// Ownership and threads: a Policy is built once (DefaultPolicy(), or ParsePolicy() in
// policy_json.h) and then never changed. Share it as a PolicyHandle; a reload swaps the
// handle for a new one, so a call that took the old handle finishes under the old policy.
// Reading a const Policy from many threads needs no lock.
//
// Invariants of a Policy that ParsePolicy() returned, or that passes ValidatePolicy():
//  1. `version` is not empty.
//  2. Every entry of `tools` is complete: `defaults` with that tool's overrides merged over
//     it field by field, so For() needs no merging and a reader sees the effective values.
//  3. The defaults and every tool's settings satisfy the cross-field rules of
//     policy_validation.h (attempt < call budget, backoffs fit, breaker window >= 2 attempts…).
// The JSON shape, with a complete example, is in policy_json.h and docs/policy.md.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "server/policy/policy_types.h"

namespace keel {

// Everything the pipeline needs to run one tool's calls.
struct ToolPolicy {
  TimeoutSettings timeouts;
  RetrySettings retry;
  BreakerSettings breaker;
  bool shadow = false;  // OPS-1: compute and record retry and breaker decisions, apply none
};

struct Policy {
  std::string version;
  ToolPolicy defaults;
  // Tools the policy names, each with its merged (complete) settings. Other tools get
  // `defaults`. std::less<> so For() can look up a string_view.
  std::map<std::string, ToolPolicy, std::less<>> tools;
  RetryBudgetSettings retry_budget;  // each backend's own bucket, unless overridden below
  std::map<std::string, RetryBudgetSettings, std::less<>> backend_retry_budgets;

  ToolPolicy For(std::string_view tool) const;
  RetryBudgetSettings RetryBudgetFor(std::string_view backend) const;
};

// What callers hold: an immutable policy that a reload replaces as a whole.
using PolicyHandle = std::shared_ptr<const Policy>;

// The built-in policy: the struct defaults of policy_types.h, no per-tool overrides,
// version "builtin-1". It passes ValidatePolicy() (a test says so).
Policy DefaultPolicy();
inline constexpr std::string_view kBuiltinPolicyVersion = "builtin-1";

}  // namespace keel
