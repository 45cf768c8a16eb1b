// The RequestCoordinator keys live calls by (peer, id) and writes each call's lines to the
// exchange it came on (invariants 2 and 10): forced by calling it in each order, with an
// injected clock and a TestRouter. No threads, no sleeps.
#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"
#include "fakes/recording_sink.h"
#include "fakes/test_router.h"
#include "server/call/request_coordinator.h"

namespace keel::peer_scope_test {
namespace {

Json Done(const char* text) { return Json{{"content", {{{"type", "text"}, {"text", text}}}}}; }

struct Fixture {
  Fixture() : coordinator(fallback, clock, RequestCoordinator::Options()) {
    router.Add(1, a);
    router.Add(2, b);
    coordinator.set_router(&router);
  }

  RequestCoordinator::Admitted Begin(const Json& id, ExchangeId exchange, PeerId peer,
                                     Json progress_token = Json()) {
    CallIdentity identity;
    identity.tool_name = "tool";
    identity.request_id = id;
    identity.exchange = exchange;
    identity.peer = peer;
    return coordinator.Begin(std::move(identity), std::move(progress_token),
                             CallLimits{Millis(0), Millis(60000)});
  }

  FakeClock clock;
  RecordingSink fallback;  // the constructor's sink: unused once routed
  RecordingSink a;
  RecordingSink b;
  TestRouter router;
  RequestCoordinator coordinator;
};

TEST_CASE("one id live for two peers: each answered on its own exchange, each cancelled alone",
          "[coordinator][peers]") {
  Fixture f;
  auto first = f.Begin(Json(1), 1, 100);
  auto second = f.Begin(Json(1), 2, 200);
  CHECK(f.coordinator.InFlight(Json(1), 100));
  CHECK(f.coordinator.InFlight(Json(1), 200));
  CHECK_FALSE(f.coordinator.InFlight(Json(1)));  // kNoPeer is a peer of its own

  CHECK_FALSE(f.coordinator.Cancel(Json(1), 300));  // nobody's
  CHECK(f.coordinator.Cancel(Json(1), 100));
  CHECK(f.coordinator.StateOf(Json(1), 200) == CallState::kQueued);
  REQUIRE(second.control->TryStart());
  f.coordinator.Complete(second.generation, Done("two"));
  CHECK_FALSE(first.control->TryStart());

  CHECK(f.a.messages().empty());
  REQUIRE(f.b.ForId(1).size() == 1);
  CHECK(f.b.ForId(1)[0]["result"]["content"][0]["text"] == "two");
  CHECK(f.fallback.messages().empty());
}

TEST_CASE("progress goes to its call's exchange, and a closed exchange's lines are dropped",
          "[coordinator][peers][PRG-1]") {
  Fixture f;
  auto call = f.Begin(Json("p"), 2, 200, Json("tok"));
  REQUIRE(call.control->TryStart());
  f.coordinator.Progress(call.generation, 1, std::nullopt, "");
  REQUIRE(f.b.WithMethod("notifications/progress").size() == 1);
  f.router.Close(2);
  f.clock.Advance(Millis(100));
  f.coordinator.Progress(call.generation, 2, std::nullopt, "");
  f.coordinator.Complete(call.generation, Done("late"));
  CHECK(f.b.messages().size() == 1);
  CHECK(f.a.messages().empty());
  CHECK(f.fallback.messages().empty());
  CHECK(f.coordinator.stats().unroutable == 2);
}

TEST_CASE("a peer gone cancels its calls on every exchange and no other peer's",
          "[coordinator][peers][CAN-5]") {
  Fixture f;
  auto one = f.Begin(Json(1), 1, 100);
  auto two = f.Begin(Json(2), 2, 100);  // the same peer on another exchange
  auto other = f.Begin(Json(1), 2, 200);
  CHECK(f.coordinator.CancelPeer(100) == 2);
  CHECK(f.coordinator.last_settled() ==
        std::make_pair(CallState::kCancelled, std::string("peer gone")));
  CHECK_FALSE(one.control->TryStart());
  CHECK_FALSE(two.control->TryStart());
  CHECK(other.control->TryStart());
  CHECK(f.coordinator.StateOf(Json(1), 200) == CallState::kRunning);
  f.coordinator.Complete(other.generation, Done("kept"));
  CHECK(f.b.ForId(1).size() == 1);
  CHECK(f.a.messages().empty());
}

}  // namespace
}  // namespace keel::peer_scope_test
