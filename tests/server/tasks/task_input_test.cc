// An extension task whose work asks for input (task_manager.h, invariant 9): parked
// input_required with its inputRequests, answered through tasks/update (all at once or one
// key at a time), resumed, cancelled while parked, parked by an earlier keel, expired. The
// race of a cancel with the parking write is forced by holding the store thread on a
// latch, never by sleeping.
#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "protocol/tool_result.h"
#include "server/tasks/task_harness.h"
#include "server/tasks/task_wire.h"
#include "server/tools/conformance_task_tools.h"
#include "server/tools/fn_tool.h"
#include "server/tools/input_questions.h"

namespace keel::task_input_test {
namespace {

const Json kDeclares = {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                        {"io.modelcontextprotocol/clientCapabilities",
                         {{"elicitation", Json::object()},
                          {"extensions", {{"io.modelcontextprotocol/tasks", Json::object()}}}}}};

// `gated_ask`: a task at once whose work waits for *gate before it asks one question, so a
// test can hold the store thread before the parking write is posted.
std::unique_ptr<Tool> GatedAsk(std::shared_ptr<std::atomic<bool>> gate) {
  ToolSpec spec;
  spec.name = "gated_ask";
  spec.description = "a task whose work waits for the test's gate, then asks.";
  spec.input_schema = {{"type", "object"}, {"properties", Json::object()}};
  spec.task_support = TaskSupport::kRequired;
  spec.asks_for_input = true;
  return std::make_unique<FnTool>(std::move(spec), [gate](ToolContext& ctx) {
    ctx.BecomeTask();
    while (!gate->load()) std::this_thread::yield();
    if (ctx.InputResponse("confirm") == nullptr)
      return AskForInput(Json{{"confirm", ElicitString("Go on?", "confirm")}});
    return TextResult("answered");
  });
}

TaskHarness Fixtures(std::shared_ptr<std::atomic<bool>> gate = nullptr) {
  return TaskHarness(2, TaskOptions(), false, [gate](ToolRegistry& registry) {
    for (auto& tool : MakeConformanceTaskTools(Millis(0))) {
      REQUIRE(registry.Register(std::move(tool)).empty());
    }
    if (gate) REQUIRE(registry.Register(GatedAsk(gate)).empty());
  });
}

// A declaring tools/call of `tool`, answered with a CreateTaskResult: its task id.
std::string Start(TaskHarness& h, const Json& id, const std::string& tool, const Json& args) {
  const Json created =
      h.Request(id, "tools/call", {{"name", tool}, {"arguments", args}, {"_meta", kDeclares}});
  REQUIRE(created["result"]["resultType"] == "task");
  return created["result"]["taskId"].get<std::string>();
}

// tasks/get once no task is live (parked, or its outcome written).
Json Quiet(TaskHarness& h, const Json& id, const std::string& task_id) {
  REQUIRE(h.WaitUntil([&] { return h.session().tasks()->live() == 0; }));
  return h.Request(id, "tasks/get", {{"taskId", task_id}, {"_meta", kDeclares}})["result"];
}

Json Update(TaskHarness& h, const Json& id, const std::string& task_id, const Json& responses) {
  return h.Request(id, "tasks/update",
                   {{"taskId", task_id}, {"inputResponses", responses}, {"_meta", kDeclares}});
}

Json Accept(const Json& content) { return {{"action", "accept"}, {"content", content}}; }

// The row as the file has it, read on a connection of the test's own.
TaskRecord Stored(TaskHarness& h, const std::string& task_id) {
  std::string error;
  auto db = Database::Open(h.Path(), &error);
  REQUIRE(db != nullptr);
  TaskStore store(*db);
  std::optional<TaskRecord> row = store.Get(task_id);
  REQUIRE(row);
  return *row;
}

// Holds the store thread until Open(), as in session_task_extension_test.cc.
class HeldStore {
 public:
  explicit HeldStore(TaskHarness& h) {
    h.store().Post([open = open_](TaskStore&) {
      while (!open->load()) std::this_thread::yield();
    });
  }
  ~HeldStore() { Open(); }
  HeldStore(const HeldStore&) = delete;
  HeldStore& operator=(const HeldStore&) = delete;
  void Open() { open_->store(true); }

 private:
  std::shared_ptr<std::atomic<bool>> open_ = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace

TEST_CASE(
    "a task whose work asks is input_required with its inputRequests, and tasks/update "
    "resumes it to completed",
    "[tasks][task_input][TASKX-1]") {
  TaskHarness h = Fixtures();
  const std::string task_id = Start(h, 1, "confirm_delete", {{"filename", "a.txt"}});
  const Json parked = Quiet(h, 2, task_id);
  CHECK(parked["status"] == "input_required");
  CHECK(parked["inputRequests"]["confirm"]["method"] == "elicitation/create");
  CHECK_FALSE(parked.contains("result"));
  CHECK(Stored(h, task_id).status == TaskStatus::kInputRequired);
  const Json ack = Update(h, 3, task_id, {{"confirm", Accept({{"confirm", true}})}});
  CHECK(ack["result"]["resultType"] == "complete");
  CHECK_FALSE(ack["result"].contains("status"));
  const Json done = Quiet(h, 4, task_id);
  CHECK(done["status"] == "completed");
  CHECK(done["result"]["content"][0]["text"] == "Deleted a.txt (a fixture: no file is touched)");
  CHECK_FALSE(done.contains("inputRequests"));
}

TEST_CASE("multi_input answered one key at a time stays input_required asking only what is missing",
          "[tasks][task_input][TASKX-1]") {
  TaskHarness h = Fixtures();
  const std::string task_id = Start(h, 1, "multi_input", Json::object());
  CHECK(Quiet(h, 2, task_id)["inputRequests"].size() == 2);
  Update(h, 3, task_id, {{"first", Accept({{"name", "one"}, {"confirm", true}})}});
  const Json half = Quiet(h, 4, task_id);
  CHECK(half["status"] == "input_required");
  CHECK(half["inputRequests"].size() == 1);
  CHECK(half["inputRequests"].contains("second"));
  CHECK(Stored(h, task_id).input_answers.contains("first"));
  Update(h, 5, task_id, {{"second", Accept({{"name", "two"}, {"confirm", true}})}});
  const Json done = Quiet(h, 6, task_id);
  CHECK(done["status"] == "completed");
  const std::string text = done["result"]["content"][0]["text"].get<std::string>();
  CHECK(text.find("one") != std::string::npos);
  CHECK(text.find("two") != std::string::npos);
}

TEST_CASE("tasks/cancel of a parked task cancels it, and a later tasks/update changes nothing",
          "[tasks][task_input][TASKX-1]") {
  TaskHarness h = Fixtures();
  const std::string task_id = Start(h, 1, "confirm_delete", {{"filename", "c.txt"}});
  REQUIRE(Quiet(h, 2, task_id)["status"] == "input_required");
  const Json ack = h.Request(3, "tasks/cancel", {{"taskId", task_id}, {"_meta", kDeclares}});
  CHECK(ack["result"]["resultType"] == "complete");
  CHECK(Quiet(h, 4, task_id)["status"] == "cancelled");
  CHECK(Stored(h, task_id).cancel_phase == CancelPhase::kObserved);
  CHECK(Update(h, 5, task_id, {{"confirm", Accept({{"confirm", true}})}})["result"]["resultType"] ==
        "complete");
  CHECK(Quiet(h, 6, task_id)["status"] == "cancelled");
  CHECK(h.session().coordinator().live() == 0);  // nothing ran again
}

TEST_CASE(
    "a tasks/cancel that comes while the task is being parked leaves it cancelled with its work "
    "observed stopped",
    "[tasks][task_input][TASKX-1]") {
  auto gate = std::make_shared<std::atomic<bool>>(false);
  TaskHarness h = Fixtures(gate);
  const std::string task_id = Start(h, 1, "gated_ask", Json::object());
  {
    HeldStore held(h);
    gate->store(true);
    // The work asks and returns: parked in memory, its write waits behind the latch.
    REQUIRE(h.WaitUntil([&] { return h.session().coordinator().live() == 0; }));
    CHECK(h.session().tasks()->live() == 1);
    h.Send(Json{{"jsonrpc", "2.0"},
                {"id", 2},
                {"method", "tasks/cancel"},
                {"params", {{"taskId", task_id}, {"_meta", kDeclares}}}});
    CHECK(h.sink().ForId(2).empty());  // acknowledged only once written
  }
  CHECK(h.Answer(2)["result"]["resultType"] == "complete");
  CHECK(Quiet(h, 3, task_id)["status"] == "cancelled");
  const TaskRecord row = Stored(h, task_id);
  CHECK(row.cancel_phase == CancelPhase::kObserved);
  CHECK(row.late_outcome.is_null());
}

TEST_CASE("a task parked by an earlier keel is answered here and its work runs with the answers",
          "[tasks][task_input][TASKX-1][TASK-2]") {
  TaskHarness h = Fixtures();
  TaskRecord task;
  task.task_id = "parked-before-restart";
  task.tool = "confirm_delete";
  task.created_ms = h.wall_ms.load();
  task.updated_ms = task.created_ms;
  task.ttl_ms = 3'600'000;
  task.request = {{"name", "confirm_delete"}, {"arguments", {{"filename", "old.txt"}}}};
  MarkExtensionRequest(task.request);
  task.owner = "keel-gone";
  task.owner_pid = 1;
  std::atomic<bool> written{false};
  h.store().Post([&](TaskStore& store) {
    store.Create(task, task.created_ms);
    store.Park(task.task_id, {{"confirm", {{"method", "elicitation/create"}}}}, Json(),
               task.created_ms);
    written = true;
  });
  REQUIRE(h.WaitUntil([&] { return written.load(); }));
  CHECK(Quiet(h, 1, task.task_id)["status"] == "input_required");
  Update(h, 2, task.task_id, {{"confirm", Accept({{"confirm", false}})}});
  const Json done = Quiet(h, 3, task.task_id);
  CHECK(done["status"] == "completed");
  CHECK(done["result"]["content"][0]["text"] == "Kept old.txt (a fixture: no file is touched)");
  CHECK(Stored(h, task.task_id).owner == "keel-test");
}

TEST_CASE("a parked task expires with its ttl like any task", "[tasks][task_input][TASKX-1]") {
  TaskHarness h = Fixtures();
  const std::string task_id = Start(h, 1, "confirm_delete", {{"filename", "e.txt"}});
  REQUIRE(Quiet(h, 2, task_id)["status"] == "input_required");
  h.wall_ms += 400LL * 24 * 3600 * 1000;  // past any ttl (--task-max-ttl is 24 h)
  const Json late = Update(h, 3, task_id, {{"confirm", Accept({{"confirm", true}})}});
  CHECK(late["error"]["code"] == -32602);
  CHECK(late["error"]["message"] == "Failed to update task: Task has expired");
}

TEST_CASE("a legacy task whose work asks still ends input_unavailable",
          "[tasks][task_input][TASK-1]") {
  TaskHarness h = Fixtures();
  h.Initialize();
  const std::string task_id = h.CreateTask(1, "confirm_delete", {{"filename", "l.txt"}});
  const Json result = h.Request(2, "tasks/result", {{"taskId", task_id}});
  CHECK(result["result"]["isError"] == true);
  CHECK(result["result"]["structuredContent"]["error"]["type"] == "input_unavailable");
}

}  // namespace keel::task_input_test
