// RequestCoordinator::PromoteToTask (invariant 9): a running call that becomes a task's work
// under the MCP 2026-07-28 tasks extension. Each ordering a race can produce is forced by
// calling the coordinator in that order, with an injected clock: no threads, no sleeps.
// Proves TASKX-1 (the call's work goes on as the task's), CAN-2 (only tasks/cancel reaches
// it now), PRG-1 (no progress after it became a task) and TMO-1 (its maximum is the task's).
#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"
#include "fakes/recording_sink.h"
#include "server/call/request_coordinator.h"

namespace keel::promote_to_task_test {
namespace {

Json Result(const char* text) { return Json{{"content", {{{"type", "text"}, {"text", text}}}}}; }

struct Fixture {
  Fixture() : coordinator(sink, clock, RequestCoordinator::Options()) {}

  // A running call of request `id` with a 1 s idle clock and a 2 s maximum.
  RequestCoordinator::Admitted Start(const Json& id, const Json& token = Json()) {
    CallIdentity identity;
    identity.tool_name = "tool";
    identity.request_id = id;
    identity.exchange = 7;
    identity.modern = true;
    identity.log_level = LoggingLevel::kDebug;
    auto call =
        coordinator.Begin(std::move(identity), token, CallLimits{Millis(1000), Millis(2000)});
    REQUIRE(call.control->TryStart());
    return call;
  }
  bool Promote(const Json& id, Duration max = Millis(60000)) {
    return coordinator.PromoteToTask(id, "t1", max, [this](CallState state, CallAnswer answer) {
      settled = state;
      if (const Json* result = std::get_if<Json>(&answer)) outcome = *result;
    });
  }
  void AdvanceTo(int ms_since_start) {
    clock.Advance(start + Millis(ms_since_start) - clock.Now());
    coordinator.RunDue();
  }

  FakeClock clock;
  TimePoint start = clock.Now();
  RecordingSink sink;
  RequestCoordinator coordinator;
  std::optional<CallState> settled;
  Json outcome;
};

TEST_CASE("a promoted call's result goes to the task, never to the request", "[promote]") {
  Fixture f;
  auto call = f.Start(1);
  REQUIRE(f.Promote(1));
  CHECK_FALSE(f.coordinator.InFlight(1));  // whoever promoted it answers the request
  CHECK(f.coordinator.live() == 1);        // still counted: admission, shutdown grace
  const CallIdentity* identity = f.coordinator.UnsettledIdentity(call.generation);
  REQUIRE(identity != nullptr);
  CHECK(identity->task_id == "t1");
  CHECK(identity->request_id.is_null());
  CHECK(identity->exchange == kNoExchange);
  CHECK_FALSE(identity->log_level.has_value());  // the extension sends no log for tasks

  f.coordinator.Complete(call.generation, Result("done"));
  REQUIRE(f.settled == CallState::kCompleted);
  CHECK(f.outcome == Result("done"));
  CHECK(f.sink.messages().empty());
}

TEST_CASE("notifications/cancelled and a closed exchange no longer reach a promoted call",
          "[promote]") {
  Fixture f;
  auto call = f.Start("a");
  REQUIRE(f.Promote("a"));
  CHECK_FALSE(f.coordinator.Cancel("a"));
  CHECK(f.coordinator.CancelExchange(7) == 0);
  CHECK_FALSE(call.control->token().IsCancelled());
  CHECK(f.coordinator.CancelTask(call.generation));  // tasks/cancel still does
  CHECK(f.settled == CallState::kCancelled);
  CHECK(call.control->token().IsCancelled());
}

TEST_CASE("a promoted call sends no more progress, and unsent progress is taken back",
          "[promote]") {
  Fixture f;
  auto call = f.Start(2, "tok");
  f.coordinator.Progress(call.generation, 1, std::nullopt, "");
  CHECK(f.sink.WithMethod("notifications/progress").size() == 1);
  f.coordinator.Progress(call.generation, 2, std::nullopt, "");  // held back: rate limit
  REQUIRE(f.Promote(2));
  CHECK(f.sink.discarded().size() == 1);
  f.AdvanceTo(500);  // the held value's flush falls due
  f.coordinator.Progress(call.generation, 3, std::nullopt, "");
  CHECK(f.sink.WithMethod("notifications/progress").size() == 1);
}

TEST_CASE("a promoted call runs past the call's maximum, up to the task's", "[promote]") {
  Fixture f;
  auto call = f.Start(3);
  REQUIRE(f.Promote(3, Millis(5000)));
  for (int ms = 900; ms <= 4500; ms += 900) {  // progress keeps the idle clock fresh
    f.coordinator.Progress(call.generation, ms, std::nullopt, "");
    f.AdvanceTo(ms);
  }
  CHECK_FALSE(f.settled.has_value());  // past the call's 2 s
  f.AdvanceTo(5000);
  REQUIRE(f.settled == CallState::kTimedOut);
  CHECK(f.outcome["structuredContent"]["error"]["layer"] == "max");
}

TEST_CASE("a call that settled, or an unknown id, is not promoted", "[promote]") {
  Fixture f;
  auto call = f.Start(4);
  f.coordinator.Complete(call.generation, Result("done"));
  CHECK_FALSE(f.Promote(4));
  CHECK_FALSE(f.Promote(99));
  CHECK(f.sink.ForId(4).size() == 1);
}

}  // namespace
}  // namespace keel::promote_to_task_test
