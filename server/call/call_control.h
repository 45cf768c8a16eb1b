// CallControl: what the loop and the worker running one tools/call share.
//
// The phase decides, without a lock, whether a queued call ever runs: the worker moves it
// from queued to running when it picks the job up, the loop moves it from queued to
// abandoned when the call settles first (cancelled, timed out, shut down). Exactly one of
// the two wins, so a call settled while queued never starts, and the loop knows at once
// that no worker will report back for it.
//
// Thread-safety: every member may be used from any thread.
#pragma once

#include <atomic>
#include <cstdint>

#include "server/runtime/cancellation.h"

namespace keel {

class CallControl {
 public:
  // Worker: true when the call may run; false when it was abandoned while queued.
  bool TryStart() { return Transition(kQueued, kRunning); }
  // Loop: true when the call had not started and now never will.
  bool TryAbandon() { return Transition(kQueued, kAbandoned); }
  bool started() const { return phase_.load(std::memory_order_acquire) == kRunning; }

  CancellationToken& token() { return token_; }

  // Loop, before it cancels the token: the client withdrew the call (notifications/cancelled,
  // a closed stream, tasks/cancel), so what the attempt returns next says nothing about the
  // backend (the breaker ignores it). A timeout is not a withdrawal: a backend too slow for
  // keel's clocks counts against it.
  void MarkWithdrawn() { withdrawn_.store(true, std::memory_order_release); }
  bool withdrawn() const { return withdrawn_.load(std::memory_order_acquire); }

 private:
  enum Phase : uint8_t { kQueued, kRunning, kAbandoned };
  bool Transition(Phase from, Phase to) {
    uint8_t expected = from;
    return phase_.compare_exchange_strong(expected, to, std::memory_order_acq_rel);
  }

  std::atomic<uint8_t> phase_{kQueued};
  std::atomic<bool> withdrawn_{false};
  CancellationToken token_;
};

}  // namespace keel
