// CircuitBreaker generations (CB-1): every state change starts a new generation, a permit
// carries the one it was admitted under, and a result from an older generation changes
// nothing, so a call that overhangs a transition cannot re-open or close the breaker.
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"
#include "server/policy/breaker_test_util.h"
#include "server/policy/circuit_breaker.h"

namespace keel::breaker_generation_test {
namespace {

using test::kFast;
using test::Run;
using test::TripOnFailures;
using test::WaitForProbe;

std::vector<BreakerPermit> Admit(CircuitBreaker& breaker, int n) {
  std::vector<BreakerPermit> permits;
  for (int i = 0; i < n; ++i) {
    permits.push_back(breaker.Acquire());
    REQUIRE(permits.back().admitted);
  }
  return permits;
}

TEST_CASE("every state change starts a new generation and permits carry theirs", "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(BreakerSettings{}, clock);
  const uint64_t closed = breaker.Snapshot().generation;
  CHECK(breaker.Acquire().generation == closed);
  TripOnFailures(breaker);
  CHECK(breaker.Snapshot().generation == closed + 1);
  CHECK(breaker.Acquire().generation == closed + 1);  // rejected, still told which
  const BreakerPermit first = WaitForProbe(breaker, clock);
  CHECK(first.generation == closed + 2);
  breaker.Record(first, BreakerOutcome::kFailure, kFast);
  CHECK(breaker.Snapshot().generation == closed + 3);
  const BreakerPermit second = WaitForProbe(breaker, clock);
  CHECK(second.generation == closed + 4);
  breaker.Record(second, BreakerOutcome::kSuccess, kFast);
  CHECK(breaker.Snapshot().generation == closed + 4);  // a probe success is no state change
  Run(breaker, 2, BreakerOutcome::kSuccess);
  CHECK(breaker.Snapshot().circuit == BreakerState::kClosed);
  CHECK(breaker.Snapshot().generation == closed + 5);
}

TEST_CASE("results of calls admitted before the breaker opened cannot re-open it from half-open",
          "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(BreakerSettings{}, clock);
  const std::vector<BreakerPermit> overhanging = Admit(breaker, 5);
  TripOnFailures(breaker);
  const BreakerPermit probe = WaitForProbe(breaker, clock);
  for (const BreakerPermit& permit : overhanging) {
    breaker.Record(permit, BreakerOutcome::kFailure, kFast);
  }
  BreakerSnapshot s = breaker.Snapshot();
  CHECK(s.circuit == BreakerState::kHalfOpen);
  CHECK(s.late_results == 5);
  CHECK(s.probe_in_flight);  // only the probe's own answer ends its turn
  breaker.Record(probe, BreakerOutcome::kSuccess, kFast);
  Run(breaker, 2, BreakerOutcome::kSuccess);
  CHECK(breaker.Snapshot().circuit == BreakerState::kClosed);
}

TEST_CASE("results from before the breaker closed do not count in the new closed window",
          "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(BreakerSettings{}, clock);
  const std::vector<BreakerPermit> overhanging = Admit(breaker, 20);
  TripOnFailures(breaker);
  breaker.Record(WaitForProbe(breaker, clock), BreakerOutcome::kSuccess, kFast);
  Run(breaker, 2, BreakerOutcome::kSuccess);
  REQUIRE(breaker.Snapshot().circuit == BreakerState::kClosed);
  for (const BreakerPermit& permit : overhanging) {
    breaker.Record(permit, BreakerOutcome::kFailure, kFast);  // would be 100 % of 20
  }
  const BreakerSnapshot s = breaker.Snapshot();
  CHECK(s.circuit == BreakerState::kClosed);
  CHECK(s.window.calls == 0);
  CHECK(s.late_results == 20);
}

TEST_CASE("recording a rejected permit, or a probe twice, changes nothing", "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(BreakerSettings{}, clock);
  TripOnFailures(breaker);
  const BreakerPermit rejected = breaker.Acquire();
  REQUIRE_FALSE(rejected.admitted);
  breaker.Record(rejected, BreakerOutcome::kFailure, kFast);
  const BreakerPermit probe = WaitForProbe(breaker, clock);
  breaker.Record(probe, BreakerOutcome::kSuccess, kFast);
  breaker.Record(probe, BreakerOutcome::kSuccess, kFast);
  breaker.Record(probe, BreakerOutcome::kFailure, kFast);
  const BreakerSnapshot s = breaker.Snapshot();
  CHECK(s.circuit == BreakerState::kHalfOpen);
  CHECK(s.half_open_successes == 1);
  CHECK(s.consecutive_trips == 1);
}

}  // namespace
}  // namespace keel::breaker_generation_test
