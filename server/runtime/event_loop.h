// EventLoop: the single protocol thread. It waits with poll() on the fds it watches, a
// wake fd that other threads signal through Post(), and the nearest timer deadline.
//
// Ownership: the loop owns its timers and mailbox; watched fds belong to their owners.
// Thread-safety: Post() may be called from any thread; everything else is loop-thread only.
// Invariants:
//  1. Handlers run on the loop thread, one at a time, and must never block.
//  2. Posted functions run in the order they were posted.
//  3. A cancelled timer never fires; a timer fires at most once.
//  4. Before each poll, the "before-wait" hooks run (the outbox flushes there, so many
//     replies produced in one iteration leave in one write).
//  5. Post() writes the wake fd only while the loop is (about to be) blocked in poll();
//     a loop that is running drains the mailbox on every iteration anyway, and the write
//     plus the wake-up it causes is most of the cost of handing a result back.
#pragma once

#include <poll.h>

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "server/runtime/clock.h"

namespace keel {

class EventLoop {
 public:
  using Fn = std::function<void()>;
  using FdFn = std::function<void(short revents)>;
  using TimerId = uint64_t;

  explicit EventLoop(const Clock& clock);
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Thread-safe: queue `fn` to run on the loop thread and wake the loop.
  void Post(Fn fn);

  // Runs what other threads have posted so far, now, without waiting. For a handler that
  // needs results workers already posted (admission at capacity). Does nothing when
  // called from a posted function.
  void RunPosted();

  TimerId AddTimer(TimePoint when, Fn fn);
  void CancelTimer(TimerId id);

  // Watches `fd` for `events` (POLLIN/POLLOUT); events 0 keeps it registered but idle.
  void Watch(int fd, short events, FdFn fn);
  void SetEvents(int fd, short events);
  void Unwatch(int fd);

  void AddBeforeWait(Fn fn);

  // Runs until Stop(). Stop() may be called from a handler on the loop thread.
  void Run();
  void Stop() { stopping_ = true; }

  // One iteration: waits at most `max_wait` (zero: do not block). For tests.
  void RunOnce(Duration max_wait);

  const Clock& clock() const { return clock_; }

 private:
  // True when the loop may block: the mailbox is empty, and from now on Post() signals.
  bool PrepareToBlock();
  void DrainMailbox(bool wake_fd_readable);
  void RebuildPollSet();
  void FireTimers();

  const Clock& clock_;
  int wake_fd_ = -1;  // eventfd the mailbox signals

  std::mutex mailbox_mu_;
  std::vector<Fn> mailbox_;    // guarded by mailbox_mu_
  std::vector<Fn> draining_;   // loop only: the batch being run, kept to reuse its storage
  bool in_drain_ = false;      // loop only: running draining_
  bool blocking_ = false;      // guarded by mailbox_mu_: the loop is in (or entering) poll()
  bool wake_pending_ = false;  // guarded by mailbox_mu_: a wake-up is already written

  struct Watcher {
    short events;
    FdFn fn;
  };
  std::map<int, Watcher> watchers_;
  std::vector<pollfd> poll_set_;  // wake fd + watchers with events; rebuilt when they change
  bool poll_set_stale_ = true;
  std::multimap<TimePoint, TimerId> timers_by_time_;
  std::map<TimerId, std::pair<TimePoint, Fn>> timers_;
  TimerId next_timer_ = 1;
  std::vector<Fn> before_wait_;
  bool stopping_ = false;
};

}  // namespace keel
