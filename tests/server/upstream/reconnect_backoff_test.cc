// ReconnectBackoff (server/upstream/reconnect_backoff.h): REC-2's capped exponential backoff
// with jitter, deterministic from the client id and the attempt.
#include "server/upstream/reconnect_backoff.h"

#include <cstdint>
#include <set>

#include <catch2/catch.hpp>

namespace keel::reconnect_backoff_test {

TEST_CASE("reconnect ceilings double from 250 ms and stop at the 8 s cap", "[upstream]") {
  const Millis expected[] = {Millis(250),  Millis(500),  Millis(1000), Millis(2000),
                             Millis(4000), Millis(8000), Millis(8000), Millis(8000)};
  for (int attempt = 1; attempt <= 8; ++attempt) {
    CHECK(ReconnectCeiling(attempt) == expected[attempt - 1]);
  }
  CHECK(ReconnectCeiling(1000000) == kReconnectCap);  // no overflow however many attempts
}

TEST_CASE("every reconnect delay lies in the upper half of its step", "[upstream]") {
  for (uint64_t id = 1; id <= 200; ++id) {
    for (int attempt = 1; attempt <= 10; ++attempt) {
      const Duration ceiling = ReconnectCeiling(attempt);
      const Duration delay = ReconnectDelay(attempt, id * 0x9e3779b97f4a7c15ULL);
      CHECK(delay >= ceiling / 2);
      CHECK(delay < ceiling);
    }
  }
  CHECK(ReconnectDelay(0, 7) == ReconnectDelay(1, 7));  // below 1 counts as the first
  CHECK(ReconnectDelay(-5, 7) == ReconnectDelay(1, 7));
}

TEST_CASE("the jitter is a function of the client id and the attempt", "[upstream]") {
  CHECK(ReconnectDelay(3, 42) == ReconnectDelay(3, 42));
  // Clients that lost one upstream at the same moment spread over the step...
  std::set<Duration::rep> at_cap;
  std::set<Duration::rep> first;
  for (uint64_t id = 1; id <= 100; ++id) {
    at_cap.insert(ReconnectDelay(7, id).count());
    first.insert(ReconnectDelay(1, id).count());
  }
  CHECK(at_cap.size() >= 95);
  CHECK(first.size() >= 95);
  // ...and one client's successive attempts at the cap do not repeat one delay.
  std::set<Duration::rep> one_client;
  for (int attempt = 6; attempt < 26; ++attempt) {
    one_client.insert(ReconnectDelay(attempt, 42).count());
  }
  CHECK(one_client.size() >= 19);
}

TEST_CASE("random reconnect ids differ between draws", "[upstream]") {
  CHECK(RandomReconnectId() != RandomReconnectId());
}

}  // namespace keel::reconnect_backoff_test
