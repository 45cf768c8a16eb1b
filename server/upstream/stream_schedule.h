// StreamSchedule: when HttpUpstream opens the legacy GET stream, and opens it again
// (http_upstream.h rule 5). Pure: time comes in as values; one owner (HttpUpstream's thread).
//
//  1. Nothing is opened until Wanted(now) (notifications/initialized was accepted); then the
//     stream is due at once. Wanted again changes nothing.
//  2. A stream that ended after a 2xx event stream (whether the upstream ended it or the
//     connection broke), or that reached nobody (status 0), is due again after
//     a delay: kFirstRetry, doubling to kMaxRetry; a message on the stream resets the delay.
//  3. Any other end (405, a 4xx or 5xx, a 2xx that is no event stream) means the upstream
//     has no GET stream: it is never opened again.
#pragma once

#include "server/runtime/clock.h"

namespace keel {

class StreamSchedule {
 public:
  static constexpr Duration kFirstRetry = Millis(1000);
  static constexpr Duration kMaxRetry = Millis(30000);

  void Wanted(TimePoint now);
  bool Due(TimePoint now) const { return !open_ && now >= due_; }
  void Opened() { open_ = true; }
  void OnMessage() { delay_ = kFirstRetry; }
  // Rule 2 and 3; true when the stream will be opened again.
  bool Ended(long status, bool event_stream, TimePoint now);
  // When the stream is due; TimePoint::max() while open or never.
  TimePoint due() const { return open_ ? TimePoint::max() : due_; }
  Duration delay() const { return delay_; }

 private:
  bool wanted_ = false;
  bool open_ = false;
  TimePoint due_ = TimePoint::max();
  Duration delay_ = kFirstRetry;
};

}  // namespace keel
