// Probe concurrency (CB-1: "half-open with 3 probe calls and at most 1 concurrent probe"),
// as a property: whatever the interleaving of Acquire, Record and time, no two probes are
// ever in flight at once. A probe is in flight from its admission until its caller records
// it, or until probe_timeout_ms have passed (then the breaker has declared it hung).
// First deterministic random interleavings of simulated callers (seeded, replayable), then
// real threads hammering one breaker.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"
#include "server/policy/circuit_breaker.h"

namespace keel::breaker_probe_property_test {
namespace {

using std::chrono::milliseconds;

struct Held {
  BreakerPermit permit;
  TimePoint admitted_at;
};

// Probes held by callers that the breaker has not yet declared hung.
int LiveProbes(const std::vector<std::optional<Held>>& callers, TimePoint now,
               const BreakerSettings& settings) {
  int live = 0;
  for (const std::optional<Held>& held : callers) {
    if (held && held->permit.probe &&
        now - held->admitted_at < milliseconds(settings.probe_timeout_ms)) {
      ++live;
    }
  }
  return live;
}

// Counts of what one run went through, so the property is known not to hold vacuously.
struct Coverage {
  int probes = 0;
  int closes = 0;
  int trips[7] = {};  // by BreakerTrip
};

// One replayable run: `steps` random operations of 6 simulated callers against one breaker.
// Caller 0 is slow to answer, so its probes often outlive a re-open or time out.
void RunInterleaving(unsigned seed, const BreakerSettings& settings, int steps,
                     Coverage& coverage) {
  FakeClock clock;
  CircuitBreaker breaker(settings, clock);
  std::mt19937 rng(seed);
  std::vector<std::optional<Held>> callers(6);
  BreakerState last = BreakerState::kClosed;
  for (int step = 0; step < steps; ++step) {
    std::optional<Held>& caller = callers[rng() % callers.size()];
    const unsigned op = rng() % 10;
    if (op < 4 && !caller) {
      const BreakerPermit permit = breaker.Acquire();
      if (permit.admitted) caller = Held{permit, clock.Now()};
      if (permit.probe) ++coverage.probes;
    } else if (op < 8 && caller && (&caller != &callers[0] || rng() % 16 == 0)) {
      static constexpr BreakerOutcome kOutcomes[] = {
          BreakerOutcome::kSuccess, BreakerOutcome::kSuccess, BreakerOutcome::kSuccess,
          BreakerOutcome::kFailure, BreakerOutcome::kFailure, BreakerOutcome::kThrottled,
          BreakerOutcome::kIgnored};
      breaker.Record(caller->permit, kOutcomes[rng() % 7], clock.Now() - caller->admitted_at);
      caller.reset();
    } else if (op >= 8) {
      clock.Advance(milliseconds(rng() % 250));
    }
    INFO("seed " << seed << ", mode " << BreakerModeName(settings.mode) << ", step " << step);
    REQUIRE(LiveProbes(callers, clock.Now(), settings) <= 1);

    const BreakerSnapshot s = breaker.Snapshot();
    if (last == BreakerState::kHalfOpen && s.circuit == BreakerState::kClosed) ++coverage.closes;
    if (last != BreakerState::kOpen && s.circuit == BreakerState::kOpen) {
      ++coverage.trips[static_cast<int>(s.last_trip)];
    }
    last = s.circuit;
  }
}

TEST_CASE("no interleaving of calls, results and time admits two concurrent probes", "[breaker]") {
  BreakerSettings settings;
  settings.window_ms = 5000;
  settings.minimum_calls = 4;
  settings.slow_call_ms = 300;
  settings.open_ms = 100;
  settings.max_open_ms = 1600;
  settings.half_open_probes = 3;
  settings.probe_timeout_ms = 1000;
  Coverage coverage;
  for (unsigned seed = 1; seed <= 40; ++seed) {
    settings.mode = seed % 2 == 0 ? BreakerMode::kNormal : BreakerMode::kMetricsOnly;
    // Half the runs give up on half-open before a probe can time out, so re-opens leave
    // probes running (invariant 2); the other half let probes time out.
    settings.half_open_max_wait_ms = seed % 4 < 2 ? 700 : 3000;
    RunInterleaving(seed, settings, 4000, coverage);
  }
  CHECK(coverage.probes > 1000);
  CHECK(coverage.closes > 40);
  for (BreakerTrip trip :
       {BreakerTrip::kFailureRate, BreakerTrip::kSlowRate, BreakerTrip::kProbeFailed,
        BreakerTrip::kProbeSlow, BreakerTrip::kProbeTimeout, BreakerTrip::kHalfOpenMaxWait}) {
    INFO(BreakerTripName(trip));
    CHECK(coverage.trips[static_cast<int>(trip)] > 0);
  }
}

// A FakeClock that threads may read and advance at once.
class AtomicClock final : public Clock {
 public:
  TimePoint Now() const override { return TimePoint(Duration(ticks_.load())); }
  void Advance(Duration d) { ticks_.fetch_add(d.count()); }

 private:
  std::atomic<Duration::rep> ticks_{
      std::chrono::duration_cast<Duration>(std::chrono::hours(1)).count()};
};

TEST_CASE("threads racing on one breaker never have two probes in flight", "[breaker]") {
  BreakerSettings settings;
  settings.window_ms = 2000;
  settings.minimum_calls = 4;
  settings.open_ms = 5;
  settings.max_open_ms = 40;
  // No probe is ever declared hung here, so every admitted probe is in flight until its
  // thread records it, and the count below is exact.
  settings.half_open_max_wait_ms = 3600 * 1000;
  settings.probe_timeout_ms = 3600 * 1000;
  AtomicClock clock;
  CircuitBreaker breaker(settings, clock);
  std::atomic<int> in_flight{0};
  std::atomic<int> most_in_flight{0};
  std::atomic<int> probes{0};

  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(t + 1);
      for (int i = 0; i < 20000; ++i) {
        const BreakerPermit permit = breaker.Acquire();
        if (permit.probe) {
          ++probes;
          const int now_in_flight = ++in_flight;
          int most = most_in_flight.load();
          while (now_in_flight > most &&
                 !most_in_flight.compare_exchange_weak(most, now_in_flight)) {
          }
          std::this_thread::yield();  // give the others a chance to try for a second probe
          --in_flight;  // before Record: after it, the next probe may be admitted at once
        }
        if (permit.admitted) {
          const auto outcome = rng() % 2 == 0 ? BreakerOutcome::kFailure : BreakerOutcome::kSuccess;
          breaker.Record(permit, outcome, milliseconds(1));
        }
        if (rng() % 8 == 0) clock.Advance(milliseconds(1));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(most_in_flight.load() == 1);
  CHECK(probes.load() > 10);
}

}  // namespace
}  // namespace keel::breaker_probe_property_test
