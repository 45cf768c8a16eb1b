// CircuitBreaker modes (CB-1, OPS-1; resilience4j's manual states): forced_open rejects every
// call, disabled admits every call, neither records anything; metrics_only (shadow, OPS-1)
// runs the same machine as a normal breaker, never rejects, and marks what it would reject.
#include <chrono>
#include <random>

#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"
#include "server/policy/breaker_test_util.h"
#include "server/policy/circuit_breaker.h"

namespace keel::breaker_modes_test {
namespace {

using std::chrono::milliseconds;
using test::kFast;
using test::Run;

BreakerSettings WithMode(BreakerMode mode) {
  BreakerSettings settings;
  settings.mode = mode;
  return settings;
}

TEST_CASE("a forced-open breaker rejects every call and records nothing", "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(WithMode(BreakerMode::kForcedOpen), clock);
  for (int i = 0; i < 100; ++i) {
    const BreakerPermit permit = breaker.Acquire();
    REQUIRE_FALSE(permit.admitted);
    REQUIRE(permit.state == BreakerState::kForcedOpen);
    REQUIRE_FALSE(permit.retry_after_ms.has_value());  // no end an operator has promised
    clock.Advance(milliseconds(1000));
  }
  const BreakerSnapshot s = breaker.Snapshot();
  CHECK(s.state == BreakerState::kForcedOpen);
  CHECK(s.mode == BreakerMode::kForcedOpen);
  CHECK(s.rejected == 100);
}

TEST_CASE("a disabled breaker admits every call and records nothing", "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(WithMode(BreakerMode::kDisabled), clock);
  Run(breaker, 100, BreakerOutcome::kFailure, milliseconds(60000));
  const BreakerSnapshot s = breaker.Snapshot();
  CHECK(s.state == BreakerState::kDisabled);
  CHECK(s.window == BreakerCounts{});
  CHECK(s.rejected == 0);
  CHECK(s.consecutive_trips == 0);
}

TEST_CASE("a metrics-only breaker never rejects and marks what it would have rejected",
          "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(WithMode(BreakerMode::kMetricsOnly), clock);
  Run(breaker, 20, BreakerOutcome::kFailure);
  const BreakerPermit shadowed = breaker.Acquire();
  CHECK(shadowed.admitted);
  CHECK(shadowed.would_reject);
  CHECK(shadowed.state == BreakerState::kMetricsOnly);
  CHECK(shadowed.circuit == BreakerState::kOpen);
  CHECK(shadowed.retry_after_ms == 30000);
  breaker.Record(shadowed, BreakerOutcome::kSuccess, kFast);  // a normal breaker has no result

  clock.Advance(milliseconds(30000));
  const BreakerPermit probe = breaker.Acquire();
  CHECK(probe.probe);
  CHECK_FALSE(probe.would_reject);
  const BreakerPermit beside = breaker.Acquire();
  CHECK(beside.admitted);
  CHECK(beside.would_reject);
  CHECK(beside.circuit == BreakerState::kHalfOpen);
  breaker.Record(beside, BreakerOutcome::kFailure, kFast);  // would re-open, were it counted
  const BreakerSnapshot s = breaker.Snapshot();
  CHECK(s.state == BreakerState::kMetricsOnly);
  CHECK(s.circuit == BreakerState::kHalfOpen);
  CHECK(s.would_have_rejected == 2);
  CHECK(s.rejected == 0);
}

TEST_CASE("a metrics-only breaker moves exactly as a normal one fed the same calls", "[breaker]") {
  FakeClock clock;
  BreakerSettings settings;
  settings.minimum_calls = 5;
  settings.open_ms = 2000;
  CircuitBreaker normal(settings, clock);
  settings.mode = BreakerMode::kMetricsOnly;
  CircuitBreaker shadow(settings, clock);
  std::mt19937 rng(7);
  int would_reject = 0;
  for (int step = 0; step < 5000; ++step) {
    const BreakerPermit n = normal.Acquire();
    const BreakerPermit s = shadow.Acquire();
    REQUIRE(s.admitted);
    REQUIRE(s.would_reject == !n.admitted);
    REQUIRE(s.circuit == n.circuit);
    REQUIRE(s.probe == n.probe);
    REQUIRE(s.generation == n.generation);
    if (s.would_reject) ++would_reject;
    const auto outcome = static_cast<BreakerOutcome>(rng() % 4);
    const Duration elapsed = milliseconds(rng() % 6000);
    if (n.admitted) normal.Record(n, outcome, elapsed);
    shadow.Record(s, outcome, elapsed);
    clock.Advance(milliseconds(rng() % 400));
  }
  CHECK(shadow.Snapshot().would_have_rejected == would_reject);
  CHECK(normal.Snapshot().rejected == would_reject);
  CHECK(would_reject > 100);  // the sequence went through open and half-open
  CHECK(shadow.Snapshot().consecutive_trips == normal.Snapshot().consecutive_trips);
}

TEST_CASE("breaker states, trips and modes have the names traces and the policy file use",
          "[breaker]") {
  CHECK(BreakerStateName(BreakerState::kClosed) == "closed");
  CHECK(BreakerStateName(BreakerState::kOpen) == "open");
  CHECK(BreakerStateName(BreakerState::kHalfOpen) == "half_open");
  CHECK(BreakerStateName(BreakerState::kForcedOpen) == "forced_open");
  CHECK(BreakerStateName(BreakerState::kDisabled) == "disabled");
  CHECK(BreakerStateName(BreakerState::kMetricsOnly) == "metrics_only");
  CHECK(BreakerTripName(BreakerTrip::kProbeTimeout) == "probe_timeout");
  CHECK(BreakerTripName(BreakerTrip::kHalfOpenMaxWait) == "half_open_max_wait");
  for (BreakerMode mode : {BreakerMode::kNormal, BreakerMode::kForcedOpen, BreakerMode::kDisabled,
                           BreakerMode::kMetricsOnly}) {
    CHECK(ParseBreakerMode(BreakerModeName(mode)) == mode);
  }
  CHECK(BreakerModeName(BreakerMode::kMetricsOnly) == "metrics_only");
  CHECK_FALSE(ParseBreakerMode("shadow").has_value());
}

}  // namespace
}  // namespace keel::breaker_modes_test
