// The two dialects of one task row (task_wire.h): the 2026-07-28 tasks extension's Task,
// CreateTaskResult and DetailedTask next to the 2025-11-25 Task. Proves TASKX-1 (flat
// create result, outcome inline, completed for tool errors, failed for JSON-RPC errors and
// keel's interruptions) and that the legacy shape is unchanged (TASK-1).
#include "server/tasks/task_wire.h"

#include <catch2/catch.hpp>

#include "protocol/tool_result.h"

namespace keel::task_wire_test {
namespace {

TaskRecord Row(TaskStatus status) {
  TaskRecord task;
  task.task_id = "0123456789abcdef0123456789abcdef";
  task.tool = "sleep";
  task.status = status;
  task.created_ms = 1764633600000;  // 2025-12-02T00:00:00Z
  task.updated_ms = 1764633601500;
  task.ttl_ms = 60000;
  task.poll_interval_ms = 250;
  return task;
}

Json TextResult(const char* text) {
  return Json{{"content", {{{"type", "text"}, {"text", text}}}}};
}

TEST_CASE("an extension CreateTaskResult is the flat Task with resultType task", "[TASKX-1]") {
  const Json created = ExtensionCreateTaskResult(Row(TaskStatus::kWorking));
  CHECK(created == Json{{"resultType", "task"},
                        {"taskId", "0123456789abcdef0123456789abcdef"},
                        {"status", "working"},
                        {"createdAt", "2025-12-02T00:00:00.000Z"},
                        {"lastUpdatedAt", "2025-12-02T00:00:01.500Z"},
                        {"ttlMs", 60000},
                        {"pollIntervalMs", 250}});
  TaskRecord unlimited = Row(TaskStatus::kWorking);
  unlimited.ttl_ms.reset();
  CHECK(ExtensionTaskJson(unlimited)["ttlMs"].is_null());
}

TEST_CASE("a completed extension task carries its result inline, nothing else", "[TASKX-1]") {
  TaskRecord task = Row(TaskStatus::kCompleted);
  task.result = TextResult("done");
  const Json detailed = ExtensionDetailedTask(task);
  CHECK(detailed["status"] == "completed");
  CHECK(detailed["result"] == TextResult("done"));
  CHECK_FALSE(detailed.contains("error"));
  CHECK_FALSE(detailed.contains("resultType"));  // the answer's era adds "complete"
  CHECK_FALSE(ExtensionDetailedTask(Row(TaskStatus::kWorking)).contains("result"));
}

TEST_CASE("a tool error is completed in the extension and failed in 2025-11-25", "[TASKX-1]") {
  TaskRecord task = Row(TaskStatus::kFailed);
  task.result = ErrorResult("boom", Json{{"type", "timeout"}});
  const Json detailed = ExtensionDetailedTask(task);
  CHECK(detailed["status"] == "completed");
  CHECK(detailed["result"]["isError"] == true);
  CHECK_FALSE(detailed.contains("error"));
  CHECK(TaskJson(task)["status"] == "failed");
}

TEST_CASE("keel's interruption is failed with a JSON-RPC error carrying the reason", "[TASKX-1]") {
  TaskRecord task = Row(TaskStatus::kFailed);
  task.status_message = "keel restarted while this task was running";
  task.result = ErrorResult("interrupted", Json{{"type", "interrupted"}, {"reason", "x"}});
  const Json detailed = ExtensionDetailedTask(task);
  CHECK(detailed["status"] == "failed");
  CHECK(detailed["error"]["code"] == -32603);
  CHECK(detailed["error"]["message"] == task.status_message);
  CHECK(detailed["error"]["data"]["reason"] == "x");
  CHECK_FALSE(detailed.contains("result"));
}

TEST_CASE("a stored JSON-RPC error is the failed task's error as it is", "[TASKX-1]") {
  TaskRecord task = Row(TaskStatus::kFailed);
  task.error = Json{{"code", -32603}, {"message", "store"}};
  const Json detailed = ExtensionDetailedTask(task);
  CHECK(detailed["status"] == "failed");
  CHECK(detailed["error"] == task.error);
}

TEST_CASE("a cancelled extension task has neither result nor error", "[TASKX-1]") {
  TaskRecord task = Row(TaskStatus::kCancelled);
  task.status_message = "cancelled";
  const Json detailed = ExtensionDetailedTask(task);
  CHECK(detailed["status"] == "cancelled");
  CHECK(detailed["statusMessage"] == "cancelled");
  CHECK_FALSE(detailed.contains("result"));
  CHECK_FALSE(detailed.contains("error"));
}

TEST_CASE("a task is the extension's when its stored request carries the modern envelope",
          "[TASKX-1]") {
  TaskRecord task = Row(TaskStatus::kWorking);
  CHECK_FALSE(IsExtensionTask(task));
  task.request = {{"name", "sleep"}, {"_meta", {{"progressToken", 1}}}};
  CHECK_FALSE(IsExtensionTask(task));
  MarkExtensionRequest(task.request);
  CHECK(IsExtensionTask(task));
  CHECK(task.request["_meta"]["progressToken"] == 1);
  TaskRecord bare = Row(TaskStatus::kWorking);
  bare.request = {{"name", "sleep"}};
  MarkExtensionRequest(bare.request);
  CHECK(IsExtensionTask(bare));
}

}  // namespace
TEST_CASE("a task whose tool threw is failed with -32603 in the extension and its data",
          "[TASKX-1]") {
  TaskRecord task = Row(TaskStatus::kFailed);
  task.result = ErrorResult("Internal error in tool 'sleep'", Json{{"type", "internal_error"}});
  const Json detailed = ExtensionDetailedTask(task);
  CHECK(detailed["status"] == "failed");
  CHECK_FALSE(detailed.contains("result"));
  CHECK(detailed["error"]["code"] == -32603);
  CHECK(detailed["error"]["message"] == "Internal error in tool 'sleep'");
  CHECK(detailed["error"]["data"]["type"] == "internal_error");
  CHECK(TaskJson(task)["status"] == "failed");
}

}  // namespace keel::task_wire_test
