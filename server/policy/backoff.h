// Backoff: how long to wait before retry n (RET-2). Full jitter with the cap applied
// BEFORE the jitter, so that late retries stay spread out instead of piling at the cap
// (reference/resilience.md §3.1: randomise-then-clamp puts 75-100% of retries 4 and 5 at
// exactly the cap, re-synchronising every retrier). Pure functions: the random sample is
// the caller's, from its injected RNG; no clock, no sleeping, no state.
//
// Invariants:
//  1. JitterDelayMs(settings, n, sample) = floor(sample * min(cap_ms, base_ms * 2^(n-1)))
//     for retry n (n = 1 is the first retry, the one after attempt 1).
//  2. It lies in [0, ceiling) for a positive ceiling, and is 0 when the ceiling is 0; it
//     never overflows, whatever n is (2^(n-1) is never computed past the cap).
//  3. RetryDelayMs honours a backend's retry-after hint, clamped:
//     max(jitter delay, min(hint, retry_after_cap_ms)). A negative hint is ignored (as an
//     invalid header would be); it never shortens the jittered delay.
#pragma once

#include <cstdint>
#include <optional>

#include "server/policy/policy_types.h"

namespace keel {

// The ceiling of retry n before jitter: min(cap_ms, base_ms * 2^(n-1)), overflow-safe.
int64_t BackoffCeilingMs(const RetrySettings& settings, int retry_number);

// Full jitter. `sample` is uniform in [0, 1) (see UnitSample).
int64_t JitterDelayMs(const RetrySettings& settings, int retry_number, double sample);

// The delay before retry n: the jittered delay, raised to the clamped retry-after hint.
int64_t RetryDelayMs(const RetrySettings& settings, int retry_number, double sample,
                     std::optional<int64_t> retry_after_ms);

// 64 random bits (e.g. one std::mt19937_64 draw) to a double uniform in [0, 1): the top 53
// bits times 2^-53, so 1.0 is impossible (std::uniform_real_distribution may return it, LWG 2524).
inline double UnitSample(uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

}  // namespace keel
