// The policy file: JSON text in, a validated immutable Policy or every problem out (BUD-1).
// Pure functions; no file I/O (the caller reads the file), no threads. nlohmann's exceptions
// are caught here and never leave.
//
// The shape, complete (docs/policy.md lists every field with its unit, default and rule):
//
//   {
//     "version": "2026-11-29.1",
//     "defaults": {
//       "timeouts": {"idle_ms": 30000, "max_ms": 55000, "attempt_ms": 10000},
//       "retry": {"max_attempts": 3, "base_ms": 250, "cap_ms": 1500,
//                 "retry_after_cap_ms": 5000, "min_useful_attempt_ms": 200},
//       "breaker": {"window_ms": 60000, "minimum_calls": 20, "failure_rate_percent": 50,
//                   "slow_rate_percent": 70, "slow_call_ms": 5000, "open_ms": 30000,
//                   "max_open_ms": 300000, "half_open_probes": 3,
//                   "half_open_max_wait_ms": 10000, "probe_timeout_ms": 10000,
//                   "mode": "normal"},
//       "shadow": false
//     },
//     "tools": {
//       "charge_account": {"retry": {"max_attempts": 1}, "timeouts": {"attempt_ms": 7000}},
//       "search_orders": {"shadow": true, "breaker": {"mode": "metrics_only"}}
//     },
//     "retry_budget": {"ratio": 0.2, "burst": 10},
//     "backends": {"payments": {"retry_budget": {"ratio": 0.1, "burst": 5}}}
//   }
//
// Only "version" is required. Every other field may be left out and then keeps its built-in
// default (policy_types.h); a tool's or a backend's fields merge one by one over the
// defaults. Durations are integers in milliseconds.
//
// ParsePolicy reports, each on its own line and all of them at once:
//  - a parse error, with nlohmann's line and column;
//  - a key that appears twice in one object (JSON would silently keep the last);
//  - an unknown field, named by its path ("tools.charge_account.retry.max_atempts: unknown
//    field"), a value of the wrong type, or one out of its range, never stored;
//  - a missing or empty version, a tool or backend name that cannot be one;
//  - the cross-field rules of policy_validation.h, for the defaults and each tool. They are
//    checked only where the fields they read are valid: a tool whose own fields (or whose
//    defaults) have problems would be judged on values nobody wrote.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/policy/policy.h"

namespace keel {

// Longer policy text is refused unread: a policy is a few kilobytes; this bounds the work.
inline constexpr size_t kMaxPolicyBytes = 1 << 20;
// Every duration is at most a week: longer than any call keel serves, and small enough that
// no sum or product of durations the validator computes can overflow.
inline constexpr int64_t kMaxPolicyDurationMs = 7LL * 24 * 3600 * 1000;

struct PolicyParseResult {
  std::optional<Policy> policy;  // set exactly when `problems` is empty
  // Field problems first (version, defaults, retry_budget, tools, backends, unknown top-level
  // fields; tools and backends by name), then the cross-field rules.
  std::vector<std::string> problems;
  bool ok() const { return policy.has_value(); }
};

PolicyParseResult ParsePolicy(std::string_view json_text);

// The whole policy as the file shape, each tool with its merged settings. ParsePolicy of its
// dump() gives back an equal policy (for `keel policy show`, and for tests).
nlohmann::json PolicyToJson(const Policy& policy);

}  // namespace keel
