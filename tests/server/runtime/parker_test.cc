// Parker: a permit granted before Park() lets it return at once; one granted from another
// thread wakes a parked thread. Latches, not sleeps.
#include "server/runtime/parker.h"

#include <atomic>
#include <thread>

#include <catch2/catch.hpp>

namespace keel::parker_test {
namespace {

TEST_CASE("a permit granted before Park() is consumed without sleeping") {
  Parker parker;
  parker.Unpark();
  parker.Park();  // returns at once: the permit was waiting
  SUCCEED("Park() returned");
}

TEST_CASE("Unpark() from another thread wakes a parked thread, once per permit") {
  Parker parker;
  Parker back;
  std::atomic<int> wakes{0};
  std::thread sleeper([&] {
    for (int i = 0; i < 1000; ++i) {
      parker.Park();
      wakes.fetch_add(1);
      back.Unpark();
    }
  });
  bool in_step = true;
  for (int i = 0; i < 1000; ++i) {
    parker.Unpark();
    back.Park();  // ping-pong: each Unpark is consumed before the next is granted
    in_step = in_step && wakes.load() == i + 1;
  }
  sleeper.join();
  CHECK(in_step);
}

}  // namespace
}  // namespace keel::parker_test
