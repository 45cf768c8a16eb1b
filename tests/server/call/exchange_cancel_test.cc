// A closed exchange is a cancellation input of the RequestCoordinator (CAN-2, CAN-5): the
// calls that came on it and are not settled are settled as cancelled, silently, and their
// work is cancelled; nothing else is touched. Forced by calling the coordinator in each
// order, with an injected clock: no threads, no sleeps.
#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"
#include "fakes/recording_sink.h"
#include "server/call/request_coordinator.h"

namespace keel::exchange_cancel_test {
namespace {

Json Result(const char* text) { return Json{{"content", {{{"type", "text"}, {"text", text}}}}}; }

struct Fixture {
  Fixture() : coordinator(sink, clock, RequestCoordinator::Options()) {}

  RequestCoordinator::Admitted Begin(const Json& id, ExchangeId exchange) {
    CallIdentity identity;
    identity.tool_name = "tool";
    identity.request_id = id;
    identity.exchange = exchange;
    return coordinator.Begin(std::move(identity), Json(), CallLimits{Millis(0), Millis(60000)});
  }

  FakeClock clock;
  RecordingSink sink;
  RequestCoordinator coordinator;
};

TEST_CASE("closing an exchange cancels its unsettled calls silently and no other exchange's",
          "[coordinator][CAN-2][CAN-5]") {
  Fixture f;
  auto queued = f.Begin(Json(1), 7);
  auto running = f.Begin(Json(2), 7);
  REQUIRE(running.control->TryStart());
  auto elsewhere = f.Begin(Json(3), 8);
  REQUIRE(elsewhere.control->TryStart());

  CHECK(f.coordinator.CancelExchange(7) == 2);
  CHECK(running.control->token().IsCancelled());
  CHECK_FALSE(elsewhere.control->token().IsCancelled());
  CHECK(f.coordinator.last_settled() ==
        std::make_pair(CallState::kCancelled, std::string("exchange closed")));
  CHECK_FALSE(f.coordinator.InFlight(Json(1)));
  CHECK_FALSE(f.coordinator.InFlight(Json(2)));
  CHECK(f.coordinator.StateOf(Json(3)) == CallState::kRunning);
  CHECK_FALSE(queued.control->TryStart());  // settled while queued: it never runs

  // The running worker returns after the close: nothing is sent for it.
  f.coordinator.Complete(running.generation, Result("late"));
  f.coordinator.Complete(elsewhere.generation, Result("done"));
  REQUIRE(f.sink.messages().size() == 1);
  CHECK(f.sink.messages()[0]["id"] == 3);
  CHECK(f.coordinator.stats().late_results_dropped == 1);
}

TEST_CASE("a call answered before its exchange closed is not touched by the close",
          "[coordinator][RACE-2]") {
  Fixture f;
  auto call = f.Begin(Json(0), 7);
  REQUIRE(call.control->TryStart());
  f.coordinator.Complete(call.generation, Result("done"));
  CHECK(f.coordinator.CancelExchange(7) == 0);
  REQUIRE(f.sink.messages().size() == 1);
  CHECK(f.coordinator.last_settled().first == CallState::kCompleted);
}

TEST_CASE("a task's work and calls that came on no exchange outlive every closed exchange",
          "[coordinator][TASK-1]") {
  Fixture f;
  auto unbound = f.Begin(Json("x"), kNoExchange);
  CallIdentity identity;
  identity.tool_name = "tool";
  identity.task_id = "t1";
  identity.exchange = 7;  // even one created by a request on the closed exchange
  bool task_settled = false;
  auto task = f.coordinator.BeginTask(std::move(identity), Json(), Json::object(),
                                      CallLimits{Millis(0), Millis(60000)},
                                      [&](CallState, CallAnswer) { task_settled = true; });
  CHECK(f.coordinator.CancelExchange(7) == 0);
  CHECK(f.coordinator.CancelExchange(kNoExchange) == 0);
  CHECK_FALSE(task.control->token().IsCancelled());
  CHECK_FALSE(unbound.control->token().IsCancelled());
  CHECK_FALSE(task_settled);
  CHECK(f.coordinator.live() == 2);
}

}  // namespace
}  // namespace keel::exchange_cancel_test
