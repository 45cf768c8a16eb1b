#include "server/catalog/effective_policy.h"

#include <algorithm>

namespace keel {

ToolPolicy EffectivePolicy(const Policy& policy, const ToolSpec& spec, bool shadow_flag) {
  ToolPolicy effective;
  if (const auto named = policy.tools.find(spec.name); named != policy.tools.end()) {
    effective = named->second;
  } else {
    effective = policy.defaults;
    if (spec.timeouts) {
      effective.timeouts = *spec.timeouts;
      effective.timeouts.source = TimeoutSource::kCatalog;
    }
    if (spec.retry) {
      effective.retry = *spec.retry;
    } else if (spec.effect == EffectClass::kExpensiveRead) {
      // Costly to repeat: one retry at most unless the catalog or policy says otherwise.
      effective.retry.max_attempts = std::min(effective.retry.max_attempts, kExpensiveReadAttempts);
    }
  }
  effective.shadow = effective.shadow || shadow_flag;
  return effective;
}

Policy BuiltinPolicyWithTimeouts(int64_t idle_ms, int64_t max_ms) {
  Policy policy = DefaultPolicy();
  policy.defaults.timeouts.idle_ms = idle_ms;
  policy.defaults.timeouts.max_ms = max_ms;
  policy.defaults.timeouts.source = TimeoutSource::kFlags;
  policy.defaults.timeouts.attempt_ms =
      std::min<int64_t>(policy.defaults.timeouts.attempt_ms, max_ms);
  return policy;
}

}  // namespace keel
