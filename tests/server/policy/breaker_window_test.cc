// BreakerWindow (CB-1): the closed breaker's sliding window of 1 s buckets. A result counts
// for exactly `buckets()` clock seconds, the one it landed in included, and then leaves.
#include "server/policy/breaker_window.h"

#include <chrono>

#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"
#include "server/policy/policy_types.h"

namespace keel::breaker_window_test {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const BreakerCounts kCall{.calls = 1};
const BreakerCounts kFailure{.calls = 1, .failures = 1};

TEST_CASE("a breaker window has one bucket per second, a partial second rounded up", "[breaker]") {
  CHECK(BreakerWindow(60000).buckets() == 60);
  CHECK(BreakerWindow(1500).buckets() == 2);
  CHECK(BreakerWindow(1).buckets() == 1);
  CHECK(BreakerWindow(0).buckets() == 1);
  CHECK(BreakerWindow(kMaxBreakerWindowMs * 2).buckets() == 3600);  // bounded (policy_types.h)
}

TEST_CASE("results add up within the window and each leaves it after window seconds", "[breaker]") {
  FakeClock clock;  // starts on a whole second
  BreakerWindow window(3000);
  CHECK(window.Add(clock.Now(), kFailure) == BreakerCounts{.calls = 1, .failures = 1});
  clock.Advance(milliseconds(999));  // same second
  CHECK(window.Add(clock.Now(), kCall).calls == 2);
  clock.Advance(milliseconds(1));  // second 1
  CHECK(window.Add(clock.Now(), BreakerCounts{.throttled = 1}) ==
        BreakerCounts{.calls = 2, .failures = 1, .throttled = 1});
  clock.Advance(seconds(1));  // second 2: the last second the first two count in
  CHECK(window.Add(clock.Now(), BreakerCounts{.calls = 1, .slow = 1}) ==
        BreakerCounts{.calls = 3, .failures = 1, .slow = 1, .throttled = 1});
  clock.Advance(seconds(1));  // second 3: second 0 has left
  CHECK(window.CountsAt(clock.Now()) == BreakerCounts{.calls = 1, .slow = 1, .throttled = 1});
  CHECK(window.Add(clock.Now(), kCall) == BreakerCounts{.calls = 2, .slow = 1, .throttled = 1});
}

TEST_CASE("a gap as long as the window empties it", "[breaker]") {
  FakeClock clock;
  BreakerWindow window(60000);
  for (int i = 0; i < 30; ++i) {
    window.Add(clock.Now(), kFailure);
    clock.Advance(seconds(1));
  }
  CHECK(window.CountsAt(clock.Now()).calls == 30);
  clock.Advance(seconds(30));  // the first result landed 60 s ago: it has just left
  CHECK(window.CountsAt(clock.Now()).calls == 29);
  clock.Advance(seconds(29));
  CHECK(window.CountsAt(clock.Now()).calls == 0);
  CHECK(window.Add(clock.Now(), kCall) == kCall);
  clock.Advance(std::chrono::hours(5));
  CHECK(window.Add(clock.Now(), kFailure) == kFailure);
}

TEST_CASE("reading a breaker window does not move it", "[breaker]") {
  FakeClock clock;
  BreakerWindow window(2000);
  window.Add(clock.Now(), kFailure);
  const TimePoint first = clock.Now();
  clock.Advance(seconds(5));
  CHECK(window.CountsAt(clock.Now()).calls == 0);
  CHECK(window.CountsAt(first).calls == 1);  // nothing was dropped by looking
}

TEST_CASE("clearing a breaker window forgets every result", "[breaker]") {
  FakeClock clock;
  BreakerWindow window(60000);
  window.Add(clock.Now(), kFailure);
  window.Add(clock.Now(), kFailure);
  window.Clear();
  CHECK(window.CountsAt(clock.Now()) == BreakerCounts{});
  CHECK(window.Add(clock.Now(), kCall) == kCall);
}

}  // namespace
}  // namespace keel::breaker_window_test
