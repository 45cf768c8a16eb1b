// ValidatePolicy: the cross-field rules that decide whether a policy can work at all (BUD-1:
// "a policy in which an inner timeout does not expire before its outer one is rejected at
// load with a clear message"). Pure functions; no I/O, no threads.
//
// Each problem is one line "<scope>: <what is wrong, with the numbers>", where the scope is
// "defaults" or "tools.<name>". All problems are reported, never only the first. The rules,
// for the defaults and for every tool's merged settings (see docs/policy.md):
//  1. timeouts.attempt_ms < timeouts.max_ms: an attempt ends before its call does.
//  2. timeouts.idle_ms <= timeouts.max_ms (0 = no idle clock).
//  3. Worst case fits the call budget: max_attempts × attempt_ms + Σ backoffs <= max_ms,
//     backoff n (n = 1..max_attempts-1) being min(cap_ms, base_ms × 2^(n-1)).
//  4. retry.cap_ms >= retry.base_ms.
//  5. retry.min_useful_attempt_ms <= timeouts.attempt_ms: no attempt can use more.
//  6. retry.retry_after_cap_ms + retry.min_useful_attempt_ms <= timeouts.max_ms: a clamped
//     retry-after wait still leaves room for a useful attempt.
//  7. breaker.window_ms >= 2 × timeouts.attempt_ms (Microsoft's standard handler: a shorter
//     window cannot see enough outcomes to be effective).
//  8. breaker.slow_call_ms <= timeouts.attempt_ms: else a slow call is never observed.
//  9. breaker.half_open_max_wait_ms >= timeouts.attempt_ms: a probe can finish.
// 10. breaker.max_open_ms >= breaker.open_ms: the cap of the growing open duration.
// 11. breaker.probe_timeout_ms >= timeouts.attempt_ms: a probe is declared hung only after
//     its attempt timeout had the chance to end it (so also >= slow_call_ms, by rule 8).
// A tool's problem that its defaults already have, with the same numbers, is reported once,
// under "defaults". The version must not be empty.
//
// Field ranges (negative, zero, percent outside 1..100, …) are ParsePolicy()'s job: it reads
// each field with its JSON path and never stores a value out of range.
#pragma once

#include <string>
#include <vector>

#include "server/policy/policy.h"

namespace keel {

// The problems with one tool's complete settings, without a scope prefix.
std::vector<std::string> ValidateToolPolicy(const ToolPolicy& tool);

// Every problem of `policy`; empty when it can be used.
std::vector<std::string> ValidatePolicy(const Policy& policy);

// max_attempts × attempt_ms + Σ min(cap, base × 2^(n-1)) for n = 1..max_attempts-1.
int64_t WorstCaseCallMs(const ToolPolicy& tool);

}  // namespace keel
