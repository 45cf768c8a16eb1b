#include "server/policy/breaker_window.h"

#include <algorithm>

#include "server/policy/policy_types.h"

namespace keel {

BreakerCounts& BreakerCounts::operator+=(const BreakerCounts& other) {
  calls += other.calls;
  failures += other.failures;
  slow += other.slow;
  throttled += other.throttled;
  return *this;
}

BreakerCounts& BreakerCounts::operator-=(const BreakerCounts& other) {
  calls -= other.calls;
  failures -= other.failures;
  slow -= other.slow;
  throttled -= other.throttled;
  return *this;
}

int64_t EpochSecond(TimePoint t) {
  return std::chrono::floor<std::chrono::seconds>(t.time_since_epoch()).count();
}

BreakerWindow::BreakerWindow(int64_t window_ms) {
  constexpr int64_t kMaxBuckets = kMaxBreakerWindowMs / 1000;
  const int64_t seconds = (std::max<int64_t>(window_ms, 1) + 999) / 1000;
  buckets_.resize(static_cast<size_t>(std::min(seconds, kMaxBuckets)));
}

size_t BreakerWindow::IndexOf(int64_t second) const {
  const int64_t n = buckets();
  return static_cast<size_t>(((second % n) + n) % n);
}

void BreakerWindow::MoveTo(int64_t second) {
  if (started_ && second <= newest_second_) return;
  if (!started_ || second - newest_second_ >= buckets()) {
    Clear();
  } else {
    // The bucket of each new second held that second minus buckets(): now out of the window.
    for (int64_t s = newest_second_ + 1; s <= second; ++s) {
      BreakerCounts& bucket = buckets_[IndexOf(s)];
      totals_ -= bucket;
      bucket = {};
    }
  }
  started_ = true;
  newest_second_ = second;
}

BreakerCounts BreakerWindow::Add(TimePoint now, const BreakerCounts& delta) {
  MoveTo(EpochSecond(now));
  buckets_[IndexOf(newest_second_)] += delta;
  totals_ += delta;
  return totals_;
}

BreakerCounts BreakerWindow::CountsAt(TimePoint now) const {
  const int64_t second = EpochSecond(now);
  if (!started_ || second <= newest_second_) return totals_;
  if (second - newest_second_ >= buckets()) return {};
  BreakerCounts counts = totals_;
  for (int64_t s = newest_second_ + 1; s <= second; ++s) counts -= buckets_[IndexOf(s)];
  return counts;
}

void BreakerWindow::Clear() {
  std::fill(buckets_.begin(), buckets_.end(), BreakerCounts{});
  totals_ = {};
  started_ = false;
}

}  // namespace keel
