#include "server/upstream/stream_schedule.h"

#include "server/upstream/reconnect_backoff.h"

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
  due_ = now + ReconnectDelay(attempt_, client_id_);
  // Counted on past the cap, so that the jitter goes on changing; bounded against overflow.
  if (attempt_ < 1000000) ++attempt_;
  return true;
}

}  // namespace keel
