// The Session's side of durable tasks: admitting a task-augmented tools/call, starting
// the work of a created task, and routing tasks/* to the TaskManager.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>

#include <spdlog/spdlog.h>

#include "ledger/fingerprint.h"
#include "protocol/error_codes.h"
#include "protocol/schema_validator.h"
#include "server/call/idempotency_key.h"
#include "server/catalog/effective_policy.h"
#include "server/session/session.h"
#include "server/tasks/task_wire.h"

namespace keel {
namespace {

// A task without a ttl is not bounded by one: its work still has the idle clock.
constexpr Duration kNoMaximum = std::chrono::hours(24 * 365 * 10);
// A ttl below this is raised to it (MCP lets the receiver override the requested ttl).
constexpr int64_t kMinTtlMs = 1000;
// A ttl above this (kNoMaximum) is lowered to it, up to 2^64-1 (read as int64, 2^63 and more
// wrapped negative): no task lives that long, and creation + ttl stays far from overflowing.
// --task-max-ttl (at most a year) lowers it further when set.
constexpr int64_t kMaxTtlMs =
    std::chrono::duration_cast<std::chrono::milliseconds>(kNoMaximum).count();

// A client's non-negative JSON integer as int64, saturated: unsigned values from 2^63 up do
// not fit, and get<int64_t>() would wrap them negative.
int64_t SaturatedInt64(const Json& value) {
  if (value.is_number_unsigned()) {
    return static_cast<int64_t>(
        std::min<uint64_t>(value.get<uint64_t>(), std::numeric_limits<int64_t>::max()));
  }
  return value.get<int64_t>();
}

}  // namespace

void Session::CreateTask(const Json& id, const Tool& tool, Json arguments, Json meta,
                         Json progress_token, const Json& task) {
  const ToolSpec& spec = tool.spec();
  if (!task.is_object()) {
    return ReplyError(id, kInvalidParams, "Invalid params: task must be an object ({\"ttl\"?: ms})");
  }
  std::optional<int64_t> ttl;
  if (const auto value = task.find("ttl"); value != task.end() && !value->is_null()) {
    const bool whole = value->is_number_unsigned() ||
                       (value->is_number_integer() && value->get<int64_t>() >= 0);
    if (!whole) {
      return ReplyError(id, kInvalidParams,
                        "Invalid params: task.ttl must be a non-negative integer (milliseconds) "
                        "or null");
    }
    ttl = std::clamp(SaturatedInt64(*value), kMinTtlMs, kMaxTtlMs);
  }
  // A task-augmented call expects a CreateTaskResult: problems found before the task
  // exists are JSON-RPC errors, so no task is made for a call that cannot run.
  if (auto problem = ValidateCheckedSchema(spec.input_schema, arguments)) {
    return sink_.SendResponse(EncodeError(
        id, kInvalidParams, "Invalid arguments for tool '" + spec.name + "': " + *problem,
        Json{{"type", "invalid_arguments"}, {"message", *problem}}));
  }
  if (!HasApproval(spec, arguments)) {
    return sink_.SendResponse(EncodeError(id, kInvalidParams, ApprovalRequiredText(spec),
                                          ApprovalRequiredError(spec)));
  }
  std::string problem;
  const std::string key = ApprovalScopedKey(IdempotencyKey(meta, arguments, &problem), arguments);
  if (!problem.empty()) {
    return sink_.SendResponse(EncodeError(id, kInvalidParams, "Invalid params: " + problem,
                                          Json{{"type", "invalid_arguments"}}));
  }
  if (!ttl && spec.result_ttl_ms) ttl = *spec.result_ttl_ms;  // the catalog's resultTtlMs
  if (shutting_down_) {
    return ReplyError(id, kInternalError, "Server shutting down: task not created");
  }
  if (tasks_->AtLimit()) {
    return sink_.SendResponse(EncodeError(
        id, kInternalError,
        "Too many tasks: " + std::to_string(options_.tasks.max_tasks) +
            " tasks are live (--max-tasks); wait for one to finish or cancel one",
        Json{{"type", "too_many_tasks"}, {"max_tasks", options_.tasks.max_tasks},
             {"retry_after_ms", 1000}}));
  }
  if (AtCapacity()) {
    return sink_.SendResponse(EncodeError(
        id, kInternalError,
        "Server busy: " + std::to_string(options_.max_inflight) +
            " calls are already queued or running (--max-inflight); retry later",
        Json{{"type", "server_busy"}, {"max_inflight", options_.max_inflight},
             {"retry_after_ms", 100}}));
  }
  TaskManager::CreateRequest request;
  request.id = id;
  request.tool = spec.name;
  request.fingerprint = key.empty() ? std::string()
                                    : Fingerprint(spec.name,
                                                  IntentArguments(arguments, spec.key_components));
  request.params = {{"name", spec.name}, {"arguments", std::move(arguments)}};
  if (!meta.is_null()) request.params["_meta"] = std::move(meta);
  request.requested_ttl_ms = ttl;
  request.idempotency_key = key;
  request.progress_token = std::move(progress_token);
  tasks_->Create(std::move(request));
}

std::optional<uint64_t> Session::StartTaskWork(const TaskRecord& task, Json progress_token) {
  if (shutting_down_) return std::nullopt;
  Tool* tool = tools_.Find(task.tool);  // checked when the task was created
  ToolPolicy policy = EffectivePolicy(*policy_, tool->spec(), options_.shadow);
  CallLimits limits{Millis(policy.timeouts.idle_ms), kNoMaximum};
  if (task.ttl_ms) limits.max = Millis(*task.ttl_ms);
  RequestCoordinator::Admitted work = coordinator_.BeginTask(
      task.tool, std::move(progress_token), RelatedTaskMeta(task.task_id), limits,
      [this, task_id = task.task_id](CallState state, Json result, Json error) {
        tasks_->OnSettled(task_id, state, std::move(result), std::move(error));
      });
  TraceCallStart(work.generation, *tool, Json(), task.request.value("_meta", Json()),
                 task.request.value("arguments", Json::object()), task.task_id);
  unsubmitted_.push_back(MakeJob(work.generation, std::move(work.control), tool,
                                 std::move(policy), limits.max,
                                 task.request.value("arguments", Json::object()),
                                 task.request.value("_meta", Json()), task.task_id));
  if (unsubmitted_.size() >= kMaxHeldCalls) SubmitHeldCalls();
  return work.generation;
}

void Session::HandleTaskMethod(const Message& message) {
  const std::string& method = message.method;
  if (method == "tasks/get") return tasks_->Get(message.id, message.params);
  if (method == "tasks/result") return tasks_->Result(message.id, message.params);
  if (method == "tasks/list") return tasks_->List(message.id, message.params);
  if (method == "tasks/cancel") return tasks_->Cancel(message.id, message.params);
}

}  // namespace keel
