// The Session's side of durable tasks: admitting a task-augmented tools/call, starting
// the work of a created task, and routing tasks/* to the TaskManager.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>

#include <spdlog/spdlog.h>

#include "ledger/fingerprint.h"
#include "protocol/error_codes.h"
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

void Session::CreateTask(const Json& id, Tool& tool, Json arguments, Json meta, Json progress_token,
                         const Json& task) {
  const ToolSpec& spec = tool.spec();
  if (!task.is_object()) {
    return ReplyError(id, kInvalidParams,
                      "Invalid params: task must be an object ({\"ttl\"?: ms})");
  }
  std::optional<int64_t> ttl;
  if (const auto value = task.find("ttl"); value != task.end() && !value->is_null()) {
    const bool whole =
        value->is_number_unsigned() || (value->is_number_integer() && value->get<int64_t>() >= 0);
    if (!whole) {
      return ReplyError(id, kInvalidParams,
                        "Invalid params: task.ttl must be a non-negative integer (milliseconds) "
                        "or null");
    }
    ttl = std::clamp(SaturatedInt64(*value), kMinTtlMs, kMaxTtlMs);
  }
  // A task-augmented call expects a CreateTaskResult: problems found before the task
  // exists are JSON-RPC errors, so no task is made for a call that cannot run.
  std::variant<Refusal, AdmittedCall> admission =
      Admit(AdmitAs::kTask, tool, arguments, meta, AdmissionNow());
  if (const Refusal* refusal = std::get_if<Refusal>(&admission)) {
    return SendRefusal(id, spec, *refusal);
  }
  const std::string& key = std::get<AdmittedCall>(admission).identity.idempotency_key;
  if (!ttl && spec.result_ttl_ms) ttl = *spec.result_ttl_ms;  // the catalog's resultTtlMs
  TaskManager::CreateRequest request;
  request.id = id;
  request.tool = spec.name;
  request.fingerprint =
      key.empty() ? std::string()
                  : Fingerprint(spec.name, IntentArguments(arguments, spec.key_components));
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
  // The task's identity: its key is the one admission computed when the task was created.
  CallIdentity identity;
  identity.tool_name = task.tool;
  identity.tool = tool;
  identity.idempotency_key = task.idempotency_key;
  identity.task_id = task.task_id;
  RequestCoordinator::Admitted work = coordinator_.BeginTask(
      std::move(identity), std::move(progress_token), RelatedTaskMeta(task.task_id), limits,
      [this, task_id = task.task_id](CallState state, CallAnswer answer) {
        tasks_->OnSettled(task_id, state, std::move(answer));
      });
  const uint64_t generation = work.generation;
  HandToPool(std::move(work), std::move(policy), limits.max,
             task.request.value("arguments", Json::object()), task.request.value("_meta", Json()));
  return generation;
}

void Session::HandleTaskMethod(const Message& message) {
  const std::string& method = message.method;
  if (method == "tasks/get") return tasks_->Get(message.id, message.params);
  if (method == "tasks/result") return tasks_->Result(message.id, message.params);
  if (method == "tasks/list") return tasks_->List(message.id, message.params);
  if (method == "tasks/cancel") return tasks_->Cancel(message.id, message.params);
}

}  // namespace keel
