// Durable tasks through the Session (TASK-1, TASK-2): the races between tasks/cancel and
// the work, forced with latches, and the blocking tasks/result.
#include <catch2/catch.hpp>

#include "protocol/cursor.h"
#include "server/tasks/task_harness.h"
#include "server/tasks/task_wire.h"

namespace keel::session_tasks_test {
namespace {

Json LatchArgs(const std::string& name, bool ignore_cancel, bool checkpoint = true) {
  return Json{{"name", name}, {"ignore_cancel", ignore_cancel}, {"checkpoint", checkpoint}};
}

void Release(TaskHarness& h, const std::string& latch) {
  h.Send(Json{{"jsonrpc", "2.0"},
              {"id", "release-" + latch},
              {"method", "tools/call"},
              {"params", {{"name", "latch_release"}, {"arguments", {{"name", latch}}}}}});
}

bool Contains(const Json& value, const std::string& text) {
  return value.is_string() && value.get<std::string>().find(text) != std::string::npos;
}

}  // namespace

TEST_CASE(
    "tasks/cancel before the work reaches a checkpoint: cancelled at once, observed at "
    "the checkpoint, nothing sent for the work after",
    "[tasks][TASK-1]") {
  TaskHarness h;
  h.Initialize();
  const std::string task_id = h.CreateTask(1, "latch_wait", LatchArgs("L", /*ignore_cancel=*/true),
                                           {{"progressToken", "p"}});
  REQUIRE(h.WaitUntilRunning(task_id));  // the worker is inside the wait, not at a checkpoint

  const Json cancelled = h.Request(2, "tasks/cancel", {{"taskId", task_id}});
  REQUIRE(cancelled.contains("result"));
  CHECK(cancelled["result"]["status"] == "cancelled");
  CHECK(Contains(cancelled["result"]["statusMessage"], "cancel_requested"));
  // The durable row says so too, before the work has stopped.
  const Json read = h.Request(3, "tasks/get", {{"taskId", task_id}});
  CHECK(read["result"]["status"] == "cancelled");
  CHECK(Contains(read["result"]["statusMessage"], "cancel_requested"));

  const size_t lines_before = h.sink().messages().size();
  Release(h, "L");  // the worker leaves the wait and reaches its checkpoint
  REQUIRE(h.WaitUntil([&] {
    const auto status = h.StatusOf(task_id);
    return !status.empty() && Contains(status.back()["statusMessage"], "cancel_observed");
  }));
  const Json after = h.Request(4, "tasks/get", {{"taskId", task_id}});
  CHECK(after["result"]["status"] == "cancelled");
  CHECK(Contains(after["result"]["statusMessage"], "cancel_observed"));
  // After the cancel: only the latch_release answer, the phase notification and our own
  // tasks/get; no progress, and no result for the task's original request.
  for (size_t i = lines_before; i < h.sink().messages().size(); ++i) {
    const Json& m = h.sink().messages()[i];
    CHECK(m.value("method", "") != "notifications/progress");
    if (m.contains("id")) CHECK(m["id"] != 1);
  }
  const Json result = h.Request(5, "tasks/result", {{"taskId", task_id}});
  REQUIRE(result.contains("error"));
  CHECK(result["error"]["code"] == -32603);
  CHECK(result["error"]["data"]["cancelPhase"] == "observed");
}

TEST_CASE("a task whose work ignores tasks/cancel stays cancelled and keeps what it did",
          "[tasks][TASK-1]") {
  TaskHarness h;
  h.Initialize();
  const std::string task_id =
      h.CreateTask(1, "latch_wait", LatchArgs("L", true, /*checkpoint=*/false));
  REQUIRE(h.WaitUntilRunning(task_id));
  REQUIRE(h.Request(2, "tasks/cancel", {{"taskId", task_id}})["result"]["status"] == "cancelled");
  Release(h, "L");  // it runs to its end and returns a result
  REQUIRE(h.WaitUntil([&] {
    const auto status = h.StatusOf(task_id);
    return !status.empty() && Contains(status.back()["statusMessage"], "finished_after_cancel");
  }));
  CHECK(h.StatusOf(task_id).back()["status"] == "cancelled");
  const Json result = h.Request(3, "tasks/result", {{"taskId", task_id}});
  REQUIRE(result.contains("error"));  // never a success for a cancelled task
  CHECK(result["error"]["data"]["cancelPhase"] == "finished_after_cancel");
  CHECK(result["error"]["data"]["lateOutcome"]["content"][0]["text"] == "released L");
}

TEST_CASE("tasks/cancel of a task that completed first is refused with -32602", "[tasks][TASK-1]") {
  TaskHarness h;
  h.Initialize();
  const std::string task_id = h.CreateTask(1, "latch_wait", LatchArgs("L", false));
  Release(h, "L");
  REQUIRE(h.WaitUntil([&] {
    const auto status = h.StatusOf(task_id);
    return !status.empty() && status.back()["status"] == "completed";
  }));
  const Json refused = h.Request(2, "tasks/cancel", {{"taskId", task_id}});
  REQUIRE(refused.contains("error"));
  CHECK(refused["error"]["code"] == -32602);
  CHECK(Contains(refused["error"]["message"], "completed"));
}

TEST_CASE(
    "a task cancelled while queued never runs and reads observed once its job is "
    "dropped",
    "[tasks][TASK-1]") {
  TaskHarness h(/*workers=*/1);
  h.Initialize();
  h.Send(Json{{"jsonrpc", "2.0"},
              {"id", "blocker"},
              {"method", "tools/call"},
              {"params", {{"name", "latch_wait"}, {"arguments", {{"name", "B"}}}}}});
  const std::string task_id = h.CreateTask(1, "latch_wait", LatchArgs("never", false));
  REQUIRE(h.Request(2, "tasks/cancel", {{"taskId", task_id}})["result"]["status"] == "cancelled");
  Release(h, "B");  // the one worker frees up and finds the task's job abandoned
  REQUIRE(h.WaitUntil([&] {
    const auto status = h.StatusOf(task_id);
    return !status.empty() && Contains(status.back()["statusMessage"], "never started");
  }));
}

TEST_CASE(
    "tasks/result waits for the terminal state and answers the call's result with the "
    "related-task _meta",
    "[tasks][TASK-2]") {
  TaskHarness h;
  h.Initialize();
  const std::string task_id = h.CreateTask(1, "latch_wait", LatchArgs("L", false));
  h.Send(Json{{"jsonrpc", "2.0"},
              {"id", 2},
              {"method", "tasks/result"},
              {"params", {{"taskId", task_id}}}});
  h.Pump();
  CHECK(h.sink().ForId(2).empty());  // blocked: the task is working
  Release(h, "L");
  const Json answer = h.Answer(2);
  REQUIRE(answer.contains("result"));
  CHECK(answer["result"]["content"][0]["text"] == "released L");
  CHECK(answer["result"]["_meta"][std::string(kRelatedTaskKey)]["taskId"] == task_id);
  // Asked again once terminal, the same answer comes from the file.
  const Json again = h.Request(3, "tasks/result", {{"taskId", task_id}});
  CHECK(again["result"] == answer["result"]);
}

TEST_CASE("tasks/result cancelled with notifications/cancelled is never answered",
          "[tasks][CAN-3]") {
  TaskHarness h;
  h.Initialize();
  const std::string task_id = h.CreateTask(1, "latch_wait", LatchArgs("L", false));
  h.Send(Json{{"jsonrpc", "2.0"},
              {"id", 2},
              {"method", "tasks/result"},
              {"params", {{"taskId", task_id}}}});
  h.Send(Json{
      {"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 2}}}});
  Release(h, "L");
  REQUIRE(h.WaitUntil([&] { return !h.StatusOf(task_id).empty(); }));
  // A later tasks/result (id 3) is answered; the cancelled one (id 2) never is.
  REQUIRE(h.Request(3, "tasks/result", {{"taskId", task_id}}).contains("result"));
  CHECK(h.sink().ForId(2).empty());
}

TEST_CASE("a tasks/result waiting on a closed exchange is never answered, and the task lives on",
          "[tasks][CAN-5][TASK-1]") {
  TaskHarness h;
  h.Initialize();
  const std::string task_id = h.CreateTask(1, "latch_wait", LatchArgs("L", false));
  // Another client, whose exchange 7 is its own peer, waits for the task's result.
  h.Initialize(true, 7);
  h.SendOn(7, Json{{"jsonrpc", "2.0"},
                   {"id", 2},
                   {"method", "tasks/result"},
                   {"params", {{"taskId", task_id}}}});
  CHECK(h.session().OnExchangeClosed(7) == 1);
  Release(h, "L");
  REQUIRE(h.WaitUntil([&] { return !h.StatusOf(task_id).empty(); }));
  CHECK(h.StatusOf(task_id).back()["status"] == "completed");
  // Asked again on a live exchange, the result is there; the waiter on the closed one
  // (id 2) never got an answer.
  REQUIRE(h.Request(3, "tasks/result", {{"taskId", task_id}}).contains("result"));
  CHECK(h.sink().ForId(2).empty());
}

TEST_CASE(
    "notifications/cancelled naming a task's creating request is ignored once the task "
    "exists",
    "[tasks][TASK-1]") {
  TaskHarness h;
  h.Initialize();
  const std::string task_id = h.CreateTask(1, "latch_wait", LatchArgs("L", false));
  h.Send(Json{
      {"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 1}}}});
  Release(h, "L");
  REQUIRE(h.WaitUntil([&] {
    const auto status = h.StatusOf(task_id);
    return !status.empty() && status.back()["status"] == "completed";
  }));
}

TEST_CASE("task status notifications wait for notifications/initialized", "[tasks]") {
  TaskHarness h;
  h.Initialize(/*send_initialized=*/false);
  const std::string task_id = h.CreateTask(1, "latch_wait", LatchArgs("L", false));
  Release(h, "L");
  REQUIRE(h.Request(2, "tasks/result", {{"taskId", task_id}}).contains("result"));
  CHECK(h.StatusOf(task_id).empty());
}

TEST_CASE(
    "task progress keeps the creating request's token and the related-task _meta, and "
    "stops at the terminal state",
    "[tasks][PRG-1]") {
  TaskHarness h;
  h.Initialize();
  const std::string task_id =
      h.CreateTask(1, "progress", {{"steps", 3}}, {{"progressToken", "tok"}});
  REQUIRE(h.Request(2, "tasks/result", {{"taskId", task_id}}).contains("result"));
  const auto progress = h.sink().WithMethod("notifications/progress");
  REQUIRE_FALSE(progress.empty());
  for (const Json& p : progress) {
    CHECK(p["params"]["progressToken"] == "tok");
    CHECK(p["params"]["_meta"][std::string(kRelatedTaskKey)]["taskId"] == task_id);
  }
}

TEST_CASE("a task created by a request cancelled before its answer never runs", "[tasks]") {
  TaskHarness h;
  h.Initialize();
  // Both lines arrive before the store thread commits the task.
  h.session().HandleLine(Json{
      {"jsonrpc", "2.0"},
      {"id", 1},
      {"method", "tools/call"},
      {"params",
       {{"name", "latch_wait"}, {"arguments", LatchArgs("L", false)}, {"task", Json::object()}}}}
                             .dump());
  h.session().HandleLine(Json{
      {"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 1}}}}
                             .dump());
  // The commit comes back, the task is cancelled instead of started, and that is written.
  REQUIRE(h.WaitUntil([&] { return h.session().tasks()->idle(); }));
  const Json list = h.Request(2, "tasks/list", Json::object());
  REQUIRE(list["result"]["tasks"].size() == 1);
  CHECK(list["result"]["tasks"][0]["status"] == "cancelled");
  CHECK(h.sink().ForId(1).empty());
  CHECK(h.session().tasks()->live() == 0);
}

TEST_CASE("a task ttl of 2^63 ms or more is clamped to the max ttl and never wrapped", "[tasks]") {
  TaskOptions options;
  options.max_ttl_ms = 5000;
  TaskHarness h(2, options);
  h.Initialize();
  // 2^63 and 2^64-1 do not fit int64: read as int64 they were negative, and became 1000.
  for (const char* ttl : {"9223372036854775807", "9223372036854775808", "18446744073709551615"}) {
    INFO(ttl);
    const Json answer = h.Request(ttl, "tools/call",
                                  Json::parse(std::string(R"({"name":"sleep","arguments":{"ms":1},)"
                                                          R"("task":{"ttl":)") +
                                              ttl + "}}"));
    REQUIRE(answer.contains("result"));
    CHECK(answer["result"]["task"]["ttl"] == 5000);
  }
}

TEST_CASE("a tasks/list cursor past 2^63 is refused as invalid and never wrapped to the first page",
          "[tasks]") {
  TaskHarness h;
  h.Initialize();
  h.CreateTask(1, "sleep", {{"ms", 1}});
  const Json answer =
      h.Request(2, "tasks/list", {{"cursor", EncodeCursor("tasks", size_t{1} << 63)}});
  REQUIRE(answer.contains("error"));
  CHECK(answer["error"]["code"] == -32602);
}

TEST_CASE(
    "with no max ttl a huge task ttl is capped at ten years so its work does not time "
    "out at once",
    "[tasks]") {
  TaskOptions options;
  options.max_ttl_ms = 0;  // unlimited
  TaskHarness h(2, options);
  h.Initialize();
  int id = 0;
  for (const char* ttl : {"9223372036854775807", "18446744073709551615"}) {
    INFO(ttl);
    const std::string task_id =
        h.CreateTask(++id, "sleep", {{"ms", 1}}, Json(), Json{{"ttl", Json::parse(ttl)}});
    const Json result = h.Request(++id, "tasks/result", {{"taskId", task_id}});
    REQUIRE(result.contains("result"));
    CHECK(result["result"]["content"][0]["text"] == "slept 1 ms");
    const Json task = h.Request(++id, "tasks/get", {{"taskId", task_id}});
    CHECK(task["result"]["ttl"] == 10LL * 365 * 24 * 3600 * 1000);
  }
}

}  // namespace keel::session_tasks_test

namespace keel::session_tasks_test {

TEST_CASE(
    "a task whose row commits after shutdown began fails without running, and keel "
    "finishes once that is written",
    "[tasks][TASK-2]") {
  TaskHarness h;
  h.Initialize();
  h.session().HandleLine(Json{
      {"jsonrpc", "2.0"},
      {"id", 1},
      {"method", "tools/call"},
      {"params", {{"name", "sleep"}, {"arguments", {{"ms", 60000}}}, {"task", Json::object()}}}}
                             .dump());
  h.session().BeginShutdown("test");  // before the store thread's commit comes back
  REQUIRE(h.WaitUntil([&] { return h.finished(); }));
  const Json created = h.sink().ForId(1).at(0);
  const std::string task_id = created["result"]["task"]["taskId"].get<std::string>();
  std::string error;
  auto db = Database::Open(h.Path(), &error);
  REQUIRE(db != nullptr);
  TaskStore store(*db);
  const std::optional<TaskRecord> row = store.Get(task_id);
  REQUIRE(row);
  CHECK(row->status == TaskStatus::kFailed);
  CHECK(row->result["structuredContent"]["error"]["effect"] == "did_not_happen");
}

}  // namespace keel::session_tasks_test

namespace keel::session_tasks_test {

TEST_CASE(
    "a charge that commits before tasks/cancel is decided is recorded as what happened: "
    "the task stays cancelled, its late outcome and the ledger show the charge",
    "[tasks][TASK-1][IDEM-3]") {
  TaskHarness h(/*workers=*/1, TaskOptions(), /*ledger_tools=*/true);
  h.Initialize();
  // The one worker is held first, so the charge task's job waits behind it.
  h.Send(Json{{"jsonrpc", "2.0"},
              {"id", "gate"},
              {"method", "tools/call"},
              {"params", {{"name", "latch_wait"}, {"arguments", {{"name", "G"}}}}}});
  const std::string task_id = h.CreateTask(
      1, "charge_account", {{"account", "acct-1"}, {"cents", 700}, {"idempotencyKey", "k-1"}});
  h.Pump();  // the charge's job goes to the pool, behind the gate
  // Open the gate without running the loop: both jobs finish, their results wait in the
  // loop's mailbox, so the loop has not seen the charge complete when the cancel arrives.
  h.session().HandleLine(
      Json{{"jsonrpc", "2.0"},
           {"id", "open"},
           {"method", "tools/call"},
           {"params", {{"name", "latch_release"}, {"arguments", {{"name", "G"}}}}}}
          .dump());
  REQUIRE(h.pool().WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  h.session().HandleLine(Json{
      {"jsonrpc", "2.0"}, {"id", 2}, {"method", "tasks/cancel"}, {"params", {{"taskId", task_id}}}}
                             .dump());

  const Json cancelled = h.Answer(2);
  REQUIRE(cancelled["result"]["status"] == "cancelled");
  REQUIRE(h.WaitUntil([&] {
    const auto status = h.StatusOf(task_id);
    return !status.empty() && Contains(status.back()["statusMessage"], "finished_after_cancel");
  }));
  const Json result = h.Request(3, "tasks/result", {{"taskId", task_id}});
  REQUIRE(result.contains("error"));  // cancelled: no success, whatever the work did
  const Json late = result["error"]["data"]["lateOutcome"];
  CHECK(late["structuredContent"]["balance_cents"] == 100000 - 700);
  // The ledger holds the same charge, run once.
  const Json lookup = h.Request(
      4, "tools/call",
      {{"name", "ledger_lookup"}, {"arguments", {{"tool", "charge_account"}, {"key", "k-1"}}}});
  CHECK(lookup["result"]["structuredContent"]["state"] == "committed");
  CHECK(lookup["result"]["structuredContent"]["executions"] == 1);
  CHECK(lookup["result"]["structuredContent"]["result"]["structuredContent"]["charge_id"] ==
        late["structuredContent"]["charge_id"]);
}

}  // namespace keel::session_tasks_test
