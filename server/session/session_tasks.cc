// The Session's side of durable tasks: admitting a task-augmented tools/call (a legacy
// params.task, or a modern call the server makes a task), starting the work of a created
// task, and a running modern call becoming a task (--task-after, or its tool asks to). tasks/* go
// straight to the TaskManager (Session::Serve).
#include <algorithm>
#include <chrono>
#include <cstdint>

#include <spdlog/spdlog.h>

#include "ledger/fingerprint.h"
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

}  // namespace

void Session::CreateTask(const RequestContext& call_request, Tool& tool, CallToolRequest call) {
  const Json& id = call_request.id;
  const ToolSpec& spec = tool.spec();
  // A modern call has no params.task: the server decided, with the catalog's ttl.
  const bool modern = IsModern(call_request.wire);
  std::optional<int64_t> ttl;
  if (call.task) {
    const Decoded<TaskMetadata> task = DecodeTaskMetadata(*call.task);
    if (!task.ok()) return ReplyError(call_request, task.error());
    if (task.value().ttl_ms) ttl = std::clamp(*task.value().ttl_ms, kMinTtlMs, kMaxTtlMs);
  }
  Json& arguments = call.arguments;
  Json& meta = call.meta;
  // A task-augmented call expects a CreateTaskResult: problems found before the task
  // exists are JSON-RPC errors, so no task is made for a call that cannot run.
  std::variant<Refusal, AdmittedCall> admission =
      Admit(AdmitAs::kTask, tool, arguments, meta, AdmissionNow());
  if (const Refusal* refusal = std::get_if<Refusal>(&admission)) {
    return SendRefusal(call_request, spec, *refusal);
  }
  const std::string& key = std::get<AdmittedCall>(admission).identity.idempotency_key;
  if (!ttl && spec.result_ttl_ms) ttl = *spec.result_ttl_ms;  // the catalog's resultTtlMs
  TaskManager::CreateRequest request;
  request.id = id;
  request.exchange = call_request.exchange;
  request.peer = call_request.peer;
  request.tool = spec.name;
  request.fingerprint =
      key.empty() ? std::string()
                  : Fingerprint(spec.name, IntentArguments(arguments, spec.key_components));
  request.params = {{"name", spec.name}, {"arguments", std::move(arguments)}};
  if (!meta.is_null()) request.params["_meta"] = std::move(meta);
  if (modern) MarkExtensionRequest(request.params);
  request.requested_ttl_ms = ttl;
  request.idempotency_key = key;
  // The extension sends no progress for tasks.
  if (!modern) request.progress_token = std::move(call.progress_token);
  request.dialect = modern ? TaskDialect::kExtension : TaskDialect::kLegacy;
  tasks_->Create(std::move(request));
}

std::optional<uint64_t> Session::StartTaskWork(const TaskRecord& task, Json progress_token) {
  if (shutting_down_) return std::nullopt;
  Tool* tool = tools_.Find(task.tool);  // checked when the task was created
  ToolPolicy policy = EffectivePolicy(*policy_, tool->spec(), options_.shadow);
  CallLimits limits{Millis(policy.timeouts.idle_ms), kNoMaximum, policy.timeouts.source};
  if (task.ttl_ms) limits.max = Millis(*task.ttl_ms);
  // The task's identity: its key is the one admission computed when the task was created.
  CallIdentity identity;
  identity.tool_name = task.tool;
  identity.tool = tool;
  identity.idempotency_key = task.idempotency_key;
  identity.task_id = task.task_id;
  // An extension task's work sends no log messages (the coordinator's invariant 9).
  identity.modern = IsExtensionTask(task);
  // A resumed task's work reads the answers kept with it (task_manager.h, invariant 9).
  if (identity.modern && task.input_answers.is_object()) {
    InputRound answered;
    answered.answers = task.input_answers;
    identity.input = std::make_shared<const InputRound>(std::move(answered));
  }
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

void Session::PromoteCall(uint64_t generation, Json params) {
  const CallIdentity* call = coordinator_.UnsettledIdentity(generation);
  if (call == nullptr || !call->task_id.empty() || shutting_down_) return;
  if (tasks_->AtLimit()) {
    spdlog::info("call {} ({}) runs past --task-after but stays a call: --max-tasks reached",
                 call->correlation_id, call->tool_name);
    return;
  }
  const ToolSpec& spec = call->tool->spec();
  TaskManager::PromoteRequest request;
  request.id = call->request_id;
  request.exchange = call->exchange;
  request.peer = call->peer;
  request.task_id = NewTaskId();
  request.tool = spec.name;
  request.params = std::move(params);
  request.requested_ttl_ms = spec.result_ttl_ms;
  request.generation = generation;
  if (call->input) request.input_answers = call->input->answers;  // the call's, kept
  const Json request_id = request.id;
  const PeerId peer = request.peer;
  const TaskRecord task = tasks_->Promote(std::move(request));
  // Past --task-after, or its tool asked (ToolContext::BecomeTask).
  spdlog::info("call {} ({}) is now task {}", call->correlation_id, call->tool_name, task.task_id);
  const Duration max = task.ttl_ms ? Millis(*task.ttl_ms) : kNoMaximum;
  coordinator_.PromoteToTask(
      request_id, task.task_id, max,
      [this, task_id = task.task_id](CallState state, CallAnswer answer) {
        tasks_->OnSettled(task_id, state, std::move(answer));
      },
      peer);
}

}  // namespace keel
