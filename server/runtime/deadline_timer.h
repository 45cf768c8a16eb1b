// DeadlineTimer: runs a function at a point in time of the steady clock, on a thread of its
// own — what wakes a suspended job (suspend.h) at its deadline, where a blocked thread would
// have used a timed wait.
//
// Arm(when, fn) returns an id; fn runs once on the timer's thread at or after `when`,
// unless Disarm(id) came first. Disarm() of an id that already ran, or is running, does
// nothing and does not wait for it: fn must keep alive what it touches (capture a
// shared_ptr or weak_ptr, not `this`). fn must not block; it may Arm() and Disarm().
//
// Cost: arming a time no earlier than the one the thread already waits for (the usual case:
// every call of a server has the same maximum, and each is disarmed when the call ends)
// takes a lock and no system call; an earlier one wakes the thread to wait less. A timer
// disarmed early still ends the thread's wait at its time, once, for nothing.
//
// Thread-safety: every member may be called from any thread. Shared() is the process's
// timer, started at its first Arm() and never destroyed (timers may be armed while the
// process exits).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

#include "server/runtime/clock.h"

namespace keel {

class DeadlineTimer {
 public:
  static DeadlineTimer& Shared();

  DeadlineTimer() = default;
  // Stops the thread; timers still armed never run.
  ~DeadlineTimer();
  DeadlineTimer(const DeadlineTimer&) = delete;
  DeadlineTimer& operator=(const DeadlineTimer&) = delete;

  uint64_t Arm(TimePoint when, std::function<void()> fn);
  void Disarm(uint64_t id);

  // Timers armed and not yet run or disarmed (for tests).
  size_t armed() const;

 private:
  using Key = std::pair<TimePoint, uint64_t>;
  void Main();

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, std::function<void()>> timers_;   // guarded by mu_
  std::unordered_map<uint64_t, TimePoint> when_;  // guarded by mu_: id -> its key's time
  uint64_t next_id_ = 1;                          // guarded by mu_
  bool stopping_ = false;                         // guarded by mu_
  // guarded by mu_: when the thread's wait ends at the latest (max: not waiting on a time).
  TimePoint wake_at_ = TimePoint::max();
  std::thread thread_;  // started by the first Arm()
};

}  // namespace keel
