// Session behaviour that needs a call to stay in flight: a real worker blocked on a latch
// (released by the test through latch_release, never by sleeping). Proves DC-1: the loop
// keeps serving while workers are busy, and cancel/shutdown settle calls exactly once.
#include <catch2/catch.hpp>

#include "server/session/session_harness.h"

namespace keel::session_inflight_test {
namespace {

TEST_CASE("ping is answered while every worker is blocked") {
  SessionHarness h(1);
  h.Initialize();
  h.Send(h.Call(1, "latch_wait", {{"name", "gate"}}));
  h.Send(R"({"jsonrpc":"2.0","id":2,"method":"ping"})");
  CHECK(h.sink().ForId(2).size() == 1);
  CHECK(h.sink().ForId(1).empty());
  h.Send(h.Call(3, "latch_release", {{"name", "gate"}}));
  REQUIRE(h.WaitFor(1));
  CHECK(h.sink().ForId(1)[0]["result"]["content"][0]["text"] == "released gate");
}

TEST_CASE("a request id already in flight is refused and the first call continues") {
  SessionHarness h(1);
  h.Initialize();
  h.Send(h.Call(5, "latch_wait", {{"name", "dup"}}));
  h.Send(h.Call(5, "echo", {{"text", "second"}}));
  REQUIRE(h.sink().ForId(5).size() == 1);
  CHECK(h.sink().ForId(5)[0]["error"]["code"] == -32600);
  h.Send(h.Call(6, "latch_release", {{"name", "dup"}}));
  REQUIRE(h.WaitUntil([&] { return h.sink().ForId(5).size() >= 2; }));
  REQUIRE(h.sink().ForId(5).size() == 2);
  CHECK(h.sink().ForId(5)[1]["result"]["content"][0]["text"] == "released dup");
}

TEST_CASE("beyond --max-inflight a call gets a server-busy tool error") {
  SessionOptions options;
  options.max_inflight = 1;
  SessionHarness h(1, options);
  h.Initialize();
  h.Send(h.Call(1, "latch_wait", {{"name", "busy"}}));
  h.Send(h.Call(2, "echo", {{"text", "x"}}));
  const Json busy = h.sink().ForId(2)[0]["result"];
  CHECK(busy["isError"] == true);
  CHECK(busy["structuredContent"]["error"]["type"] == "server_busy");
  CHECK(busy["content"][0]["text"].get<std::string>().find("busy") != std::string::npos);
  h.Send(h.Call(3, "latch_release", {{"name", "busy"}}));
  REQUIRE(h.WaitFor(1));
}

TEST_CASE("a cancelled call is never answered and its worker is released") {
  SessionHarness h(1);
  h.Initialize();
  h.Send(h.Call(1, "latch_wait", {{"name", "never"}}));
  h.Send(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}})");
  // The token woke the worker: the next call runs on the same single worker.
  h.Send(h.Call(2, "echo", {{"text", "after"}}));
  REQUIRE(h.WaitFor(2));
  CHECK(h.sink().ForId(1).empty());
  CHECK(h.session().coordinator().draining() == 0);
}

TEST_CASE("a closed exchange cancels the calls that came on it: never answered, workers freed",
          "[CAN-2][CAN-5]") {
  SessionHarness h(2);
  // One legacy client (an HTTP session) whose requests come on two exchanges.
  constexpr PeerId kPeer = 100;
  h.Initialize(kPeer);
  h.SendOn(7, h.Call(1, "latch_wait", {{"name", "closed"}}), kPeer);
  h.SendOn(8, h.Call(2, "latch_wait", {{"name", "open"}}), kPeer);
  REQUIRE(h.WaitUntilRunning(1, kPeer));
  REQUIRE(h.WaitUntilRunning(2, kPeer));
  CHECK(h.session().OnExchangeClosed(7) == 1);
  CHECK_FALSE(h.session().coordinator().InFlight(Json(1), kPeer));
  // The token woke the first worker: a call sent now runs on it.
  h.SendOn(8, h.Call(3, "echo", {{"text", "after"}}), kPeer);
  REQUIRE(h.WaitFor(3));
  h.SendOn(8, h.Call(4, "latch_release", {{"name", "open"}}), kPeer);
  REQUIRE(h.WaitFor(2));
  CHECK(h.sink().ForId(2)[0]["result"]["content"][0]["text"] == "released open");
  CHECK(h.sink().ForId(1).empty());
  CHECK(h.session().OnExchangeClosed(7) == 0);  // a second close finds nothing left
}

TEST_CASE("shutdown waits for in-flight calls, then ends them with an error after the grace") {
  SessionOptions options;
  options.shutdown_grace = Millis(1500);
  SessionHarness h(1, options);
  h.Initialize();
  h.Send(h.Call(1, "latch_wait", {{"name", "stuck"}}));
  h.session().BeginShutdown("test");
  h.Pump();
  CHECK_FALSE(h.finished());
  h.clock().Advance(Millis(1499));
  h.Pump();
  CHECK_FALSE(h.finished());
  h.clock().Advance(Millis(1));
  h.Pump();
  CHECK(h.finished());
  REQUIRE(h.sink().ForId(1).size() == 1);
  CHECK(h.sink().ForId(1)[0]["error"]["code"] == -32603);
}

TEST_CASE("shutdown finishes as soon as the last in-flight call completes") {
  SessionHarness h(1);
  h.Initialize();
  h.Send(h.Call(1, "latch_wait", {{"name", "drain"}}));
  h.Send(h.Call(2, "latch_release", {{"name", "drain"}}));
  h.session().BeginShutdown("test");
  REQUIRE(h.WaitFor(1));
  CHECK(h.sink().ForId(1)[0].contains("result"));
  CHECK(h.finished());
}

TEST_CASE("a burst of calls larger than one hand-over is answered in full by the workers") {
  SessionHarness h(2);
  h.Initialize();
  for (int id = 1; id <= 40; ++id) {
    h.session().HandleLine(h.Call(id, "echo", {{"text", std::to_string(id)}}));
  }
  for (int id = 1; id <= 40; ++id) {
    REQUIRE(h.WaitFor(id));
    CHECK(h.sink().ForId(id)[0]["result"]["content"][0]["text"] == std::to_string(id));
  }
}

TEST_CASE(
    "a blocked call gets the idle timeout result from the loop's timer and its worker "
    "is freed (TMO-1, TMO-3)") {
  SessionOptions options;
  options.call_limits = CallLimits{Millis(500), Millis(2000)};
  SessionHarness h(1, options);
  h.Initialize();
  h.Send(h.Call(1, "latch_wait", {{"name", "never"}}));
  h.clock().Advance(Millis(499));
  h.Pump();
  CHECK(h.sink().ForId(1).empty());
  h.clock().Advance(Millis(1));
  h.Pump();
  REQUIRE(h.sink().ForId(1).size() == 1);
  const Json error = h.sink().ForId(1)[0]["result"]["structuredContent"]["error"];
  CHECK(error["type"] == "timeout");
  CHECK(error["layer"] == "idle");
  CHECK(error["elapsed_ms"] == 500);
  // The latch wait saw its token cancelled: the single worker runs the next call.
  h.Send(h.Call(2, "echo", {{"text", "next"}}));
  REQUIRE(h.WaitFor(2));
  CHECK(h.sink().ForId(1).size() == 1);
  CHECK(h.session().coordinator().stats().timeouts == 1);
}

TEST_CASE(
    "a call queued behind a busy worker times out on the maximum and never runs "
    "(TMO-1)") {
  SessionOptions options;
  options.call_limits = CallLimits{Duration::zero(), Millis(1000)};
  SessionHarness h(1, options);
  h.Initialize();
  // The only worker is held by a tool that ignores cancellation.
  h.Send(h.Call(1, "latch_wait", {{"name", "hold"}, {"ignore_cancel", true}}));
  REQUIRE(h.WaitUntilRunning(1));
  h.clock().Advance(Millis(1));
  h.Send(h.Call(2, "echo", {{"text", "queued"}}));
  h.clock().Advance(Millis(999));
  h.Pump();
  REQUIRE(h.sink().ForId(1).size() == 1);  // 1000 ms since it was accepted
  CHECK(h.sink().ForId(1)[0]["result"]["structuredContent"]["error"]["layer"] == "max");
  CHECK(h.sink().ForId(2).empty());
  h.clock().Advance(Millis(1));
  h.Pump();
  REQUIRE(h.sink().ForId(2).size() == 1);  // queued 1000 ms: timed out without running
  CHECK(h.sink().ForId(2)[0]["result"]["structuredContent"]["error"]["layer"] == "max");
  // Once the stubborn tool returns, the worker skips the timed-out echo job.
  h.Send(h.Call(3, "latch_release", {{"name", "hold"}}));
  h.Send(h.Call(4, "echo", {{"text", "after"}}));
  REQUIRE(h.WaitFor(4));
  CHECK(h.sink().ForId(2).size() == 1);
  CHECK(h.session().coordinator().stats().never_started == 1);
}

TEST_CASE(
    "a tool that ignores cancellation keeps its slot counted, and a replacement worker "
    "serves the next call (CAN-2)") {
  SessionOptions options;
  options.max_inflight = 2;
  SessionHarness h(1, options);
  h.Initialize();
  h.Send(h.Call(1, "latch_wait", {{"name", "stubborn"}, {"ignore_cancel", true}}));
  REQUIRE(h.WaitUntilRunning(1));
  h.Send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})");
  CHECK(h.session().coordinator().draining() == 1);
  // 100 ms later the slot counts as held: the pool starts a replacement thread.
  h.clock().Advance(Millis(100));
  h.Pump();
  CHECK(h.session().coordinator().stats().held == 1);
  h.Send(h.Call(2, "echo", {{"text", "served"}}));
  REQUIRE(h.WaitFor(2));
  CHECK(h.sink().ForId(2)[0]["result"]["content"][0]["text"] == "served");
  // The limit still counts the held slot: one more call fills it, a second is refused.
  h.Send(h.Call(3, "latch_wait", {{"name", "other"}}));
  h.Send(h.Call(4, "echo", {{"text", "refused"}}));
  REQUIRE(h.sink().ForId(4).size() == 1);
  CHECK(h.sink().ForId(4)[0]["result"]["structuredContent"]["error"]["type"] == "server_busy");
  h.Send(h.Call(5, "latch_release", {{"name", "other"}}));
  REQUIRE(h.WaitFor(3));
  h.Send(h.Call(6, "latch_release", {{"name", "stubborn"}}));
  CHECK(h.WaitUntil([&] { return h.session().coordinator().draining() == 0; }));
  CHECK(h.sink().ForId(1).empty());
}

}  // namespace
}  // namespace keel::session_inflight_test
