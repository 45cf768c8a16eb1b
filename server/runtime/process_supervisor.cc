#include "server/runtime/process_supervisor.h"

#include <algorithm>

namespace keel {

TimePoint AddSaturating(TimePoint t, Duration d) {
  if (t == TimePoint::max() || d >= TimePoint::max() - t) return TimePoint::max();
  return t + d;
}

ProcessSupervisor::ProcessSupervisor(TimePoint deadline, Duration kill_grace)
    : deadline_(deadline), kill_grace_(kill_grace) {}

ProcessSupervisor::Orders ProcessSupervisor::Advance(TimePoint now, const Seen& seen) {
  Orders orders;
  if (seen.child_exited && !exited_) {
    exited_ = true;
    // Stragglers of a normal exit are killed now; a stopping group keeps its grace (rule 2).
    if (stop_ == Stop::kNone) KillGroup(now, orders);
  }
  if (watching()) {
    stop_ = seen.cancelled ? Stop::kCancelled : now >= deadline_ ? Stop::kTimedOut : Stop::kNone;
    if (stop_ != Stop::kNone) {
      orders.terminate_group = true;
      kill_at_ = AddSaturating(now, kill_grace_);
    }
  }
  if (stop_ != Stop::kNone && !killed_ && now >= kill_at_) KillGroup(now, orders);
  if (exited_ && !seen.pipes_open) {
    orders.then = Orders::Then::kEnd;
  } else if (exited_ && killed_ && now >= abandon_at_) {
    // A holder escaped the group: take what the pipes hold now, then give up on them.
    orders.then = Orders::Then::kDrainThenEnd;
  }
  return orders;
}

void ProcessSupervisor::KillGroup(TimePoint now, Orders& orders) {
  orders.kill_group = true;
  // Read to EOF even with a grace of 0: what the child wrote before it died is in the pipes.
  if (!killed_) abandon_at_ = AddSaturating(now, std::max(kill_grace_, kMinDrain));
  killed_ = true;
}

TimePoint ProcessSupervisor::NextWake() const {
  TimePoint wake = TimePoint::max();
  if (watching()) wake = deadline_;
  if (stop_ != Stop::kNone && !killed_) wake = std::min(wake, kill_at_);
  if (killed_) wake = std::min(wake, abandon_at_);
  return wake;
}

}  // namespace keel
