#include "server/upstream/stream_schedule.h"

#include <algorithm>

namespace keel {

void StreamSchedule::Wanted(TimePoint now) {
  if (wanted_) return;
  wanted_ = true;
  due_ = now;
}

bool StreamSchedule::Ended(long status, bool event_stream, TimePoint now) {
  open_ = false;
  const bool transient = status == 0 || (status >= 200 && status <= 299 && event_stream);
  if (!transient) {
    due_ = TimePoint::max();
    return false;
  }
  due_ = now + delay_;
  delay_ = std::min<Duration>(delay_ * 2, kMaxRetry);
  return true;
}

}  // namespace keel
