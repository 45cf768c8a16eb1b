// The batched hand-offs (issue 25) keep every ordering guarantee: calls read together are
// handed to the pool together, results come back together, and a cancel that travels in the
// same batch as its own call, or meets its call's result in the same loop iteration, still
// wins: one terminal state, and no response after the cancel (CAN-2).
#include <catch2/catch.hpp>

#include "session_harness.h"

using keel::Json;
using keel::SessionHarness;

namespace {

const char kCancel1[] =
    R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}})";

}  // namespace

TEST_CASE(
    "a cancel read in the same batch as its own call: the call never starts and is never "
    "answered, the rest of the batch is (CAN-2)") {
  SessionHarness h(2);
  h.Initialize();
  // One read's lines: the loop admits them all before it hands the batch to the pool.
  h.session().HandleLine(h.Call(1, "latch_wait", {{"name", "never_opened"}}));
  h.session().HandleLine(h.Call(2, "echo", {{"text", "two"}}));
  h.session().HandleLine(kCancel1);
  h.session().HandleLine(h.Call(3, "echo", {{"text", "three"}}));
  REQUIRE(h.WaitFor(2));
  REQUIRE(h.WaitFor(3));
  CHECK(h.sink().ForId(2)[0]["result"]["content"][0]["text"] == "two");
  CHECK(h.sink().ForId(3)[0]["result"]["content"][0]["text"] == "three");
  REQUIRE(h.pool().WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  h.Pump();
  CHECK(h.sink().ForId(1).empty());
  // Abandoned while queued: the latch tool never ran (it would still block a worker).
  CHECK(h.session().coordinator().stats().never_started == 1);
  CHECK(h.session().coordinator().draining() == 0);
}

TEST_CASE(
    "a cancel that meets its call's result in the same loop iteration wins: the posted "
    "result is dropped, never written (CAN-2)") {
  SessionHarness h(1);
  h.Initialize();
  h.Send(h.Call(1, "latch_wait", {{"name", "gate"}}));
  REQUIRE(h.WaitUntilRunning(1));
  // latch_release runs on the loop thread: the worker returns call 1 and posts its result
  // to the loop, which does not drain it before the cancel below is read.
  h.session().HandleLine(h.Call(2, "latch_release", {{"name", "gate"}}));
  REQUIRE(h.pool().WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  h.session().HandleLine(kCancel1);
  h.Pump();
  h.Send(h.Call(3, "echo", {{"text", "after"}}));
  REQUIRE(h.WaitFor(3));
  CHECK(h.sink().ForId(1).empty());
  CHECK(h.sink().ForId(2).size() == 1);
  CHECK(h.session().coordinator().stats().late_results_dropped == 1);
}

TEST_CASE(
    "a result posted in the same batch as the cancel of another call: each call has its "
    "own terminal state") {
  SessionHarness h(2);
  h.Initialize();
  h.Send(h.Call(1, "latch_wait", {{"name", "held"}}));
  REQUIRE(h.WaitUntilRunning(1));
  // One batch: the cancel of 1, and a call that releases the latch 1 waits on.
  h.session().HandleLine(kCancel1);
  h.session().HandleLine(h.Call(2, "latch_release", {{"name", "held"}}));
  h.session().HandleLine(h.Call(3, "echo", {{"text", "three"}}));
  REQUIRE(h.WaitFor(2));
  REQUIRE(h.WaitFor(3));
  REQUIRE(h.pool().WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  h.Pump();
  CHECK(h.sink().ForId(1).empty());
  CHECK(h.sink().ForId(2).size() == 1);
  CHECK(h.sink().ForId(3).size() == 1);
  CHECK(h.session().coordinator().draining() == 0);
}
