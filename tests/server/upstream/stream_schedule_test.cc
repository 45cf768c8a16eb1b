// StreamSchedule (server/upstream/stream_schedule.h): when keel opens an HTTP upstream's
// legacy GET stream, and again; time given as values.
#include "server/upstream/stream_schedule.h"

#include <catch2/catch.hpp>

namespace keel::stream_schedule_test {

TEST_CASE("the GET stream is due once notifications/initialized was accepted, not before",
          "[upstream][http]") {
  StreamSchedule schedule;
  const TimePoint t0{};
  CHECK_FALSE(schedule.Due(t0 + Millis(100000)));
  schedule.Wanted(t0);
  CHECK(schedule.Due(t0));
  schedule.Opened();
  CHECK_FALSE(schedule.Due(t0 + Millis(100000)));
  CHECK(schedule.due() == TimePoint::max());
}

TEST_CASE("a stream that ends is opened again after a delay that doubles to its cap",
          "[upstream][http]") {
  StreamSchedule schedule;
  TimePoint now{};
  schedule.Wanted(now);
  Duration expected = StreamSchedule::kFirstRetry;
  for (int round = 0; round < 8; ++round) {
    schedule.Opened();
    REQUIRE(schedule.Ended(round % 2 == 0 ? 200 : 0, true, now));
    CHECK_FALSE(schedule.Due(now + expected - Millis(1)));
    CHECK(schedule.Due(now + expected));
    now += expected;
    expected = std::min<Duration>(expected * 2, StreamSchedule::kMaxRetry);
  }
  CHECK(schedule.delay() == StreamSchedule::kMaxRetry);
  schedule.OnMessage();
  CHECK(schedule.delay() == StreamSchedule::kFirstRetry);
}

TEST_CASE("a refused GET stream is never opened again", "[upstream][http]") {
  for (const long status : {405L, 404L, 500L}) {
    StreamSchedule schedule;
    const TimePoint t0{};
    schedule.Wanted(t0);
    schedule.Opened();
    CHECK_FALSE(schedule.Ended(status, false, t0));
    CHECK_FALSE(schedule.Due(t0 + Millis(3600000)));
  }
  StreamSchedule not_sse;
  not_sse.Wanted(TimePoint{});
  not_sse.Opened();
  CHECK_FALSE(not_sse.Ended(200, false, TimePoint{}));
}

}  // namespace keel::stream_schedule_test
