// StreamSchedule: when HttpUpstream opens the legacy GET stream, and opens it again
// (http_upstream.h rule 5). Pure: time comes in as values; one owner (HttpUpstream's thread).
//
//  1. Nothing is opened until Wanted(now) (notifications/initialized was accepted); then the
//     stream is due at once. Wanted again changes nothing.
//  2. A stream that ended after a 2xx event stream (whether the upstream ended it or the
//     connection broke), or that reached nobody (status 0), is due again after REC-2's
//     delay (reconnect_backoff.h) for the next attempt: the first end since the last
//     message on a stream is attempt 1 (250 ms, jittered by the client id), then 2, 3...
//     up to the 8 s cap; a message on the stream makes the next end attempt 1 again.
//  3. Any other end (405, a 4xx or 5xx, a 2xx that is no event stream) means the upstream
//     has no GET stream: it is never opened again.
#pragma once

#include <cstdint>

#include "server/runtime/clock.h"

namespace keel {

class StreamSchedule {
 public:
  // `client_id`: REC-2's jitter (reconnect_backoff.h).
  explicit StreamSchedule(uint64_t client_id) : client_id_(client_id) {}

  void Wanted(TimePoint now);
  bool Due(TimePoint now) const { return !open_ && now >= due_; }
  void Opened() { open_ = true; }
  void OnMessage() { attempt_ = 1; }
  // Rule 2 and 3; true when the stream will be opened again.
  bool Ended(long status, bool event_stream, TimePoint now);
  // When the stream is due; TimePoint::max() while open or never.
  TimePoint due() const { return open_ ? TimePoint::max() : due_; }
  // The attempt the next end will schedule (rule 2).
  int attempt() const { return attempt_; }

 private:
  bool wanted_ = false;
  bool open_ = false;
  TimePoint due_ = TimePoint::max();
  const uint64_t client_id_;
  int attempt_ = 1;
};

}  // namespace keel
