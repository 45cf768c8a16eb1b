// CircuitBreaker deadlines (CB-1): a probe unanswered for probe_timeout_ms is hung and
// re-opens the breaker; half-open longer than half_open_max_wait_ms re-opens it. Both apply
// as of when they were due, whichever call comes next; a probe left running by a re-open
// still blocks the next probe until it answers or times out.
#include <chrono>

#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"
#include "server/policy/breaker_test_util.h"
#include "server/policy/circuit_breaker.h"

namespace keel::breaker_deadline_test {
namespace {

using std::chrono::milliseconds;
using test::kFast;
using test::TripOnFailures;
using test::WaitForProbe;

TEST_CASE(
    "a probe unanswered for the probe timeout re-opens the breaker and its late answer "
    "is ignored",
    "[breaker]") {
  FakeClock clock;
  BreakerSettings settings;  // probe timeout 10 s
  settings.half_open_max_wait_ms = 60000;
  CircuitBreaker breaker(settings, clock);
  TripOnFailures(breaker);
  const BreakerPermit probe = WaitForProbe(breaker, clock);

  clock.Advance(milliseconds(9999));
  BreakerPermit next = breaker.Acquire();
  CHECK_FALSE(next.admitted);
  CHECK(next.state == BreakerState::kHalfOpen);
  clock.Advance(milliseconds(1));
  next = breaker.Acquire();
  CHECK_FALSE(next.admitted);
  CHECK(next.state == BreakerState::kOpen);
  CHECK(next.retry_after_ms == 60000);  // the second trip in a row
  const BreakerSnapshot reopened = breaker.Snapshot();
  CHECK(reopened.last_trip == BreakerTrip::kProbeTimeout);
  CHECK_FALSE(reopened.probe_in_flight);

  breaker.Record(probe, BreakerOutcome::kSuccess, milliseconds(10001));
  const BreakerSnapshot after = breaker.Snapshot();
  CHECK(after.late_results == 1);
  CHECK(after.generation == reopened.generation);
  CHECK(after.circuit == BreakerState::kOpen);
}

TEST_CASE(
    "a hung probe re-opens the breaker as of its deadline even when its own late answer "
    "comes first",
    "[breaker]") {
  FakeClock clock;
  BreakerSettings settings;
  settings.half_open_max_wait_ms = 60000;
  CircuitBreaker breaker(settings, clock);
  TripOnFailures(breaker);
  const BreakerPermit probe = WaitForProbe(breaker, clock);
  clock.Advance(milliseconds(10000 + 25000));  // no call in between
  breaker.Record(probe, BreakerOutcome::kSuccess, kFast);
  CHECK(breaker.Snapshot().circuit == BreakerState::kOpen);
  CHECK(breaker.Snapshot().late_results == 1);
  // Open for 60 s from the probe's deadline, 25 s ago.
  CHECK(breaker.Acquire().retry_after_ms == 35000);
}

TEST_CASE("half-open longer than its maximum wait re-opens the breaker", "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(BreakerSettings{}, clock);  // max wait 10 s
  TripOnFailures(breaker);
  breaker.Record(WaitForProbe(breaker, clock), BreakerOutcome::kSuccess, kFast);
  clock.Advance(milliseconds(9999));
  breaker.Record(breaker.Acquire(), BreakerOutcome::kSuccess, kFast);
  CHECK(breaker.Snapshot().half_open_successes == 2);
  clock.Advance(milliseconds(1));
  const BreakerPermit late = breaker.Acquire();
  CHECK_FALSE(late.admitted);
  CHECK(late.state == BreakerState::kOpen);
  CHECK(breaker.Snapshot().last_trip == BreakerTrip::kHalfOpenMaxWait);
  CHECK(breaker.Snapshot().consecutive_trips == 2);
}

TEST_CASE("a probe left running by a re-open blocks the next probe until it answers", "[breaker]") {
  FakeClock clock;
  BreakerSettings settings;
  settings.open_ms = 1000;
  settings.half_open_max_wait_ms = 10000;
  settings.probe_timeout_ms = 20000;
  CircuitBreaker breaker(settings, clock);
  TripOnFailures(breaker);
  const BreakerPermit old_probe = WaitForProbe(breaker, clock);
  clock.Advance(milliseconds(10000));  // half-open gives up; the probe is still running
  REQUIRE(breaker.Acquire().state == BreakerState::kOpen);
  clock.Advance(milliseconds(2000));  // the second open duration

  const BreakerPermit blocked = breaker.Acquire();
  CHECK_FALSE(blocked.admitted);
  CHECK(blocked.state == BreakerState::kHalfOpen);
  CHECK(blocked.retry_after_ms == 0);

  SECTION("its answer, late as it is, frees the turn") {
    breaker.Record(old_probe, BreakerOutcome::kSuccess, kFast);
    CHECK(breaker.Snapshot().late_results == 1);
    CHECK(breaker.Snapshot().half_open_successes == 0);
    CHECK(breaker.Acquire().probe);
  }
  SECTION("or its probe timeout does") {
    clock.Advance(milliseconds(7999));
    CHECK_FALSE(breaker.Acquire().admitted);
    clock.Advance(milliseconds(1));  // 20 s after the old probe was admitted
    const BreakerPermit probe = breaker.Acquire();
    CHECK(probe.probe);
    CHECK(probe.state == BreakerState::kHalfOpen);  // a stale probe timing out trips nothing
  }
}

}  // namespace
}  // namespace keel::breaker_deadline_test
