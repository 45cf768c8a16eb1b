// ProcessSupervisor: when a run SIGTERMs its group, when it SIGKILLs it, how long it keeps
// reading, and why it ended — driven by hand with a fake clock, no process involved.
#include "server/runtime/process_supervisor.h"

#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"

namespace keel::process_supervisor_test {
namespace {

using namespace std::chrono_literals;
using Stop = ProcessSupervisor::Stop;
using Then = ProcessSupervisor::Orders::Then;
using Seen = ProcessSupervisor::Seen;

constexpr Seen kRunning{};
constexpr Seen kCancelled{.child_exited = false, .cancelled = true, .pipes_open = true};
constexpr Seen kExitedPipesOpen{.child_exited = true, .cancelled = false, .pipes_open = true};
constexpr Seen kExitedPipesClosed{.child_exited = true, .cancelled = false, .pipes_open = false};

TEST_CASE("a run that nothing stops gives no order and wakes at its deadline", "[process]") {
  FakeClock clock;
  ProcessSupervisor supervisor(clock.Now() + 10s, 2s);
  ProcessSupervisor::Orders orders = supervisor.Advance(clock.Now(), kRunning);
  CHECK_FALSE(orders.terminate_group);
  CHECK_FALSE(orders.kill_group);
  CHECK(orders.then == Then::kKeepReading);
  CHECK(supervisor.watching());
  CHECK(supervisor.NextWake() == clock.Now() + 10s);
}

TEST_CASE("a run with no deadline and nothing happening never needs to wake", "[process]") {
  FakeClock clock;
  ProcessSupervisor supervisor(TimePoint::max(), 2s);
  supervisor.Advance(clock.Now(), kRunning);
  CHECK(supervisor.NextWake() == TimePoint::max());
}

TEST_CASE("cancellation SIGTERMs the group, then SIGKILLs it once the grace has passed",
          "[process]") {
  FakeClock clock;
  ProcessSupervisor supervisor(clock.Now() + 60s, 2s);
  ProcessSupervisor::Orders orders = supervisor.Advance(clock.Now(), kCancelled);
  CHECK(orders.terminate_group);
  CHECK_FALSE(orders.kill_group);
  CHECK(supervisor.stop() == Stop::kCancelled);
  CHECK_FALSE(supervisor.watching());
  CHECK(supervisor.NextWake() == clock.Now() + 2s);

  clock.Advance(1999ms);
  orders = supervisor.Advance(clock.Now(), kCancelled);
  CHECK_FALSE(orders.terminate_group);  // once only
  CHECK_FALSE(orders.kill_group);

  clock.Advance(1ms);
  orders = supervisor.Advance(clock.Now(), kCancelled);
  CHECK(orders.kill_group);
  CHECK(orders.then == Then::kKeepReading);  // the child has not exited yet
  orders = supervisor.Advance(clock.Now(), kCancelled);
  CHECK_FALSE(orders.kill_group);  // once only
}

TEST_CASE("a passed deadline stops the run as timed out", "[process]") {
  FakeClock clock;
  ProcessSupervisor supervisor(clock.Now() + 5s, 1s);
  CHECK_FALSE(supervisor.Advance(clock.Now() + 4999ms, kRunning).terminate_group);
  ProcessSupervisor::Orders orders = supervisor.Advance(clock.Now() + 5s, kRunning);
  CHECK(orders.terminate_group);
  CHECK(supervisor.stop() == Stop::kTimedOut);
  CHECK(supervisor.NextWake() == clock.Now() + 6s);
}

TEST_CASE("cancellation wins over a deadline passed at the same moment", "[process]") {
  FakeClock clock;
  ProcessSupervisor supervisor(clock.Now(), 1s);
  supervisor.Advance(clock.Now(), kCancelled);
  CHECK(supervisor.stop() == Stop::kCancelled);
}

TEST_CASE("with a grace of 0 SIGTERM and SIGKILL are ordered in the same step", "[process]") {
  FakeClock clock;
  ProcessSupervisor supervisor(clock.Now() + 60s, 0s);
  ProcessSupervisor::Orders orders = supervisor.Advance(clock.Now(), kCancelled);
  CHECK(orders.terminate_group);
  CHECK(orders.kill_group);
}

TEST_CASE("a normal exit SIGKILLs the group's stragglers at once and ends when the pipes close",
          "[process]") {
  FakeClock clock;
  ProcessSupervisor supervisor(clock.Now() + 60s, 2s);
  ProcessSupervisor::Orders orders = supervisor.Advance(clock.Now(), kExitedPipesOpen);
  CHECK_FALSE(orders.terminate_group);
  CHECK(orders.kill_group);
  CHECK(orders.then == Then::kKeepReading);  // what it wrote is still in the pipes
  CHECK(supervisor.stop() == Stop::kNone);
  CHECK(supervisor.NextWake() == clock.Now() + 2s);  // max(grace, kMinDrain)

  orders = supervisor.Advance(clock.Now(), kExitedPipesClosed);
  CHECK_FALSE(orders.kill_group);
  CHECK(orders.then == Then::kEnd);
}

TEST_CASE("a cancel or deadline after the child exited changes nothing", "[process]") {
  FakeClock clock;
  ProcessSupervisor supervisor(clock.Now() + 1s, 2s);
  supervisor.Advance(clock.Now(), kExitedPipesOpen);
  clock.Advance(1s);
  ProcessSupervisor::Orders orders =
      supervisor.Advance(clock.Now(), {.child_exited = true, .cancelled = true});
  CHECK_FALSE(orders.terminate_group);
  CHECK_FALSE(orders.kill_group);
  CHECK(supervisor.stop() == Stop::kNone);
}

TEST_CASE(
    "pipes held after the kill are read for kMinDrain even with a grace of 0, then drained "
    "once",
    "[process]") {
  FakeClock clock;
  ProcessSupervisor supervisor(clock.Now() + 60s, 0s);
  supervisor.Advance(clock.Now(), kExitedPipesOpen);
  CHECK(supervisor.NextWake() == clock.Now() + kMinDrain);
  clock.Advance(kMinDrain - 1ms);
  CHECK(supervisor.Advance(clock.Now(), kExitedPipesOpen).then == Then::kKeepReading);
  clock.Advance(1ms);
  CHECK(supervisor.Advance(clock.Now(), kExitedPipesOpen).then == Then::kDrainThenEnd);
}

TEST_CASE(
    "a child that exits within the grace keeps it: its group is SIGKILLed at the grace "
    "end only if the pipes are still held",
    "[process]") {
  FakeClock clock;
  const TimePoint start = clock.Now();
  ProcessSupervisor supervisor(start + 60s, 3s);
  supervisor.Advance(start, kCancelled);  // SIGTERM
  clock.Advance(1s);
  ProcessSupervisor::Orders orders =
      supervisor.Advance(clock.Now(), {.child_exited = true, .cancelled = true});
  CHECK_FALSE(orders.kill_group);  // a stopping group keeps its grace
  CHECK(orders.then == Then::kKeepReading);
  CHECK(supervisor.NextWake() == start + 3s);

  clock.Advance(2s);
  orders = supervisor.Advance(clock.Now(), {.child_exited = true, .cancelled = true});
  CHECK(orders.kill_group);
  CHECK(orders.then == Then::kKeepReading);
  CHECK(supervisor.NextWake() == clock.Now() + 3s);  // max(grace, kMinDrain) after the kill
  CHECK(supervisor.stop() == Stop::kCancelled);
}

TEST_CASE("a child that exits within the grace with its pipes closed ends the run unkilled",
          "[process]") {
  FakeClock clock;
  ProcessSupervisor supervisor(clock.Now(), 3s);
  supervisor.Advance(clock.Now(), kRunning);  // timed out: SIGTERM
  clock.Advance(1s);
  ProcessSupervisor::Orders orders = supervisor.Advance(clock.Now(), kExitedPipesClosed);
  CHECK_FALSE(orders.kill_group);
  CHECK(orders.then == Then::kEnd);
  CHECK(supervisor.stop() == Stop::kTimedOut);
}

TEST_CASE("a killed child that has not exited yet keeps the run reading", "[process]") {
  FakeClock clock;
  ProcessSupervisor supervisor(clock.Now() + 60s, 0s);
  supervisor.Advance(clock.Now(), kCancelled);  // SIGTERM and SIGKILL
  clock.Advance(1h);
  // The drain deadline only counts once the child has exited: no abandon before that.
  CHECK(supervisor.Advance(clock.Now(), {.cancelled = true, .pipes_open = false}).then ==
        Then::kKeepReading);
  CHECK(supervisor.Advance(clock.Now(), kExitedPipesClosed).then == Then::kEnd);
}

TEST_CASE("a huge grace saturates instead of overflowing", "[process]") {
  FakeClock clock;
  ProcessSupervisor supervisor(clock.Now(), Duration::max());
  CHECK(supervisor.Advance(clock.Now(), kRunning).terminate_group);
  CHECK(supervisor.NextWake() == TimePoint::max());
  CHECK(AddSaturating(clock.Now(), Duration::max()) == TimePoint::max());
  CHECK(AddSaturating(TimePoint::max(), 1s) == TimePoint::max());
}

}  // namespace
}  // namespace keel::process_supervisor_test
