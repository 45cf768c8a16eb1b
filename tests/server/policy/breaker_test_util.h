// Helpers for the CircuitBreaker tests: drive a breaker through whole calls and through its
// open period with a FakeClock. Single-threaded.
#pragma once

#include <chrono>

#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"
#include "server/policy/circuit_breaker.h"

namespace keel::test {

inline constexpr Duration kFast = std::chrono::milliseconds(10);  // never slow

// Runs `n` calls that all end with `outcome`, each taking `elapsed`.
inline void Run(CircuitBreaker& breaker, int n, BreakerOutcome outcome, Duration elapsed = kFast) {
  for (int i = 0; i < n; ++i) {
    const BreakerPermit permit = breaker.Acquire();
    REQUIRE(permit.admitted);
    breaker.Record(permit, outcome, elapsed);
  }
}

// Opens a closed breaker: minimum_calls failures in a row.
inline void TripOnFailures(CircuitBreaker& breaker) {
  Run(breaker, breaker.settings().minimum_calls, BreakerOutcome::kFailure);
  REQUIRE(breaker.Snapshot().circuit == BreakerState::kOpen);
}

// From open to half-open: waits out the open duration; the next Acquire is the first probe.
inline BreakerPermit WaitForProbe(CircuitBreaker& breaker, FakeClock& clock) {
  clock.Advance(std::chrono::milliseconds(breaker.Snapshot().open_ms));
  const BreakerPermit probe = breaker.Acquire();
  REQUIRE(probe.admitted);
  REQUIRE(probe.probe);
  REQUIRE(probe.circuit == BreakerState::kHalfOpen);
  return probe;
}

}  // namespace keel::test
