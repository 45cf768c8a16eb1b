// FakeClock: time that moves only when a test says so. Single-threaded tests only.
#pragma once

#include "server/runtime/clock.h"

namespace keel {

class FakeClock final : public Clock {
 public:
  TimePoint Now() const override { return now_; }
  void Advance(Duration d) { now_ += d; }

 private:
  TimePoint now_ = TimePoint() + std::chrono::hours(1);
};

}  // namespace keel
