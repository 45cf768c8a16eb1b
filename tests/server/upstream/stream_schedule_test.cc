// StreamSchedule (server/upstream/stream_schedule.h): when keel opens an HTTP upstream's
// legacy GET stream, and again; time given as values.
#include "server/upstream/stream_schedule.h"

#include <cstdint>

#include <catch2/catch.hpp>

#include "server/upstream/reconnect_backoff.h"

namespace keel::stream_schedule_test {

TEST_CASE("the GET stream is due once notifications/initialized was accepted, not before",
          "[upstream][http]") {
  StreamSchedule schedule(1);
  const TimePoint t0{};
  CHECK_FALSE(schedule.Due(t0 + Millis(100000)));
  schedule.Wanted(t0);
  CHECK(schedule.Due(t0));
  schedule.Opened();
  CHECK_FALSE(schedule.Due(t0 + Millis(100000)));
  CHECK(schedule.due() == TimePoint::max());
}

TEST_CASE("a stream that ends is opened again after REC-2's delay, attempt after attempt",
          "[upstream][http]") {
  const uint64_t id = 12345;
  StreamSchedule schedule(id);
  TimePoint now{};
  schedule.Wanted(now);
  for (int attempt = 1; attempt <= 8; ++attempt) {
    CHECK(schedule.attempt() == attempt);
    const Duration expected = ReconnectDelay(attempt, id);
    schedule.Opened();
    REQUIRE(schedule.Ended(attempt % 2 == 0 ? 200 : 0, true, now));
    CHECK_FALSE(schedule.Due(now + expected - Millis(1)));
    CHECK(schedule.Due(now + expected));
    now += expected;
  }
  // A message on the stream: the next end is a first attempt again.
  schedule.Opened();
  schedule.OnMessage();
  CHECK(schedule.attempt() == 1);
  REQUIRE(schedule.Ended(200, true, now));
  CHECK(schedule.due() == now + ReconnectDelay(1, id));
}

TEST_CASE("a refused GET stream is never opened again", "[upstream][http]") {
  for (const long status : {405L, 404L, 500L}) {
    StreamSchedule schedule(1);
    const TimePoint t0{};
    schedule.Wanted(t0);
    schedule.Opened();
    CHECK_FALSE(schedule.Ended(status, false, t0));
    CHECK_FALSE(schedule.Due(t0 + Millis(3600000)));
  }
  StreamSchedule not_sse(1);
  not_sse.Wanted(TimePoint{});
  not_sse.Opened();
  CHECK_FALSE(not_sse.Ended(200, false, TimePoint{}));
}

}  // namespace keel::stream_schedule_test
