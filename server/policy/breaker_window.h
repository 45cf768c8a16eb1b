// BreakerWindow: the closed breaker's time-based sliding window (CB-1), a ring of 1 s buckets
// in the manner of resilience4j's SlidingTimeWindowMetrics (reference/resilience.md §1.1).
// A result lands in the bucket of the clock second it was recorded in; the window holds the
// last `buckets()` seconds, the current (partial) second included, so a 60 s window sees
// between 59 and 60 s of history. Totals are kept as running sums: adding is O(1), and
// moving on by s seconds costs O(min(s, buckets())).
//
// Not thread-safe: its owner (CircuitBreaker) serialises. Time is passed in, never read.
//
// Invariants:
//  1. buckets() == clamp(ceil(window_ms / 1000), 1, kMaxBreakerWindowMs / 1000).
//  2. Add() and CountsAt() never count a result recorded buckets() or more seconds before
//     `now`.
//  3. Times passed to Add() never go back; an earlier time counts as the newest second seen.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "server/runtime/clock.h"

namespace keel {

struct BreakerCounts {
  int64_t calls = 0;      // successes and failures: what the rates are computed over
  int64_t failures = 0;   // of calls
  int64_t slow = 0;       // of calls, slower than the slow-call threshold (success or failure)
  int64_t throttled = 0;  // 429-like rejections: reported beside the calls, never in them

  BreakerCounts& operator+=(const BreakerCounts& other);
  BreakerCounts& operator-=(const BreakerCounts& other);
  bool operator==(const BreakerCounts&) const = default;
};

class BreakerWindow {
 public:
  explicit BreakerWindow(int64_t window_ms);

  // Adds `delta` to the bucket of `now` and returns the window's totals as of `now`.
  BreakerCounts Add(TimePoint now, const BreakerCounts& delta);
  // The totals as of `now`, leaving the window as it is.
  BreakerCounts CountsAt(TimePoint now) const;
  // Forgets every result (the breaker closed: a new closed period judges afresh).
  void Clear();

  int buckets() const { return static_cast<int>(buckets_.size()); }

 private:
  // Drops the buckets of the seconds that leave the window when `second` is the newest.
  void MoveTo(int64_t second);
  size_t IndexOf(int64_t second) const;

  std::vector<BreakerCounts> buckets_;  // second s lives at s mod buckets()
  BreakerCounts totals_;                // sum of buckets_
  bool started_ = false;
  int64_t newest_second_ = 0;  // valid once started_
};

// The clock second `t` falls in.
int64_t EpochSecond(TimePoint t);

}  // namespace keel
