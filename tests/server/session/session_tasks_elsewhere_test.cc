// A tasks/cancel answered by another keel that shares the task store (DIST-2, TASK-1,
// task_manager.h invariant 10): the other keel writes the row cancelled; this keel, which
// runs the work, finds the row at its next cancel watch and cancels the work here. The
// other keel is a second connection writing what its tasks/cancel writes; the watch
// interval passes on the injected clock, never by sleeping.
#include <catch2/catch.hpp>

#include "server/tasks/task_cancel_text.h"
#include "server/tasks/task_harness.h"

namespace keel::session_tasks_elsewhere_test {
namespace {

constexpr int64_t kWatchMs = 250;

Json LatchArgs(const std::string& name) {
  return Json{{"name", name}, {"ignore_cancel", false}, {"checkpoint", true}};
}

bool Contains(const Json& value, const std::string& text) {
  return value.is_string() && value.get<std::string>().find(text) != std::string::npos;
}

TaskHarness Watching() {
  TaskOptions options;
  options.cancel_watch_ms = kWatchMs;
  return TaskHarness(2, options);
}

// What the other keel's tasks/cancel writes, on a connection of its own.
void CancelElsewhere(TaskHarness& h, const std::string& task_id) {
  std::string error;
  auto db = Database::Open(h.Path(), &error);
  REQUIRE(db != nullptr);
  TaskStore other(*db);
  REQUIRE(other.Cancel(task_id, kCancelRequested, h.wall_ms.load()));
}

}  // namespace

TEST_CASE(
    "a task cancelled through another keel has its work cancelled here at the next watch, "
    "and its phase becomes observed",
    "[tasks][TASK-1][DIST-2]") {
  TaskHarness h = Watching();
  h.Initialize();
  h.session().tasks()->StartMaintenance([](TaskStore&) {});
  const std::string task_id = h.CreateTask(1, "latch_wait", LatchArgs("L"));
  REQUIRE(h.WaitUntilRunning(task_id));
  CancelElsewhere(h, task_id);
  const Json waiting = [&] {
    h.Send(Json{{"jsonrpc", "2.0"},
                {"id", 2},
                {"method", "tasks/result"},
                {"params", {{"taskId", task_id}}}});
    return h.sink().ForId(2);
  }();
  CHECK(waiting.empty());  // a tasks/result here waits for the work
  CHECK(h.session().coordinator().live() == 1);

  h.clock().Advance(Millis(kWatchMs));
  h.Pump();
  const Json result = h.Answer(2);
  REQUIRE(result.contains("error"));  // answered cancelled, never a success
  CHECK(result["error"]["data"]["status"] == "cancelled");
  REQUIRE(h.WaitUntil([&] {
    const auto status = h.StatusOf(task_id);
    return !status.empty() && Contains(status.back()["statusMessage"], "cancel_observed");
  }));
  CHECK(h.session().coordinator().live() == 0);
  const Json read = h.Request(3, "tasks/get", {{"taskId", task_id}});
  CHECK(Contains(read["result"]["statusMessage"], "cancel_observed"));
  REQUIRE(h.WaitUntil([&] { return h.session().tasks()->live() == 0; }));
}

TEST_CASE("without a watch interval a keel does not look for cancels made elsewhere",
          "[tasks][TASK-1][DIST-2]") {
  TaskHarness h;  // cancel_watch_ms 0: one keel alone
  h.Initialize();
  h.session().tasks()->StartMaintenance([](TaskStore&) {});
  const std::string task_id = h.CreateTask(1, "latch_wait", LatchArgs("L"));
  REQUIRE(h.WaitUntilRunning(task_id));
  CancelElsewhere(h, task_id);
  h.clock().Advance(Millis(kWatchMs * 4));
  h.Pump();
  CHECK(h.session().coordinator().live() == 1);  // still running
  h.Send(Json{{"jsonrpc", "2.0"},
              {"id", "r"},
              {"method", "tools/call"},
              {"params", {{"name", "latch_release"}, {"arguments", {{"name", "L"}}}}}});
  // Its outcome meets the cancelled row: kept as what it did after the cancel.
  REQUIRE(h.WaitUntil([&] { return h.session().tasks()->live() == 0; }));
  const Json read = h.Request(2, "tasks/get", {{"taskId", task_id}});
  CHECK(read["result"]["status"] == "cancelled");
}

}  // namespace keel::session_tasks_elsewhere_test
