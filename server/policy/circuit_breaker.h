// CircuitBreaker: one tool's breaker against one backend (CB-1). It admits or
// rejects each attempt (Acquire) and learns from each admitted attempt's outcome (Record).
// It is pure logic: no I/O, no timers; time comes from the injected Clock, read under the
// lock, so every decision is a function of the calls made and the times they were made at.
// Breakers live in a BreakerRegistry (breaker_registry.h), one per (tool, backend).
//
// Threads: every member is thread-safe (one mutex); workers call Acquire and Record
// concurrently. The Clock must be thread-safe too (SteadyClock is).
//
// The state machine (mode normal; reference/resilience.md §1.2, §2.1):
//   closed --rate threshold reached--> open --open duration passed, next Acquire--> half-open
//   half-open --half_open_probes probes in a row succeed--> closed
//   half-open --a probe fails or is slow, a probe hangs, half-open lasts too long--> open
//  - Closed: successes and failures land in a BreakerWindow (1 s buckets over window_ms),
//    in the second they are recorded in.
//    When a result is recorded and the window holds >= minimum_calls calls, the breaker
//    opens if failures >= failure_rate_percent % of them, or slow calls (slower than
//    slow_call_ms, success or failure) >= slow_rate_percent %.
//  - Open: rejects, with retry_after_ms = the time left. The k-th trip in a row stays open
//    min(max_open_ms, open_ms·2^(k-1)); closing resets k. Open -> half-open is lazy: the
//    first Acquire after the open duration makes the transition and is the first probe.
//  - Half-open: admits one probe at a time, and closes only when half_open_probes probes
//    in a row have succeeded within slow_call_ms. A failed or slow probe re-opens at once.
//  - Time-driven re-opens are applied lazily, by the next Acquire or Record, as of the
//    moment they were due (so the outcome does not depend on when the next call comes):
//    a probe still unanswered probe_timeout_ms after its admission is hung, and re-opens
//    the breaker; half-open longer than half_open_max_wait_ms re-opens it. Each such
//    re-open is a trip in a row, as a failed probe is. Snapshot() applies none of them: it
//    shows the state as of the last Acquire or Record (and the window as of now).
//
// Outcomes: kIgnored (client errors: invalid arguments, approval missing) counts as neither
// success nor failure, and a probe that ends so gives its turn back. kThrottled (429) is
// counted apart (window.throttled) and is neither, too. Only kSuccess and kFailure are calls.
//
// Invariants:
//  1. Every state change increments the generation; a permit carries the generation it was
//     admitted under, and a result whose generation is not the current one changes nothing
//     (it is counted in late_results). A hung probe's late answer is such a result.
//  2. At most one probe is in flight at any time. A probe is in flight from its admission
//     until its Record (in any generation) or until probe_timeout_ms after its admission,
//     whichever is first; so a probe left running by a re-open still blocks the next one.
//  3. The state is closed, open or half-open in modes normal and metrics_only. The other
//     modes do not run the machine: forced_open rejects every call, disabled admits every
//     call, and neither records anything.
//  4. metrics_only (shadow, OPS-1) makes every decision a normal breaker makes, then admits
//     the call anyway, marking would_reject. The results of calls a normal breaker would
//     have rejected are not recorded (a normal breaker would not have them), so the shadow
//     machine moves exactly as a normal one would.
//  5. Record() of a permit that was not admitted, or a second Record() of a probe, changes
//     nothing. (A closed-state permit carries no identity: record it once.)
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string_view>

#include "server/policy/breaker_window.h"
#include "server/policy/policy_types.h"
#include "server/runtime/clock.h"

namespace keel {

enum class BreakerState { kClosed, kOpen, kHalfOpen, kForcedOpen, kDisabled, kMetricsOnly };
// "closed", "open", "half_open", "forced_open", "disabled", "metrics_only".
std::string_view BreakerStateName(BreakerState state);

enum class BreakerOutcome {
  kSuccess,
  kFailure,    // the backend failed: a transport error, a 5xx, a timeout
  kThrottled,  // the backend said "slow down" (429): reported apart, neither success nor failure
  kIgnored,    // the caller's fault (invalid arguments, approval missing): neither
};

// Why the breaker last opened.
enum class BreakerTrip {
  kNone,             // it never has
  kFailureRate,      // closed: failure rate at or above the threshold
  kSlowRate,         // closed: slow-call rate at or above the threshold
  kProbeFailed,      // half-open: a probe failed
  kProbeSlow,        // half-open: a probe succeeded, slower than slow_call_ms
  kProbeTimeout,     // half-open: a probe was unanswered for probe_timeout_ms
  kHalfOpenMaxWait,  // half-open for half_open_max_wait_ms without closing
};
// "none", "failure_rate", "slow_rate", "probe_failed", "probe_slow", "probe_timeout",
// "half_open_max_wait".
std::string_view BreakerTripName(BreakerTrip trip);

struct BreakerPermit {
  bool admitted = false;      // run the call; else answer at once that the circuit is open
  bool probe = false;         // admitted as a half-open probe
  bool would_reject = false;  // metrics_only: a normal breaker would have rejected this call
  BreakerState state = BreakerState::kClosed;    // as reported: the mode, or the machine's state
  BreakerState circuit = BreakerState::kClosed;  // the machine's closed / open / half-open
  uint64_t generation = 0;
  uint64_t probe_id = 0;  // set for probes; 0 otherwise
  // When rejected (or would_reject): the earliest a call may be admitted, in ms; 0 while a
  // probe is in flight (the next may go as soon as it ends); none when forced open.
  std::optional<int64_t> retry_after_ms;
};

struct BreakerSnapshot {
  BreakerState state = BreakerState::kClosed;    // as BreakerPermit::state
  BreakerState circuit = BreakerState::kClosed;  // as BreakerPermit::circuit
  BreakerMode mode = BreakerMode::kNormal;
  uint64_t generation = 0;
  BreakerCounts window;             // the closed window's totals at Snapshot() time
  double failure_rate_percent = 0;  // failures / calls in the window; 0 when no calls
  double slow_rate_percent = 0;     // slow / calls in the window; 0 when no calls
  int consecutive_trips = 0;        // trips since the breaker last closed
  int64_t open_ms = 0;              // the last open duration; 0 before the first trip
  TimePoint open_until{};           // when open: the end of the open duration
  int half_open_successes = 0;      // probes succeeded in this half-open state
  bool probe_in_flight = false;
  BreakerTrip last_trip = BreakerTrip::kNone;
  // Totals since the breaker was made.
  int64_t rejected = 0;             // Acquire said no
  int64_t would_have_rejected = 0;  // metrics_only: admitted, but a normal breaker says no
  int64_t late_results = 0;         // results of an older generation, not counted
  int64_t ignored_results = 0;      // kIgnored outcomes of the current generation
  int64_t throttled_results = 0;    // kThrottled outcomes of the current generation
};

class CircuitBreaker {
 public:
  CircuitBreaker(const BreakerSettings& settings, const Clock& clock);
  CircuitBreaker(const CircuitBreaker&) = delete;
  CircuitBreaker& operator=(const CircuitBreaker&) = delete;

  // Admits or rejects one attempt, now. In half-open, an admitted permit is the probe.
  BreakerPermit Acquire();
  // The outcome of an admitted attempt that took `elapsed` (slow when > slow_call_ms).
  // Call once per admitted permit, as soon as the attempt ends.
  void Record(const BreakerPermit& permit, BreakerOutcome outcome, Duration elapsed);

  BreakerSnapshot Snapshot() const;
  const BreakerSettings& settings() const { return settings_; }

 private:
  struct Probe {
    uint64_t id = 0;
    uint64_t generation = 0;
    TimePoint admitted_at;
  };

  void ApplyDeadlines(TimePoint now);  // probe timeout, half-open max wait
  void Trip(TimePoint at, BreakerTrip why);
  void EnterHalfOpen(TimePoint now);
  void Close();
  void RecordClosed(TimePoint now, BreakerOutcome outcome, bool slow);
  void RecordProbe(TimePoint now, BreakerOutcome outcome, bool slow);
  BreakerState Reported() const;

  const BreakerSettings settings_;
  const Clock& clock_;

  mutable std::mutex mu_;
  BreakerState circuit_ = BreakerState::kClosed;  // GUARDED_BY(mu_), like all below
  uint64_t generation_ = 1;
  BreakerWindow window_;
  int consecutive_trips_ = 0;
  int64_t open_ms_ = 0;
  TimePoint open_until_{};
  TimePoint half_open_since_{};
  int half_open_successes_ = 0;
  std::optional<Probe> in_flight_;
  uint64_t last_probe_id_ = 0;
  BreakerTrip last_trip_ = BreakerTrip::kNone;
  int64_t rejected_ = 0;
  int64_t would_have_rejected_ = 0;
  int64_t late_results_ = 0;
  int64_t ignored_results_ = 0;
  int64_t throttled_results_ = 0;
};

// The open duration of the k-th trip in a row (k >= 1): min(max_open_ms, open_ms·2^(k-1)).
int64_t BreakerOpenMs(const BreakerSettings& settings, int trip);

}  // namespace keel
