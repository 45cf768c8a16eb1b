// ProcessSupervisor: the stopping rules of one RunProcess (process_runner.h, items 4 to 6) as
// a state machine with no I/O: it is told what happened — the direct child exited, the run was
// cancelled, the output pipes are (or are not) all closed — and the time, and answers what
// to do — SIGTERM the group, SIGKILL the group, keep reading, or end the run — and when the
// loop must wake next even if nothing happens. RunProcess is the I/O loop around it; the rules
// are unit-tested here with an injected clock and no process.
//
// The rules:
//  1. Before the child exits, cancellation (first) or the deadline passing stops the run:
//     SIGTERM to the group, and SIGKILL to the group once kill_grace has passed (in the same
//     step when the grace is 0). The stop reason is decided once and never changes.
//  2. When the child exits on its own, the group is SIGKILLed at once (stragglers are not part
//     of the command's contract); a cancel or deadline after that changes nothing. A group that
//     was stopping keeps its grace.
//  3. Once the child has exited, the run ends as soon as every pipe is closed. Once it has
//     exited and the group has been SIGKILLed, the pipes are read for at most
//     max(kill_grace, kMinDrain) after the SIGKILL; then what they hold is read once and the
//     run ends (a holder that left the group cannot keep it waiting).
//  4. Each order is given once: one SIGTERM, one SIGKILL (RunProcess SIGKILLs the group once
//     more before reaping, whatever the supervisor said).
//
// Thread: one per run, used by the thread in RunProcess only. Times are steady_clock points;
// TimePoint::max() means never.
#pragma once

#include "server/runtime/clock.h"

namespace keel {

// After the child's exit (or the group's kill) the pipes are read to EOF for at least this
// long, even with kill_grace 0: the killed group's holders are gone within a few scheduler
// ticks, so only a process that left the group can make a run wait this long.
constexpr Duration kMinDrain = Millis(200);

class ProcessSupervisor {
 public:
  // Why the run was stopped before the child exited on its own, if it was.
  enum class Stop { kNone, kCancelled, kTimedOut };

  // What happened, as seen just before Advance.
  struct Seen {
    bool child_exited = false;  // the direct child has exited (sticky once reported)
    bool cancelled = false;     // the run's cancellation token is cancelled
    bool pipes_open = true;     // some output pipe (stdout, stderr, progress) is still open
  };

  // What RunProcess must do now, in this order.
  struct Orders {
    bool terminate_group = false;  // SIGTERM to the process group
    bool kill_group = false;       // SIGKILL to the process group
    enum class Then { kKeepReading, kEnd, kDrainThenEnd } then = Then::kKeepReading;
  };

  ProcessSupervisor(TimePoint deadline, Duration kill_grace);

  Orders Advance(TimePoint now, const Seen& seen);

  // When the loop must call Advance again if nothing happens first: the deadline while
  // watching, the end of the grace while stopping, the end of the drain once killed.
  TimePoint NextWake() const;

  // Nothing has stopped the run and the child runs: cancellation is still worth waking for.
  bool watching() const { return stop_ == Stop::kNone && !exited_; }
  bool child_exited() const { return exited_; }
  Stop stop() const { return stop_; }

 private:
  void KillGroup(TimePoint now, Orders& orders);

  const TimePoint deadline_;
  const Duration kill_grace_;
  Stop stop_ = Stop::kNone;
  bool exited_ = false;
  bool killed_ = false;
  TimePoint kill_at_ = TimePoint::max();     // stopping: when SIGTERM's grace ends
  TimePoint abandon_at_ = TimePoint::max();  // pipes still open this long after SIGKILL: give up
};

// t + d, or TimePoint::max() where that would overflow (or t is already "never").
TimePoint AddSaturating(TimePoint t, Duration d);

}  // namespace keel
