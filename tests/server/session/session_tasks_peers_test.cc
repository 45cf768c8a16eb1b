// Durable tasks and peers: the TaskManager's pending requests are keyed by (peer, id), so two
// peers may wait on tasks/result with the same id, each answered on its own exchange, and a
// cancel or a forgotten peer drops only that peer's answer. Tasks themselves belong to no
// peer: any peer may ask about any task.
#include <catch2/catch.hpp>

#include "fakes/test_router.h"
#include "server/tasks/task_harness.h"

namespace keel::session_tasks_peers_test {
namespace {

constexpr ExchangeId kA = 21;
constexpr ExchangeId kB = 22;

Json TaskResult(const Json& id, const std::string& task_id) {
  return Json{{"jsonrpc", "2.0"},
              {"id", id},
              {"method", "tasks/result"},
              {"params", {{"taskId", task_id}}}};
}

void ReleaseLatch(TaskHarness& h, const std::string& latch) {
  h.Send(Json{{"jsonrpc", "2.0"},
              {"id", "release-" + latch},
              {"method", "tools/call"},
              {"params", {{"name", "latch_release"}, {"arguments", {{"name", latch}}}}}});
}

}  // namespace

TEST_CASE("two peers wait on tasks/result with one id: each answered on its own exchange",
          "[tasks][peers][TASK-1]") {
  TaskHarness h;
  h.Initialize();
  h.Initialize(true, kA);
  h.Initialize(true, kB);
  const std::string task_id =
      h.CreateTask(1, "latch_wait", Json{{"name", "L"}, {"ignore_cancel", false}});
  RecordingSink a;
  RecordingSink b;
  TestRouter router;
  router.Add(kNoExchange, h.sink());
  router.Add(kA, a);
  router.Add(kB, b);
  h.session().set_router(&router);

  h.SendOn(kA, TaskResult(2, task_id));
  h.SendOn(kB, TaskResult(2, task_id));  // not refused: the id is B's own
  CHECK(b.ForId(2).empty());
  h.SendOn(kA, Json{{"jsonrpc", "2.0"},
                    {"method", "notifications/cancelled"},
                    {"params", {{"requestId", 2}}}});
  ReleaseLatch(h, "L");
  REQUIRE(h.WaitUntil([&] { return !b.ForId(2).empty(); }));
  CHECK(b.ForId(2)[0].contains("result"));
  CHECK(a.ForId(2).empty());  // A cancelled its wait: never answered
  CHECK(h.sink().ForId(2).empty());
}

TEST_CASE("forgetting a peer drops its waiting tasks/result, and the task lives on",
          "[tasks][peers][TASK-1]") {
  TaskHarness h;
  h.Initialize();
  constexpr PeerId kSession = 50;
  h.Initialize(true, kSession);
  const std::string task_id =
      h.CreateTask(1, "latch_wait", Json{{"name", "L"}, {"ignore_cancel", false}});
  h.SendOn(kA, TaskResult(2, task_id), kSession);
  CHECK(h.session().ForgetPeer(kSession) == 1);
  ReleaseLatch(h, "L");
  REQUIRE(h.WaitUntil([&] { return !h.StatusOf(task_id).empty(); }));
  CHECK(h.StatusOf(task_id).back()["status"] == "completed");
  CHECK(h.sink().ForId(2).empty());
  REQUIRE(h.Request(3, "tasks/result", {{"taskId", task_id}}).contains("result"));
}

}  // namespace keel::session_tasks_peers_test
