// The tasks-extension conformance fixtures: what each tool does with its context (unit), and
// through the Session what the suite's tasks-* scenarios see: a tool that becomes a task on
// its own (ToolContext::BecomeTask) is answered with a CreateTaskResult and its task settles
// cancelled, completed or failed; a task-required tool asks first and becomes a task with the
// answer (MRTR, then the task). Waits are on latches and the task's cancel, never on time.
#include "server/tools/conformance_task_tools.h"

#include <map>
#include <memory>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "protocol/tool_result.h"
#include "server/input/input_round.h"
#include "server/tasks/task_harness.h"

namespace keel::conformance_task_tools_test {
namespace {

const Json kWithTasks = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                         {"io.modelcontextprotocol/clientCapabilities",
                          {{"elicitation", Json::object()},
                           {"extensions", {{"io.modelcontextprotocol/tasks", Json::object()}}}}}};
const Json kWithoutTasks = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                            {"io.modelcontextprotocol/clientCapabilities", Json::object()}};

std::map<std::string, std::unique_ptr<Tool>> TaskFixtures() {
  std::map<std::string, std::unique_ptr<Tool>> tools;
  for (auto& tool : MakeConformanceTaskTools(Millis(0))) {
    const std::string name = tool->spec().name;
    tools.emplace(name, std::move(tool));
  }
  return tools;
}

TaskHarness WithTaskFixtures() {
  return TaskHarness(2, TaskOptions(), false, [](ToolRegistry& registry) {
    for (auto& tool : MakeConformanceTaskTools(Millis(0))) {
      REQUIRE(registry.Register(std::move(tool)).empty());
    }
  });
}

Json Params(const std::string& tool, const Json& arguments, const Json& meta = kWithTasks) {
  return Json{{"name", tool}, {"arguments", arguments}, {"_meta", meta}};
}

// tasks/get of `task_id` once its outcome is written (the task is no longer live).
Json Settled(TaskHarness& h, const Json& id, const std::string& task_id) {
  REQUIRE(h.WaitUntil([&] { return h.session().tasks()->live() == 0; }));
  return h.Request(id, "tasks/get", {{"taskId", task_id}, {"_meta", kWithTasks}})["result"];
}

}  // namespace

TEST_CASE("slow_compute asks to become a task only when it has seconds to wait") {
  auto tools = TaskFixtures();
  int asked = 0;
  ToolContext instant(Json{{"seconds", 0}, {"label", "x"}}, CancellationToken(), nullptr);
  instant.set_become_task([&] { ++asked; });
  CHECK(tools.at("slow_compute")->Call(instant)["content"][0]["text"] == "Computed x in 0 s");
  CHECK(asked == 0);
  CancellationToken cancel;
  ToolContext slow(Json{{"seconds", 60}}, cancel, nullptr);
  slow.set_become_task([&] {
    ++asked;
    cancel.Cancel();  // the task is cancelled at once: the wait ends, the tool stops
  });
  CHECK_THROWS_AS(tools.at("slow_compute")->Call(slow), CallCancelled);
  CHECK(asked == 1);
}

TEST_CASE("test_tool_with_task asks the name first and becomes a task with the answer") {
  auto tools = TaskFixtures();
  Tool& tool = *tools.at("test_tool_with_task");
  CHECK(tool.spec().task_support == TaskSupport::kRequired);
  CHECK(tool.spec().asks_for_input);
  int asked = 0;
  ToolContext first(Json::object(), CancellationToken(), nullptr);
  first.set_become_task([&] { ++asked; });
  CHECK(IsInputRequired(tool.Call(first)));
  CHECK(asked == 0);
  auto round = std::make_shared<InputRound>();
  round->answers = {{"user_name", {{"action", "accept"}, {"content", {{"name", "Alice"}}}}}};
  CallIdentity identity;
  identity.input = round;
  ToolContext second(Json::object(), CancellationToken(), nullptr);
  second.set_identity(identity);
  second.set_become_task([&] { ++asked; });
  CHECK(tool.Call(second)["content"][0]["text"] == "Hello, Alice! (done as a task)");
  CHECK(asked == 1);
}

TEST_CASE(
    "a declaring call of slow_compute is a task at once, and tasks/cancel settles it "
    "cancelled",
    "[tasks][TASKX-1]") {
  TaskHarness h = WithTaskFixtures();
  const Json created =
      h.Request(1, "tools/call", Params("slow_compute", {{"seconds", 600}, {"label", "c"}}));
  REQUIRE(created["result"]["resultType"] == "task");
  CHECK_FALSE(created["result"].contains("requestState"));
  const std::string task_id = created["result"]["taskId"].get<std::string>();
  const Json ack = h.Request(2, "tasks/cancel", {{"taskId", task_id}, {"_meta", kWithTasks}});
  CHECK(ack["result"]["resultType"] == "complete");
  CHECK_FALSE(ack["result"].contains("status"));
  CHECK(Settled(h, 3, task_id)["status"] == "cancelled");
}

TEST_CASE("slow_compute without the extension declared answers as a plain call",
          "[tasks][TASKX-1]") {
  TaskHarness h = WithTaskFixtures();
  const Json answer = h.Request(
      1, "tools/call", Params("slow_compute", {{"seconds", 0}, {"label", "s"}}, kWithoutTasks));
  CHECK(answer["result"]["resultType"] == "complete");
  CHECK(answer["result"]["content"][0]["text"] == "Computed s in 0 s");
  const Json refused = h.Request(2, "tools/call", Params("failing_job", {}, kWithoutTasks));
  CHECK(refused["error"]["code"] == -32021);
  CHECK(refused["error"]["data"]["requiredCapabilities"]["extensions"].contains(
      "io.modelcontextprotocol/tasks"));
}

TEST_CASE("failing_job's task completes with isError and protocol_error_job's fails with -32603",
          "[tasks][TASKX-1]") {
  TaskHarness h = WithTaskFixtures();
  const Json failing = h.Request(1, "tools/call", Params("failing_job", Json::object()));
  REQUIRE(failing["result"]["resultType"] == "task");
  const Json completed = Settled(h, 2, failing["result"]["taskId"].get<std::string>());
  CHECK(completed["status"] == "completed");
  CHECK(completed["result"]["isError"] == true);
  const Json broken = h.Request(3, "tools/call", Params("protocol_error_job", Json::object()));
  REQUIRE(broken["result"]["resultType"] == "task");
  const Json failed = Settled(h, 4, broken["result"]["taskId"].get<std::string>());
  CHECK(failed["status"] == "failed");
  CHECK(failed["error"]["code"] == -32603);
  CHECK_FALSE(failed.contains("result"));
}

TEST_CASE("test_tool_with_task answers its question as a call, then the answer as a task",
          "[tasks][TASKX-1][MRTR-1]") {
  TaskHarness h = WithTaskFixtures();
  const Json round1 = h.Request(1, "tools/call", Params("test_tool_with_task", Json::object()));
  REQUIRE(round1["result"]["resultType"] == "input_required");
  CHECK_FALSE(round1["result"].contains("taskId"));
  Json retry = Params("test_tool_with_task", Json::object());
  retry["inputResponses"] = {
      {"user_name", {{"action", "accept"}, {"content", {{"name", "Alice"}}}}}};
  retry["requestState"] = round1["result"]["requestState"];
  const Json round2 = h.Request(2, "tools/call", retry);
  REQUIRE(round2["result"]["resultType"] == "task");
  CHECK_FALSE(round2["result"].contains("requestState"));
  const Json done = Settled(h, 3, round2["result"]["taskId"].get<std::string>());
  CHECK(done["status"] == "completed");
  CHECK(done["result"]["content"][0]["text"] == "Hello, Alice! (done as a task)");
}

}  // namespace keel::conformance_task_tools_test
