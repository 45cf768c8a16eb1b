// DeadlineTimer: a timer runs once at or after its time, in time order whatever the order
// of arming, and never after Disarm. The order of two timers proves the disarmed one did
// not run, so no test waits on a clock beyond the timers' own short times.
#include "server/runtime/deadline_timer.h"

#include <chrono>
#include <latch>
#include <mutex>
#include <vector>

#include <catch2/catch.hpp>

namespace keel::deadline_timer_test {
namespace {

using namespace std::chrono_literals;

TimePoint Now() { return std::chrono::steady_clock::now(); }

}  // namespace

TEST_CASE("a timer runs once, not before its time", "[timer]") {
  DeadlineTimer timer;
  std::latch ran(1);
  TimePoint at;
  const TimePoint when = Now() + 20ms;
  timer.Arm(when, [&] {
    at = Now();
    ran.count_down();
  });
  ran.wait();
  CHECK(at >= when);
  CHECK(timer.armed() == 0);
}

TEST_CASE("timers run in time order whatever the order they were armed in", "[timer]") {
  DeadlineTimer timer;
  std::mutex mu;
  std::vector<int> order;
  std::latch all(3);
  const auto record = [&](int n) {
    return [&, n] {
      {
        std::lock_guard<std::mutex> lock(mu);
        order.push_back(n);
      }
      all.count_down();
    };
  };
  const TimePoint base = Now();
  timer.Arm(base + 60ms, record(3));
  timer.Arm(base + 40ms, record(2));  // earlier than the one armed: wakes the thread
  timer.Arm(base + 20ms, record(1));
  all.wait();
  CHECK(order == std::vector<int>{1, 2, 3});
}

TEST_CASE("a disarmed timer never runs", "[timer]") {
  DeadlineTimer timer;
  std::atomic<bool> disarmed_ran{false};
  std::latch later_ran(1);
  const TimePoint base = Now();
  const uint64_t id = timer.Arm(base + 10ms, [&] { disarmed_ran = true; });
  timer.Arm(base + 30ms, [&] { later_ran.count_down(); });
  timer.Disarm(id);
  later_ran.wait();  // past the disarmed one's time, in the thread that would have run it
  CHECK_FALSE(disarmed_ran.load());
  timer.Disarm(id);  // twice, or after running: nothing
  CHECK(timer.armed() == 0);
}

TEST_CASE("a timer never due keeps the thread waiting without running it", "[timer]") {
  DeadlineTimer timer;
  std::atomic<bool> never_ran{false};
  std::latch soon(1);
  timer.Arm(TimePoint::max(), [&] { never_ran = true; });
  timer.Arm(Now() + 10ms, [&] { soon.count_down(); });
  soon.wait();
  CHECK_FALSE(never_ran.load());
  CHECK(timer.armed() == 1);
}

}  // namespace keel::deadline_timer_test
