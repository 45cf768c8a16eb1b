// Clock: the one source of time for the server, injectable so tests drive time by hand.
// SteadyClock is thread-safe; FakeClock (tests/fakes) is for single-threaded tests.
#pragma once

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>

namespace keel {

using Duration = std::chrono::steady_clock::duration;
using TimePoint = std::chrono::steady_clock::time_point;
using Millis = std::chrono::milliseconds;

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

class SteadyClock final : public Clock {
 public:
  TimePoint Now() const override { return std::chrono::steady_clock::now(); }
};

// Wall-clock milliseconds since the Unix epoch: for stored times (ledger, tasks, settings),
// never for measuring durations.
inline int64_t WallClockMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// poll(2)'s timeout for waking at `wake`: -1 for never, rounded up to whole milliseconds
// (waking early only spins).
inline int PollTimeoutMs(TimePoint now, TimePoint wake) {
  if (wake == TimePoint::max()) return -1;
  if (wake <= now) return 0;
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(wake - now).count();
  return static_cast<int>(std::min<long long>((micros + 999) / 1000, INT_MAX));
}

// An absolute point in time, or "never". Passed down instead of relative timeouts.
class Deadline {
 public:
  static Deadline Never() { return Deadline(TimePoint::max()); }
  static Deadline At(TimePoint when) { return Deadline(when); }

  bool is_never() const { return when_ == TimePoint::max(); }
  TimePoint when() const { return when_; }
  bool Expired(TimePoint now) const { return !is_never() && now >= when_; }
  // Time left, clamped at zero; huge for "never".
  Duration Remaining(TimePoint now) const {
    if (is_never()) return Duration::max();
    return now >= when_ ? Duration::zero() : when_ - now;
  }

 private:
  explicit Deadline(TimePoint when) : when_(when) {}
  TimePoint when_;
};

inline long long ToMillis(Duration d) { return std::chrono::duration_cast<Millis>(d).count(); }

}  // namespace keel
