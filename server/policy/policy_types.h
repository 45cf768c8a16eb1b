// The vocabulary of keel's resilience policy (RET-1..3, BUD-1, BUD-2, CB-1):
// effect classes, failure classes, breaker modes, and the per-tool settings that the tool
// catalog (--catalog) and the policy file both speak. Pure data and pure functions; no I/O,
// no threads.
// Durations are integers in milliseconds, as everywhere in keel's configuration.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace keel {

// What a tool does to the world. Decides which retries are safe and what the MCP
// annotations say (readOnlyHint, destructiveHint, idempotentHint are derived from it).
enum class EffectClass {
  kRead,             // no effect; retry on transient and ambiguous failures
  kExpensiveRead,    // no effect, but costly: same retry rules, smaller budget
  kIdempotentWrite,  // an effect that a repeat with the same key and arguments does not redo
  kUnsafeWrite,      // an effect that a repeat may redo: never retried after an ambiguous failure
};
// "read", "expensive_read", "idempotent_write", "unsafe_write".
std::string_view EffectClassName(EffectClass effect);
std::optional<EffectClass> ParseEffectClass(std::string_view name);
inline bool IsWrite(EffectClass effect) {
  return effect == EffectClass::kIdempotentWrite || effect == EffectClass::kUnsafeWrite;
}

// How an attempt failed, as far as keel can tell (RET-1).
enum class FailureClass {
  kNotSent,            // it never reached the backend (connect refused, queue full): safe to repeat
  kRejectedTransient,  // the backend refused it for now (transport_unavailable, 429, 503)
  kRejectedPermanent,  // refused for good (invalid_arguments, policy_denied, approval_required,
                       // 4xx)
  kAmbiguous,          // sent, then a timeout or a lost response: it may have happened
};
// "not_sent", "rejected_transient", "rejected_permanent", "ambiguous".
std::string_view FailureClassName(FailureClass failure);

struct RetrySettings {
  int max_attempts = 3;   // including the first; 1 = never retry
  int64_t base_ms = 250;  // backoff: full jitter U(0, min(cap, base * 2^n))
  int64_t cap_ms = 1500;
  int64_t retry_after_cap_ms = 5000;  // a backend's retry-after hint is clamped to this
  int64_t min_useful_attempt_ms =
      200;  // a retry starts only if this much budget is left after its backoff
};

// Per-backend retry budget (BUD-2): a token bucket. Every first attempt deposits
// `ratio` tokens (up to `burst`); a retry takes one token or is suppressed.
struct RetryBudgetSettings {
  double ratio = 0.2;  // retries may add at most ~20% to the traffic
  double burst = 10;   // tokens the bucket holds; it starts full
};

// Where a tool's timeouts were set, so that a timeout's text names the setting to change.
enum class TimeoutSource {
  kPolicyFile,  // a --policy file (its defaults, or the tool's own section)
  kFlags,       // --idle-timeout and --max-timeout (the built-in policy)
  kCatalog,     // the tool's catalog entry (timeouts.idleMs, timeouts.maxMs)
};

struct TimeoutSettings {
  int64_t idle_ms = 30000;     // no progress this long ends the call (0 = no idle clock)
  int64_t max_ms = 55000;      // the call in all (the call budget), queued time included
  int64_t attempt_ms = 10000;  // one attempt against the backend
  TimeoutSource source = TimeoutSource::kPolicyFile;  // not read from nor written to a file
};

// How a breaker applies its decisions (resilience4j's manual states, reference/resilience.md
// §1.2). Fixed per breaker: a new mode comes with a new policy, and so with a new breaker.
enum class BreakerMode {
  kNormal,       // the closed / open / half-open state machine, applied
  kForcedOpen,   // reject every call (an operator's kill switch for one tool and backend)
  kDisabled,     // admit every call and record nothing
  kMetricsOnly,  // shadow (OPS-1): run the state machine, record what it would reject, admit all
};
// "normal", "forced_open", "disabled", "metrics_only".
std::string_view BreakerModeName(BreakerMode mode);
std::optional<BreakerMode> ParseBreakerMode(std::string_view name);

// The breaker's window is made of 1 s buckets; an hour is 3600 of them per breaker, and
// longer windows would judge a backend on outcomes too old to say anything about it now.
inline constexpr int64_t kMaxBreakerWindowMs = 3600 * 1000;

struct BreakerSettings {
  int64_t window_ms = 60000;      // time-based sliding window, in whole 1 s buckets
  int minimum_calls = 20;         // below it no rate is computed
  int failure_rate_percent = 50;  // open at or above
  int slow_rate_percent = 70;     // open at or above
  int64_t slow_call_ms = 5000;    // an attempt slower than this is slow
  int64_t open_ms = 30000;        // open this long after the first trip, then half-open
  int64_t max_open_ms = 300000;   // the k-th trip in a row opens min(this, open_ms·2^(k-1))
  int half_open_probes = 3;       // probes admitted while half-open, one at a time
  int64_t half_open_max_wait_ms = 10000;  // a half-open state longer than this re-opens
  int64_t probe_timeout_ms = 10000;       // a probe unanswered this long is hung: re-open
  BreakerMode mode = BreakerMode::kNormal;

  bool operator==(const BreakerSettings&) const = default;
};

}  // namespace keel
