// RequestCoordinator orderings, forced by calling the coordinator in each order a race
// can produce (no threads, no sleeps). Proves DC-1 (one terminal state, no response after
// cancel wins) and the foundation of RACE-1 (cancel wins), RACE-2 (completion wins), CAN-3
// (stray cancels ignored) and PRG-1 (strictly increasing progress, none after settle).
#include <catch2/catch.hpp>

#include "fakes/recording_sink.h"
#include "server/request_coordinator.h"

namespace keel {
namespace {

Json Result(const char* text) { return Json{{"content", {{{"type", "text"}, {"text", text}}}}}; }

TEST_CASE("a completed call writes exactly one response with the request's id") {
  RecordingSink sink;
  RequestCoordinator coordinator(sink, 8);
  auto handle = coordinator.Begin(Json(0), Json(), CancellationToken());
  coordinator.Complete(handle, Result("done"));
  REQUIRE(sink.messages().size() == 1);
  CHECK(sink.messages()[0]["id"] == 0);
  CHECK(sink.messages()[0]["result"]["content"][0]["text"] == "done");
  CHECK(coordinator.live() == 0);
}

TEST_CASE("cancel wins: a result arriving after the cancel is never written") {
  RecordingSink sink;
  RequestCoordinator coordinator(sink, 8);
  CancellationToken token;
  auto handle = coordinator.Begin(Json("a"), Json(), token);
  REQUIRE(coordinator.Cancel(Json("a")));
  CHECK(token.IsCancelled());
  CHECK(coordinator.draining() == 1);  // the worker still holds its slot
  coordinator.Complete(handle, Result("late"));
  CHECK(sink.messages().empty());
  CHECK(coordinator.draining() == 0);
  CHECK(coordinator.late_results_dropped() == 1);
}

TEST_CASE("completion wins: a cancel arriving after the response is ignored") {
  RecordingSink sink;
  RequestCoordinator coordinator(sink, 8);
  CancellationToken token;
  auto handle = coordinator.Begin(Json(5), Json(), token);
  coordinator.Complete(handle, Result("first"));
  CHECK_FALSE(coordinator.Cancel(Json(5)));
  CHECK_FALSE(token.IsCancelled());
  REQUIRE(sink.messages().size() == 1);
  CHECK(sink.messages()[0]["result"]["content"][0]["text"] == "first");
}

TEST_CASE("a cancel naming an unknown, malformed or differently typed id is ignored") {
  RecordingSink sink;
  RequestCoordinator coordinator(sink, 8);
  coordinator.Begin(Json(7), Json(), CancellationToken());
  CHECK_FALSE(coordinator.Cancel(Json("7")));  // "7" is not 7
  CHECK_FALSE(coordinator.Cancel(Json(8)));
  CHECK_FALSE(coordinator.Cancel(Json()));
  CHECK_FALSE(coordinator.Cancel(Json::array({7})));
  CHECK(coordinator.live() == 1);
  CHECK(sink.messages().empty());
}

TEST_CASE("a reused id never lets the old worker's result answer the new request") {
  RecordingSink sink;
  RequestCoordinator coordinator(sink, 8);
  auto old_call = coordinator.Begin(Json(1), Json(), CancellationToken());
  REQUIRE(coordinator.Cancel(Json(1)));
  auto new_call = coordinator.Begin(Json(1), Json(), CancellationToken());
  coordinator.Complete(old_call, Result("old"));
  CHECK(sink.messages().empty());
  coordinator.Complete(new_call, Result("new"));
  REQUIRE(sink.messages().size() == 1);
  CHECK(sink.messages()[0]["result"]["content"][0]["text"] == "new");
}

TEST_CASE("progress is sent only with a token, strictly increasing, and never after settle") {
  RecordingSink sink;
  RequestCoordinator coordinator(sink, 8);
  auto silent = coordinator.Begin(Json(1), Json(), CancellationToken());
  coordinator.Progress(silent, 1, std::nullopt, "");
  CHECK(sink.messages().empty());

  auto loud = coordinator.Begin(Json(2), Json(42), CancellationToken());
  coordinator.Progress(loud, 1, 3, "one");
  coordinator.Progress(loud, 1, 3, "again");  // not increasing: dropped
  coordinator.Progress(loud, 0.5, 3, "back");  // decreasing: dropped
  coordinator.Progress(loud, 2, 3, "");
  coordinator.Complete(loud, Result("done"));
  coordinator.Progress(loud, 3, 3, "late");  // after the response: dropped
  REQUIRE(sink.messages().size() == 3);
  CHECK(sink.messages()[0]["params"]["progressToken"] == 42);
  CHECK(sink.messages()[0]["params"]["progressToken"].is_number_integer());
  CHECK(sink.messages()[0]["params"]["message"] == "one");
  CHECK(sink.messages()[1]["params"]["progress"] == 2);
  CHECK(sink.messages()[2]["id"] == 2);
}

TEST_CASE("capacity counts calls whose worker has not returned after a cancel") {
  RecordingSink sink;
  RequestCoordinator coordinator(sink, 2);
  auto a = coordinator.Begin(Json(1), Json(), CancellationToken());
  coordinator.Begin(Json(2), Json(), CancellationToken());
  CHECK(coordinator.AtCapacity());
  coordinator.Cancel(Json(1));
  CHECK(coordinator.AtCapacity());  // call 1's worker still runs
  coordinator.Complete(a, Result("late"));
  CHECK_FALSE(coordinator.AtCapacity());
}

TEST_CASE("shutdown settles every live call with one error and cancels its work") {
  RecordingSink sink;
  RequestCoordinator coordinator(sink, 8);
  CancellationToken token;
  auto handle = coordinator.Begin(Json("s"), Json(), token);
  int idle_calls = 0;
  coordinator.set_on_idle([&] { ++idle_calls; });
  CHECK(coordinator.ShutDownAll(-32603, "shutting down") == 1);
  CHECK(token.IsCancelled());
  REQUIRE(sink.messages().size() == 1);
  CHECK(sink.messages()[0]["error"]["code"] == -32603);
  CHECK(sink.messages()[0]["id"] == "s");
  CHECK(idle_calls == 1);
  coordinator.Complete(handle, Result("late"));
  CHECK(sink.messages().size() == 1);
}

}  // namespace
}  // namespace keel
