// TaskManager: creating a task for a task-augmented tools/call (invariant 1: the answer goes
// out after the row is committed, and the work starts after the answer).
#include <algorithm>

#include <spdlog/spdlog.h>

#include "protocol/error_codes.h"
#include "protocol/json_rpc.h"
#include "protocol/tool_result.h"
#include "server/tasks/task_manager.h"
#include "server/tasks/task_store_job.h"
#include "server/tasks/task_wire.h"
#include "server/transport/peer_id_key.h"

namespace keel {
namespace {

// The row of a new task, owned by this process with a fresh lease; the requested ttl is
// clamped to the maximum (when there is one).
TaskRecord NewTaskRecord(TaskManager::CreateRequest& request, const TaskOptions& options,
                         int64_t now) {
  TaskRecord task;
  task.task_id = NewTaskId();
  task.tool = request.tool;
  task.created_ms = now;
  task.updated_ms = now;
  task.ttl_ms = request.requested_ttl_ms;
  if (options.max_ttl_ms > 0) {
    task.ttl_ms = std::min(task.ttl_ms.value_or(options.max_ttl_ms), options.max_ttl_ms);
  }
  task.poll_interval_ms = options.poll_interval_ms;
  task.request = std::move(request.params);
  task.idempotency_key = request.idempotency_key;
  task.fingerprint = request.fingerprint;
  task.owner = options.owner;
  task.owner_pid = options.pid;
  task.lease_until_ms = now + options.lease_ms;
  return task;
}

}  // namespace

void TaskManager::Create(CreateRequest request) {
  const ReplyTo to{request.id, request.exchange, request.peer};
  Track(to);
  const int64_t now = now_ms_();
  TaskRecord task = NewTaskRecord(request, options_, now);
  ++creating_;
  auto write = [task, now](TaskStore& store) { return store.Create(task, now); };
  auto written = [this, to, token = std::move(request.progress_token), dialect = request.dialect](
                     TaskStore::Created created, std::string error) mutable {
    --creating_;
    OnCreated(to, std::move(token), created, error, dialect);
  };
  Store<TaskStore::Created>(std::move(write), std::move(written));
}

void TaskManager::OnCreated(const ReplyTo& to, Json progress_token,
                            const TaskStore::Created& created, const std::string& error,
                            TaskDialect dialect) {
  if (!error.empty()) {
    spdlog::error("could not create a task: {}", error);
    return AnswerError(
        to, kInternalError,
        "Could not create the task: the task store failed (" + error + "); nothing was started");
  }
  const TaskRecord& task = created.task;
  if (created.outcome == TaskStore::CreateOutcome::kKeyMismatch) {
    return AnswerError(to, kInvalidParams,
                       "Idempotency key '" + task.idempotency_key + "' was already used for task " +
                           task.task_id + " with other arguments; nothing was started",
                       Json{{"type", "idempotency_key_mismatch"}, {"taskId", task.task_id}});
  }
  if (created.outcome == TaskStore::CreateOutcome::kExisting) {
    // Idempotent creation: the task this key made before, whatever its state.
    if (dialect == TaskDialect::kExtension) {
      Json result = ExtensionCreateTaskResult(task);
      result["_meta"] = {{"dev.keel/existing-task", true}};
      return AnswerResult(to, result, dialect);
    }
    Json meta = RelatedTaskMeta(task.task_id);
    meta["dev.keel/existing-task"] = true;
    return AnswerResult(to, Json{{"task", TaskJson(task)}, {"_meta", std::move(meta)}});
  }
  if (const Pending* pending = PendingOf(to); pending != nullptr && pending->cancelled) {
    return CancelUnannounced(to, task.task_id);
  }
  StartWork(to, task, std::move(progress_token), dialect);
}

void TaskManager::CancelUnannounced(const ReplyTo& to, const std::string& task_id) {
  // The client cancelled the tools/call before it was answered: it will never learn the
  // task id, so the task is cancelled without running.
  pending_.erase(PeerIdKey(to.peer, to.id));
  Store<bool>(
      [task_id, now = now_ms_()](TaskStore& store) {
        constexpr const char* kWhy =
            "Cancelled: the tools/call that created this task was cancelled before "
            "keel answered it (cancel_observed): the work never started.";
        return store.Cancel(task_id, kWhy, now) &&
               store.RecordAfterCancel(task_id, CancelPhase::kObserved, kWhy, Json(), now);
      },
      [](bool, std::string) {});
}

void TaskManager::StartWork(const ReplyTo& to, const TaskRecord& task, Json progress_token,
                            TaskDialect dialect) {
  const std::string task_id = task.task_id;
  Live& live = live_[task_id];
  live.record = task;
  if (dialect == TaskDialect::kExtension) {
    AnswerResult(to, ExtensionCreateTaskResult(task), dialect);
  } else {
    AnswerResult(to, Json{{"task", TaskJson(task)}, {"_meta", RelatedTaskMeta(task_id)}});
  }
  const std::optional<uint64_t> generation = start_(task, std::move(progress_token));
  if (generation) {
    live.generation = *generation;
    return;
  }
  FailUnstarted(task_id);
}

void TaskManager::FailUnstarted(const std::string& task_id) {
  Live& live = live_.at(task_id);
  // Shutdown began while the row was being written: the work never starts.
  const std::string text =
      "keel was shutting down when this task's work was to start; it never started, and "
      "calling again is safe.";
  live.record.status = TaskStatus::kFailed;
  live.record.status_message = text;
  live.record.result = ErrorResult(text, Json{{"type", "interrupted"},
                                              {"reason", "server_shutdown"},
                                              {"effect", "did_not_happen"},
                                              {"taskId", task_id}});
  live.work_ended = true;
  Persist(task_id);
}

TaskRecord TaskManager::Promote(PromoteRequest request) {
  const ReplyTo to{request.id, request.exchange, request.peer};
  Track(to);
  const int64_t now = now_ms_();
  CreateRequest create;
  create.tool = std::move(request.tool);
  create.params = std::move(request.params);
  create.requested_ttl_ms = request.requested_ttl_ms;
  TaskRecord task = NewTaskRecord(create, options_, now);
  task.task_id = request.task_id;
  task.input_answers = std::move(request.input_answers);
  Live& live = live_[task.task_id];
  live.record = task;
  live.generation = request.generation;
  ++live.writes_pending;  // the creation: nothing is written of it before
  auto write = [task, now](TaskStore& store) { return store.Create(task, now); };
  auto written = [this, to, task_id = task.task_id](TaskStore::Created created, std::string error) {
    OnPromoted(to, task_id, created, error);
  };
  Store<TaskStore::Created>(std::move(write), std::move(written));
  return task;
}

void TaskManager::OnPromoted(const ReplyTo& to, const std::string& task_id,
                             const TaskStore::Created& created, const std::string& error) {
  auto it = live_.find(task_id);
  if (it == live_.end()) return;  // cannot happen: erased only with no write pending
  Live& live = it->second;
  --live.writes_pending;
  if (!error.empty()) {
    // Not durable, so not a task: the call ends with an error and its work is stopped.
    spdlog::error("could not make call {} a task: {}", IdKey(to.id), error);
    AnswerError(to, kInternalError,
                "The call ran past --task-after and keel could not make it a task: the task "
                "store failed (" +
                    error + "); its work was cancelled");
    live.record.status = TaskStatus::kCancelled;
    live.terminal_written = true;
    cancel_work_(live.generation);
    return EraseIfDone(task_id);
  }
  if (const Pending* pending = PendingOf(to); pending != nullptr && pending->cancelled) {
    // The client gave the call up before keel answered: nobody will ever learn the task
    // id, so the task is cancelled (its answer, now untracked, goes nowhere).
    pending_.erase(PeerIdKey(to.peer, to.id));
    if (!IsTerminal(live.record.status))
      return CancelLive(to, live, now_ms_(), TaskDialect::kExtension);
    return EraseIfDone(task_id);
  }
  AnswerResult(to, ExtensionCreateTaskResult(created.task), TaskDialect::kExtension);
  EraseIfDone(task_id);
}

}  // namespace keel
