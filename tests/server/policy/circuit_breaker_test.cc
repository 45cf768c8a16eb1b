// CircuitBreaker (CB-1): window accounting, minimum calls, each threshold, the
// open -> half-open -> closed / re-open cycle, growing open durations, the probe timeout,
// the half-open maximum wait and the generation rule. Time is a FakeClock; nothing sleeps.
// The probe-concurrency property and the modes have their own files.
#include "server/policy/circuit_breaker.h"

#include <chrono>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"
#include "server/policy/breaker_test_util.h"

namespace keel::circuit_breaker_test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using test::kFast;
using test::Run;
using test::TripOnFailures;
using test::WaitForProbe;

TEST_CASE("a closed breaker admits every call and counts it in its window", "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(BreakerSettings{}, clock);
  const BreakerPermit permit = breaker.Acquire();
  CHECK(permit.admitted);
  CHECK_FALSE(permit.probe);
  CHECK(permit.state == BreakerState::kClosed);
  CHECK_FALSE(permit.retry_after_ms.has_value());
  breaker.Record(permit, BreakerOutcome::kFailure, kFast);
  Run(breaker, 3, BreakerOutcome::kSuccess, milliseconds(6000));  // slow: > 5000
  const BreakerSnapshot s = breaker.Snapshot();
  CHECK(s.window == BreakerCounts{.calls = 4, .failures = 1, .slow = 3});
  CHECK(s.failure_rate_percent == 25);
  CHECK(s.slow_rate_percent == 75);
  CHECK(s.state == BreakerState::kClosed);
}

TEST_CASE("below the minimum number of calls no rate opens the breaker", "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(BreakerSettings{}, clock);                // minimum 20
  Run(breaker, 19, BreakerOutcome::kFailure, milliseconds(9000));  // 100 % failed, 100 % slow
  CHECK(breaker.Snapshot().state == BreakerState::kClosed);
  Run(breaker, 1, BreakerOutcome::kFailure);
  CHECK(breaker.Snapshot().state == BreakerState::kOpen);
}

TEST_CASE("the failure rate opens the breaker at its threshold, not below", "[breaker]") {
  FakeClock clock;
  SECTION("9 failures of 20 is 45 %: closed") {
    CircuitBreaker breaker(BreakerSettings{}, clock);
    Run(breaker, 11, BreakerOutcome::kSuccess);
    Run(breaker, 9, BreakerOutcome::kFailure);
    CHECK(breaker.Snapshot().state == BreakerState::kClosed);
    CHECK(breaker.Snapshot().failure_rate_percent == 45);
  }
  SECTION("10 failures of 20 is 50 %: open") {
    CircuitBreaker breaker(BreakerSettings{}, clock);
    Run(breaker, 10, BreakerOutcome::kSuccess);
    Run(breaker, 10, BreakerOutcome::kFailure);
    const BreakerSnapshot s = breaker.Snapshot();
    CHECK(s.state == BreakerState::kOpen);
    CHECK(s.last_trip == BreakerTrip::kFailureRate);
    CHECK(s.consecutive_trips == 1);
    CHECK(s.open_ms == 30000);
  }
}

TEST_CASE("the slow-call rate opens the breaker at its threshold, slow successes included",
          "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(BreakerSettings{}, clock);               // slow: > 5000 ms; opens at 70 %
  Run(breaker, 7, BreakerOutcome::kSuccess, milliseconds(5000));  // exactly the threshold: not slow
  Run(breaker, 12, BreakerOutcome::kSuccess, milliseconds(5001));
  CHECK(breaker.Snapshot().state == BreakerState::kClosed);  // 19 calls: below the minimum
  Run(breaker, 1, BreakerOutcome::kSuccess, milliseconds(5001));
  CHECK(breaker.Snapshot().state == BreakerState::kClosed);       // 13 of 20 = 65 %
  Run(breaker, 1, BreakerOutcome::kFailure, milliseconds(5001));  // a slow failure: 14 of 21
  CHECK(breaker.Snapshot().state == BreakerState::kClosed);
  Run(breaker, 1, BreakerOutcome::kSuccess, milliseconds(7000));  // 15 of 22 = 68.2 %
  Run(breaker, 1, BreakerOutcome::kSuccess, milliseconds(7000));  // 16 of 23 = 69.6 %
  CHECK(breaker.Snapshot().state == BreakerState::kClosed);
  Run(breaker, 1, BreakerOutcome::kSuccess, milliseconds(7000));  // 17 of 24 = 70.8 %
  CHECK(breaker.Snapshot().state == BreakerState::kOpen);
  CHECK(breaker.Snapshot().last_trip == BreakerTrip::kSlowRate);
}

TEST_CASE("client errors count as neither success nor failure and throttling is counted apart",
          "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(BreakerSettings{}, clock);
  Run(breaker, 19, BreakerOutcome::kFailure);
  Run(breaker, 50, BreakerOutcome::kIgnored);
  Run(breaker, 50, BreakerOutcome::kThrottled, milliseconds(9000));
  const BreakerSnapshot s = breaker.Snapshot();
  CHECK(s.state == BreakerState::kClosed);  // 19 calls: the 100 others are not calls
  CHECK(s.window == BreakerCounts{.calls = 19, .failures = 19, .throttled = 50});
  CHECK(s.ignored_results == 50);
  CHECK(s.throttled_results == 50);
  Run(breaker, 1, BreakerOutcome::kFailure);
  CHECK(breaker.Snapshot().state == BreakerState::kOpen);
}

TEST_CASE("failures older than the window no longer count toward opening", "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(BreakerSettings{}, clock);  // 60 s window
  Run(breaker, 19, BreakerOutcome::kFailure);
  clock.Advance(seconds(59));
  CHECK(breaker.Snapshot().window.calls == 19);
  clock.Advance(seconds(1));
  CHECK(breaker.Snapshot().window.calls == 0);
  Run(breaker, 1, BreakerOutcome::kFailure);
  CHECK(breaker.Snapshot().state == BreakerState::kClosed);
  CHECK(breaker.Snapshot().window.calls == 1);
}

TEST_CASE("an open breaker rejects with the time left, then admits one probe at a time",
          "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(BreakerSettings{}, clock);
  TripOnFailures(breaker);
  BreakerPermit rejected = breaker.Acquire();
  CHECK_FALSE(rejected.admitted);
  CHECK(rejected.state == BreakerState::kOpen);
  CHECK(rejected.retry_after_ms == 30000);
  clock.Advance(milliseconds(29999));
  rejected = breaker.Acquire();
  CHECK_FALSE(rejected.admitted);
  CHECK(rejected.retry_after_ms == 1);
  CHECK(breaker.Snapshot().state == BreakerState::kOpen);

  clock.Advance(milliseconds(1));
  CHECK(breaker.Snapshot().state == BreakerState::kOpen);  // lazy: no call has come yet
  const BreakerPermit probe = breaker.Acquire();
  CHECK(probe.admitted);
  CHECK(probe.probe);
  CHECK(probe.state == BreakerState::kHalfOpen);
  const BreakerPermit second = breaker.Acquire();  // the first probe is still in flight
  CHECK_FALSE(second.admitted);
  CHECK(second.state == BreakerState::kHalfOpen);
  CHECK(second.retry_after_ms == 0);
  CHECK(breaker.Snapshot().rejected == 3);
}

TEST_CASE("half-open closes only when every probe has succeeded, one after another", "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(BreakerSettings{}, clock);  // 3 probes
  TripOnFailures(breaker);
  for (int i = 1; i <= 2; ++i) {
    const BreakerPermit probe = i == 1 ? WaitForProbe(breaker, clock) : breaker.Acquire();
    REQUIRE(probe.probe);
    breaker.Record(probe, BreakerOutcome::kSuccess, kFast);
    CHECK(breaker.Snapshot().state == BreakerState::kHalfOpen);
    CHECK(breaker.Snapshot().half_open_successes == i);
  }
  const BreakerPermit last = breaker.Acquire();
  REQUIRE(last.probe);
  breaker.Record(last, BreakerOutcome::kSuccess, kFast);
  const BreakerSnapshot s = breaker.Snapshot();
  CHECK(s.state == BreakerState::kClosed);
  CHECK(s.consecutive_trips == 0);
  CHECK(s.window == BreakerCounts{});  // the closed state starts judging afresh
  const BreakerPermit next = breaker.Acquire();
  CHECK(next.admitted);
  CHECK_FALSE(next.probe);
}

TEST_CASE("a failed probe re-opens the breaker for a longer time", "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(BreakerSettings{}, clock);
  TripOnFailures(breaker);
  BreakerPermit probe = WaitForProbe(breaker, clock);
  breaker.Record(probe, BreakerOutcome::kSuccess, kFast);
  probe = breaker.Acquire();
  breaker.Record(probe, BreakerOutcome::kFailure, kFast);  // the second of three fails
  const BreakerSnapshot s = breaker.Snapshot();
  CHECK(s.state == BreakerState::kOpen);
  CHECK(s.last_trip == BreakerTrip::kProbeFailed);
  CHECK(s.consecutive_trips == 2);
  CHECK(s.open_ms == 60000);
  CHECK(breaker.Acquire().retry_after_ms == 60000);
}

TEST_CASE("a successful but slow probe re-opens the breaker", "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(BreakerSettings{}, clock);
  TripOnFailures(breaker);
  const BreakerPermit probe = WaitForProbe(breaker, clock);
  breaker.Record(probe, BreakerOutcome::kSuccess, milliseconds(5001));
  CHECK(breaker.Snapshot().state == BreakerState::kOpen);
  CHECK(breaker.Snapshot().last_trip == BreakerTrip::kProbeSlow);
}

TEST_CASE("a probe that ends in a client error or throttling gives its turn back", "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(BreakerSettings{}, clock);
  TripOnFailures(breaker);
  BreakerPermit probe = WaitForProbe(breaker, clock);
  breaker.Record(probe, BreakerOutcome::kSuccess, kFast);
  for (BreakerOutcome neither : {BreakerOutcome::kIgnored, BreakerOutcome::kThrottled}) {
    probe = breaker.Acquire();
    REQUIRE(probe.probe);
    breaker.Record(probe, neither, kFast);
    CHECK(breaker.Snapshot().state == BreakerState::kHalfOpen);
    CHECK(breaker.Snapshot().half_open_successes == 1);
    CHECK_FALSE(breaker.Snapshot().probe_in_flight);
  }
  Run(breaker, 2, BreakerOutcome::kSuccess);  // probes 2 and 3
  CHECK(breaker.Snapshot().state == BreakerState::kClosed);
}

TEST_CASE(
    "the open duration doubles with each trip in a row, up to its cap, and resets after "
    "closing",
    "[breaker]") {
  BreakerSettings settings;
  settings.open_ms = 30000;
  settings.max_open_ms = 100000;
  CHECK(BreakerOpenMs(settings, 1) == 30000);
  CHECK(BreakerOpenMs(settings, 2) == 60000);
  CHECK(BreakerOpenMs(settings, 3) == 100000);
  CHECK(BreakerOpenMs(settings, 1000000) == 100000);

  FakeClock clock;
  CircuitBreaker breaker(settings, clock);
  TripOnFailures(breaker);
  for (int64_t expected : {60000, 100000, 100000}) {
    const BreakerPermit probe = WaitForProbe(breaker, clock);
    breaker.Record(probe, BreakerOutcome::kFailure, kFast);
    CHECK(breaker.Snapshot().open_ms == expected);
  }
  CHECK(breaker.Snapshot().consecutive_trips == 4);
}

TEST_CASE("after closing, the next trip opens for the base duration again", "[breaker]") {
  FakeClock clock;
  CircuitBreaker breaker(BreakerSettings{}, clock);
  TripOnFailures(breaker);
  breaker.Record(WaitForProbe(breaker, clock), BreakerOutcome::kFailure, kFast);
  REQUIRE(breaker.Snapshot().open_ms == 60000);
  breaker.Record(WaitForProbe(breaker, clock), BreakerOutcome::kSuccess, kFast);
  Run(breaker, 2, BreakerOutcome::kSuccess);
  REQUIRE(breaker.Snapshot().state == BreakerState::kClosed);
  TripOnFailures(breaker);
  CHECK(breaker.Snapshot().open_ms == 30000);
  CHECK(breaker.Snapshot().consecutive_trips == 1);
}

}  // namespace
}  // namespace keel::circuit_breaker_test
