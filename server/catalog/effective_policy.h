// The settings one tool's calls run under, from the policy in force and the tool's catalog
// entry. Pure; no I/O, no shared state.
//
// Precedence, field group by field group (timeouts, retry):
//  1. The policy file names the tool (`tools.<name>`): the policy's merged settings — the
//     operator's word, reloadable with SIGHUP, wins over the catalog.
//  2. Otherwise the catalog entry's `timeouts` / `retry` where it gives them (a catalog
//     timeouts object without attemptMs gets min(10000, maxMs), as docs/catalog.md says);
//  3. otherwise the policy's `defaults` (with no --policy file: the built-in policy, whose
//     idle and max timeouts are --idle-timeout and --max-timeout); an expensive_read then
//     gets at most kExpensiveReadAttempts attempts (it is costly to repeat).
// Breaker settings always come from the policy. Shadow mode is on when --shadow is, or the
// policy says so for the tool (or in its defaults).
#pragma once

#include "server/catalog/tool.h"
#include "server/policy/policy.h"

namespace keel {

inline constexpr int kExpensiveReadAttempts = 2;

ToolPolicy EffectivePolicy(const Policy& policy, const ToolSpec& spec, bool shadow_flag);

// The built-in policy with --idle-timeout and --max-timeout as its default timeouts; the
// attempt timeout is min(10000, max_ms).
Policy BuiltinPolicyWithTimeouts(int64_t idle_ms, int64_t max_ms);

}  // namespace keel
