// RequestCoordinator orderings, forced by calling the coordinator in each order a race
// can produce, with an injected clock: no threads, no sleeps. The test plays the worker:
// control->TryStart() is the worker picking the job up, Complete() is it returning.
// Proves DC-1, RACE-1 (cancel wins), RACE-2 (completion wins), CAN-2, CAN-3, TMO-1, TMO-3,
// PRG-1 and the slot accounting of non-cooperative tools.
#include "server/call/request_coordinator.h"

#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"
#include "fakes/recording_sink.h"

namespace keel::request_coordinator_test {
namespace {

Json Result(const char* text) { return Json{{"content", {{{"type", "text"}, {"text", text}}}}}; }

CallLimits Limits(int idle_ms, int max_ms) { return CallLimits{Millis(idle_ms), Millis(max_ms)}; }

struct Fixture {
  explicit Fixture(CallLimits limits = Limits(0, 60000), size_t max_inflight = 8)
      : limits(limits), coordinator(sink, clock, Options(max_inflight)) {}

  static RequestCoordinator::Options Options(size_t max_inflight) {
    RequestCoordinator::Options options;
    options.max_inflight = max_inflight;
    return options;
  }

  RequestCoordinator::Admitted Begin(const Json& id, const Json& token = Json()) {
    CallIdentity identity;
    identity.tool_name = "tool";
    identity.request_id = id;
    return coordinator.Begin(std::move(identity), token, limits);
  }
  RequestCoordinator::Admitted Start(const Json& id, const Json& token = Json()) {
    auto call = Begin(id, token);
    REQUIRE(call.control->TryStart());
    return call;
  }
  // Moves time forward and runs whatever fell due, as the loop's timer would.
  void AdvanceTo(int ms_since_start) {
    clock.Advance(start + Millis(ms_since_start) - clock.Now());
    coordinator.RunDue();
  }
  std::vector<Json> Progress() const { return sink.WithMethod("notifications/progress"); }

  CallLimits limits;
  FakeClock clock;
  TimePoint start = clock.Now();
  RecordingSink sink;
  RequestCoordinator coordinator;
};

TEST_CASE("a completed call writes exactly one response with the request's id (RACE-2)",
          "[coordinator][RACE-2]") {
  Fixture f;
  auto call = f.Start(Json(0));
  CHECK(f.coordinator.StateOf(Json(0)) == CallState::kRunning);
  f.coordinator.Complete(call.generation, Result("done"));
  REQUIRE(f.sink.messages().size() == 1);
  CHECK(f.sink.messages()[0]["id"] == 0);
  CHECK(f.sink.messages()[0]["result"]["content"][0]["text"] == "done");
  CHECK(f.coordinator.live() == 0);
  CHECK(f.coordinator.last_settled().first == CallState::kCompleted);
}

TEST_CASE("an isError result or a throwing tool settles as failed", "[coordinator]") {
  Fixture f;
  auto a = f.Start(Json(1));
  f.coordinator.Complete(
      a.generation,
      Json{{"isError", true}, {"structuredContent", {{"error", {{"type", "backend"}}}}}});
  CHECK(f.coordinator.last_settled() == std::make_pair(CallState::kFailed, std::string("backend")));
  auto b = f.Start(Json(2));
  f.coordinator.Complete(b.generation, Result("x"), /*threw=*/true);
  CHECK(f.coordinator.last_settled().first == CallState::kFailed);
  CHECK(f.sink.messages().size() == 2);
}

TEST_CASE("cancel wins: start, cancel, worker completes -> no response (RACE-1, CAN-2)",
          "[coordinator][RACE-1][CAN-2]") {
  Fixture f;
  auto call = f.Start(Json("a"));
  REQUIRE(f.coordinator.Cancel(Json("a")));
  CHECK(call.control->token().IsCancelled());
  CHECK(f.coordinator.last_settled().first == CallState::kCancelled);
  CHECK(f.coordinator.live() == 0);
  CHECK(f.coordinator.draining() == 1);  // the worker still holds its slot
  f.coordinator.Complete(call.generation, Result("late"));
  CHECK(f.sink.messages().empty());
  CHECK(f.coordinator.draining() == 0);
  CHECK(f.coordinator.stats().late_results_dropped == 1);
}

TEST_CASE("completion wins: complete, then cancel -> response sent, cancel ignored (RACE-2)",
          "[coordinator][RACE-2][CAN-3]") {
  Fixture f;
  auto call = f.Start(Json(5));
  f.coordinator.Complete(call.generation, Result("done"));
  CHECK_FALSE(f.coordinator.Cancel(Json(5)));
  REQUIRE(f.sink.messages().size() == 1);
  CHECK(f.coordinator.last_settled().first == CallState::kCompleted);  // never changes again
  CHECK(f.coordinator.stats().ignored_cancels == 1);
}

TEST_CASE("cancel while queued: the call never runs and its slot is free at once (CAN-2)",
          "[coordinator][CAN-2]") {
  Fixture f;
  auto call = f.Begin(Json(7));
  CHECK(f.coordinator.StateOf(Json(7)) == CallState::kQueued);
  REQUIRE(f.coordinator.Cancel(Json(7)));
  CHECK_FALSE(call.control->TryStart());  // the worker finds it abandoned
  CHECK(f.coordinator.draining() == 0);
  CHECK(f.coordinator.live() == 0);
  CHECK(f.coordinator.stats().never_started == 1);
  CHECK(f.sink.messages().empty());
}

TEST_CASE(
    "cancels that are malformed, unknown, differently typed or repeated are ignored "
    "(CAN-3)",
    "[coordinator][CAN-3]") {
  Fixture f;
  f.Start(Json(0));
  CHECK_FALSE(f.coordinator.Cancel(Json()));
  CHECK_FALSE(f.coordinator.Cancel(Json(true)));
  CHECK_FALSE(f.coordinator.Cancel(Json::object()));
  CHECK_FALSE(f.coordinator.Cancel(Json(1.5)));
  CHECK_FALSE(f.coordinator.Cancel(Json("0")));  // "0" is not 0
  CHECK_FALSE(f.coordinator.Cancel(Json(99)));
  CHECK(f.coordinator.live() == 1);
  CHECK(f.coordinator.Cancel(Json(0)));  // id 0 is an id like any other
  CHECK_FALSE(f.coordinator.Cancel(Json(0)));
  CHECK(f.coordinator.stats().ignored_cancels == 7);
  CHECK(f.sink.messages().empty());
}

TEST_CASE("a reused id never lets the old worker's result answer the new request",
          "[coordinator][RACE-1]") {
  Fixture f;
  auto old_call = f.Start(Json(3));
  REQUIRE(f.coordinator.Cancel(Json(3)));
  auto new_call = f.Start(Json(3));
  f.coordinator.Complete(old_call.generation, Result("old"));
  CHECK(f.sink.messages().empty());
  CHECK(f.coordinator.InFlight(Json(3)));
  f.coordinator.Complete(new_call.generation, Result("new"));
  REQUIRE(f.sink.messages().size() == 1);
  CHECK(f.sink.messages()[0]["result"]["content"][0]["text"] == "new");
}

TEST_CASE(
    "progress goes out only with a token, echoed with its type, strictly increasing "
    "(PRG-1)",
    "[coordinator][PRG-1]") {
  Fixture f;
  auto silent = f.Start(Json(1));
  f.coordinator.Progress(silent.generation, 1, std::nullopt, "");
  CHECK(f.Progress().empty());

  auto call = f.Start(Json(2), Json("tok"));
  f.coordinator.Progress(call.generation, 1, 10, "one");
  f.AdvanceTo(100);
  f.coordinator.Progress(call.generation, 1, 10, "same");    // not above 1
  f.coordinator.Progress(call.generation, 0.5, 10, "back");  // lower
  f.AdvanceTo(200);
  f.coordinator.Progress(call.generation, 2.5, std::nullopt, "");
  const auto progress = f.Progress();
  REQUIRE(progress.size() == 2);
  CHECK(progress[0]["params"] ==
        Json{{"progressToken", "tok"}, {"progress", 1}, {"total", 10}, {"message", "one"}});
  CHECK(progress[0]["params"]["progress"].is_number_integer());
  CHECK(progress[1]["params"] == Json{{"progressToken", "tok"}, {"progress", 2.5}});
  CHECK(f.coordinator.stats().stale_progress_dropped == 2);

  auto numeric = f.Start(Json(3), Json(0));
  f.coordinator.Progress(numeric.generation, 1, std::nullopt, "");
  CHECK(f.Progress().back()["params"]["progressToken"] == 0);
  CHECK(f.Progress().back()["params"]["progressToken"].is_number_integer());
}

TEST_CASE("progress after the terminal state is dropped (PRG-1)", "[coordinator][PRG-1]") {
  Fixture f;
  auto done = f.Start(Json(1), Json("a"));
  f.coordinator.Complete(done.generation, Result("done"));
  f.coordinator.Progress(done.generation, 1, std::nullopt, "");
  auto cancelled = f.Start(Json(2), Json("b"));
  f.coordinator.Cancel(Json(2));
  f.coordinator.Progress(cancelled.generation, 1, std::nullopt, "");
  CHECK(f.Progress().empty());
  CHECK(f.coordinator.stats().late_progress_dropped == 2);
}

TEST_CASE("cancel takes back progress still queued in the outbox (CAN-2, PRG-1)",
          "[coordinator][CAN-2][PRG-1]") {
  Fixture f;
  auto call = f.Start(Json(1), Json("a"));
  f.coordinator.Progress(call.generation, 1, std::nullopt, "");
  f.coordinator.Cancel(Json(1));
  CHECK(f.sink.discarded() == std::vector<uint64_t>{call.generation});
}

TEST_CASE(
    "progress is rate-limited per request: at most one per 50 ms, the newest value "
    "wins (PRG-1)",
    "[coordinator][PRG-1]") {
  Fixture f;
  auto call = f.Start(Json(1), Json("a"));
  for (int i = 1; i <= 10; ++i) f.coordinator.Progress(call.generation, i, 10, "");
  REQUIRE(f.Progress().size() == 1);  // the first goes at once
  CHECK(f.coordinator.NextDeadline() == f.start + Millis(50));
  f.AdvanceTo(49);
  CHECK(f.Progress().size() == 1);
  f.AdvanceTo(50);
  REQUIRE(f.Progress().size() == 2);
  CHECK(f.Progress()[1]["params"]["progress"] == 10);  // 2..9 were overwritten
  f.AdvanceTo(120);
  f.coordinator.Progress(call.generation, 11, std::nullopt, "");  // interval over: at once
  CHECK(f.Progress().size() == 3);

  // A value held back when the call settles is never sent.
  f.coordinator.Progress(call.generation, 12, std::nullopt, "");
  f.coordinator.Complete(call.generation, Result("done"));
  f.AdvanceTo(200);
  CHECK(f.Progress().size() == 3);
  CHECK(f.sink.messages().back().contains("result"));
}

TEST_CASE(
    "a call with no progress times out on the idle clock with one isError result "
    "(TMO-1, TMO-3)",
    "[coordinator][TMO-1][TMO-3]") {
  Fixture f(Limits(500, 2000));
  auto call = f.Start(Json("slow"));
  f.AdvanceTo(499);
  CHECK(f.sink.messages().empty());
  f.AdvanceTo(500);
  REQUIRE(f.sink.messages().size() == 1);
  const Json& result = f.sink.messages()[0]["result"];
  CHECK(f.sink.messages()[0]["id"] == "slow");
  CHECK(result["isError"] == true);
  const Json& error = result["structuredContent"]["error"];
  CHECK(error["type"] == "timeout");
  CHECK(error["layer"] == "idle");
  CHECK(error["elapsed_ms"] == 500);
  CHECK(error["limit_ms"] == 500);
  CHECK(error["correlation_id"] == f.coordinator.CorrelationId(call.generation));
  CHECK(result["content"][0]["text"].get<std::string>().find("timed out") != std::string::npos);
  CHECK(call.control->token().IsCancelled());  // the work is cancelled as in CAN-2
  CHECK(f.coordinator.last_settled().first == CallState::kTimedOut);
  CHECK(f.coordinator.stats().timeouts == 1);
}

TEST_CASE(
    "a retry's backoff restarts the idle clock at the next attempt, never earlier, and "
    "leaves the maximum clock alone",
    "[coordinator][TMO-1][retry]") {
  Fixture f(Limits(500, 2000));
  auto call = f.Start(Json("retrying"));
  f.AdvanceTo(300);
  // The first attempt failed at 300 ms; keel waits 700 ms before the second.
  f.coordinator.RestartIdleClockAt(call.generation, f.start + Millis(1000));
  // A restart earlier than the clock already runs changes nothing.
  f.coordinator.RestartIdleClockAt(call.generation, f.start + Millis(100));
  f.AdvanceTo(1499);
  CHECK(f.sink.messages().empty());
  f.AdvanceTo(1500);
  REQUIRE(f.sink.messages().size() == 1);
  CHECK(f.sink.messages()[0]["result"]["structuredContent"]["error"]["layer"] == "idle");
  CHECK(f.sink.messages()[0]["result"]["structuredContent"]["error"]["elapsed_ms"] == 1500);

  // A restart past the maximum does not keep a call alive: it ends at the max clock.
  auto late = f.Start(Json("late"));
  f.coordinator.RestartIdleClockAt(late.generation, f.start + Millis(1500 + 5000));
  f.AdvanceTo(1500 + 2000);
  REQUIRE(f.sink.messages().size() == 2);
  CHECK(f.sink.messages()[1]["result"]["structuredContent"]["error"]["layer"] == "max");
}

TEST_CASE(
    "the seed's example: progress every 400 ms keeps a call alive past the idle "
    "limit until the maximum at 2000 ms (TMO-1)",
    "[coordinator][TMO-1][TMO-3]") {
  Fixture f(Limits(500, 2000));
  auto call = f.Start(Json(1));
  for (int at : {400, 800, 1200}) {
    f.AdvanceTo(at);
    f.coordinator.Progress(call.generation, at, std::nullopt, "");
  }
  f.AdvanceTo(1500);  // the last progress is 300 ms old
  CHECK(f.sink.messages().empty());
  CHECK(f.coordinator.StateOf(Json(1)) == CallState::kRunning);
  f.AdvanceTo(1600);
  f.coordinator.Progress(call.generation, 1600, std::nullopt, "");
  f.AdvanceTo(1999);
  CHECK(f.sink.messages().empty());
  f.AdvanceTo(2000);
  REQUIRE(f.sink.messages().size() == 1);
  const Json& error = f.sink.messages()[0]["result"]["structuredContent"]["error"];
  CHECK(error["layer"] == "max");
  CHECK(error["elapsed_ms"] == 2000);
  CHECK(error["limit_ms"] == 2000);
}

TEST_CASE(
    "when progress stops, the idle clock ends the call 500 ms after the last value "
    "(TMO-1)",
    "[coordinator][TMO-1]") {
  Fixture f(Limits(500, 2000));
  auto call = f.Start(Json(1));
  for (int at : {400, 800, 1200}) {
    f.AdvanceTo(at);
    f.coordinator.Progress(call.generation, at, std::nullopt, "");
  }
  f.AdvanceTo(1699);
  CHECK(f.sink.messages().empty());
  f.AdvanceTo(1700);
  REQUIRE(f.sink.messages().size() == 1);
  CHECK(f.sink.messages()[0]["result"]["structuredContent"]["error"]["layer"] == "idle");
  CHECK(f.sink.messages()[0]["result"]["structuredContent"]["error"]["elapsed_ms"] == 1700);
}

TEST_CASE(
    "only a strictly increasing progress value restarts the idle clock, token or not "
    "(TMO-1, TMO-2)",
    "[coordinator][TMO-1][TMO-2]") {
  Fixture f(Limits(500, 5000));
  auto call = f.Start(Json(1));  // no progress token: nothing is sent, the clock still resets
  f.AdvanceTo(400);
  f.coordinator.Progress(call.generation, 1, std::nullopt, "");
  f.AdvanceTo(800);
  f.coordinator.Progress(call.generation, 1, std::nullopt, "");  // not above 1: no reset
  f.AdvanceTo(899);
  CHECK(f.sink.messages().empty());
  f.AdvanceTo(900);
  REQUIRE(f.sink.messages().size() == 1);
  CHECK(f.sink.messages()[0]["result"]["structuredContent"]["error"]["layer"] == "idle");
}

TEST_CASE(
    "time spent queued counts toward the maximum, a call timed out while queued never "
    "runs (TMO-1)",
    "[coordinator][TMO-1]") {
  Fixture f(Limits(0, 1000));
  auto call = f.Begin(Json(1));
  f.AdvanceTo(1000);
  REQUIRE(f.sink.messages().size() == 1);
  CHECK(f.sink.messages()[0]["result"]["structuredContent"]["error"]["layer"] == "max");
  CHECK_FALSE(call.control->TryStart());
  CHECK(f.coordinator.draining() == 0);
}

TEST_CASE("after a timeout, the late result and a late cancel are dropped (TMO-3, RACE-1)",
          "[coordinator][TMO-3][RACE-1][CAN-3]") {
  Fixture f(Limits(100, 1000));
  auto call = f.Start(Json(1), Json("p"));
  f.AdvanceTo(100);
  REQUIRE(f.sink.messages().size() == 1);
  f.coordinator.Progress(call.generation, 5, std::nullopt, "");
  f.coordinator.Complete(call.generation, Result("late"));
  CHECK_FALSE(f.coordinator.Cancel(Json(1)));
  CHECK(f.sink.messages().size() == 1);
  CHECK(f.coordinator.last_settled().first == CallState::kTimedOut);
  CHECK(f.coordinator.stats().late_results_dropped == 1);
  CHECK(f.coordinator.stats().late_progress_dropped == 1);
}

TEST_CASE("a settled call whose tool ignores its token stays counted and is reported held",
          "[coordinator][CAN-2]") {
  Fixture f(Limits(0, 60000), /*max_inflight=*/2);
  int held = 0;
  int released = 0;
  f.coordinator.set_on_held([&] { ++held; });
  f.coordinator.set_on_released([&] { ++released; });
  auto stuck = f.Start(Json(1));
  f.Start(Json(2));
  f.coordinator.Cancel(Json(1));
  CHECK(f.coordinator.AtCapacity());  // the stuck worker still counts
  f.AdvanceTo(99);
  CHECK(held == 0);
  f.AdvanceTo(100);
  CHECK(held == 1);
  CHECK(f.coordinator.stats().held == 1);
  f.coordinator.Complete(stuck.generation, Result("at last"));
  CHECK(released == 1);
  CHECK_FALSE(f.coordinator.AtCapacity());
  CHECK(f.sink.messages().empty());
}

TEST_CASE("a cooperative tool that returns promptly after cancel is never reported held",
          "[coordinator][CAN-2]") {
  Fixture f;
  int held = 0;
  f.coordinator.set_on_held([&] { ++held; });
  auto call = f.Start(Json(1));
  f.coordinator.Cancel(Json(1));
  f.coordinator.Complete(call.generation, Result("stopped"));
  f.AdvanceTo(1000);
  CHECK(held == 0);
}

TEST_CASE(
    "shutdown settles every live call with one error, in arrival order, queued calls "
    "never run",
    "[coordinator][DC-1]") {
  Fixture f;
  auto running = f.Start(Json("b"));
  auto queued = f.Begin(Json("a"));
  CHECK(f.coordinator.ShutDownAll(-32603, "shutting down") == 2);
  REQUIRE(f.sink.messages().size() == 2);
  CHECK(f.sink.messages()[0]["id"] == "b");
  CHECK(f.sink.messages()[1]["id"] == "a");
  CHECK(f.sink.messages()[1]["error"]["code"] == -32603);
  CHECK(running.control->token().IsCancelled());
  CHECK_FALSE(queued.control->TryStart());
  CHECK(f.coordinator.draining() == 1);
  f.coordinator.Complete(running.generation, Result("late"));
  CHECK(f.sink.messages().size() == 2);
}

TEST_CASE("dropped progress marks the request needs_resync once (BP-1)", "[coordinator][BP-1]") {
  Fixture f;
  auto call = f.Start(Json(1), Json("p"));
  f.coordinator.MarkNeedsResync(call.generation);
  f.coordinator.MarkNeedsResync(call.generation);
  f.coordinator.MarkNeedsResync(999);  // unknown stream: ignored
  CHECK(f.coordinator.stats().resyncs == 1);
}

TEST_CASE("the alarm queue stays about the size of the calls in flight", "[coordinator]") {
  Fixture f(Limits(1000, 60000));
  for (int i = 0; i < 5000; ++i) {
    auto call = f.Start(Json(i));
    f.coordinator.Complete(call.generation, Result("ok"));
    f.coordinator.RunDue();
  }
  CHECK(f.coordinator.alarms() <= 2048);
  // Nothing is in flight: no alarm is left to wake the loop for.
  CHECK(f.coordinator.NextDeadline() == std::nullopt);
  CHECK(f.coordinator.alarms() == 0);
}

}  // namespace
}  // namespace keel::request_coordinator_test
