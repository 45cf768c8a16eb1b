// EventLoop: timers fire on the injected clock, in order, once; cancelled timers never
// fire; work posted from another thread runs on the loop, in order.
#include "server/runtime/event_loop.h"

#include <chrono>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"

namespace keel::event_loop_test {
namespace {

TEST_CASE("a timer fires once its time has come on the injected clock, and only once") {
  FakeClock clock;
  EventLoop loop(clock);
  int fired = 0;
  loop.AddTimer(clock.Now() + Millis(100), [&] { ++fired; });
  loop.RunOnce(Duration::zero());
  CHECK(fired == 0);
  clock.Advance(Millis(100));
  loop.RunOnce(Duration::zero());
  loop.RunOnce(Duration::zero());
  CHECK(fired == 1);
}

TEST_CASE("timers due together fire in deadline order") {
  FakeClock clock;
  EventLoop loop(clock);
  std::vector<int> order;
  loop.AddTimer(clock.Now() + Millis(30), [&] { order.push_back(3); });
  loop.AddTimer(clock.Now() + Millis(10), [&] { order.push_back(1); });
  loop.AddTimer(clock.Now() + Millis(20), [&] { order.push_back(2); });
  clock.Advance(Millis(30));
  loop.RunOnce(Duration::zero());
  CHECK(order == std::vector<int>{1, 2, 3});
}

TEST_CASE("a cancelled timer never fires") {
  FakeClock clock;
  EventLoop loop(clock);
  bool fired = false;
  const auto id = loop.AddTimer(clock.Now() + Millis(5), [&] { fired = true; });
  loop.CancelTimer(id);
  clock.Advance(Millis(10));
  loop.RunOnce(Duration::zero());
  CHECK_FALSE(fired);
}

TEST_CASE("work posted from another thread runs on the loop in posting order") {
  FakeClock clock;
  EventLoop loop(clock);
  std::vector<int> seen;
  std::thread poster([&] {
    for (int i = 0; i < 100; ++i) loop.Post([&seen, i] { seen.push_back(i); });
  });
  poster.join();
  loop.RunOnce(Millis(1000));  // the wake fd is readable: returns without waiting
  REQUIRE(seen.size() == 100);
  for (int i = 0; i < 100; ++i) CHECK(seen[static_cast<size_t>(i)] == i);
}

TEST_CASE("a post from another thread wakes a loop blocked in poll") {
  FakeClock clock;
  EventLoop loop(clock);
  bool ran = false;
  const auto start = std::chrono::steady_clock::now();
  // The post lands before or after the loop blocks; either way the wait must end at once.
  std::thread poster([&] { loop.Post([&] { ran = true; }); });
  loop.RunOnce(Millis(60000));
  poster.join();
  CHECK(ran);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
}

TEST_CASE("Stop() from a handler ends Run()") {
  FakeClock clock;
  EventLoop loop(clock);
  loop.Post([&] { loop.Stop(); });
  loop.Run();
  SUCCEED("Run() returned");
}

}  // namespace
}  // namespace keel::event_loop_test
