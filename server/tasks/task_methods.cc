// TaskManager: the tasks/get, tasks/list, tasks/result and tasks/cancel methods (TASK-1,
// TASK-2, TASKX-1); tasks/update is in task_input.cc. Live tasks are answered from the
// loop's view, others from the task store; each answer in the dialect of the request
// (task_wire.h).
#include <cstdint>

#include <spdlog/spdlog.h>

#include "protocol/error_codes.h"
#include "protocol/json_rpc.h"
#include "server/tasks/task_cancel_text.h"
#include "server/tasks/task_manager.h"
#include "server/tasks/task_store_job.h"
#include "server/tasks/task_wire.h"

namespace keel {
namespace {

std::string AlreadyTerminal(TaskStatus status) {
  return "Cannot cancel task: already in terminal status '" + std::string(TaskStatusName(status)) +
         "'";
}

}  // namespace

bool TaskManager::AnswerIfUnavailable(const ReplyTo& to, const std::string& task_id,
                                      const std::optional<TaskRecord>& task,
                                      const std::string& error, const char* action) {
  const std::string failed = std::string("Failed to ") + action + " task: ";
  if (!error.empty()) {
    AnswerError(to, kInternalError, failed + error, Json{{"taskId", task_id}});
  } else if (!task) {
    AnswerError(to, kInvalidParams, failed + "Task not found", Json{{"taskId", task_id}});
  } else if (task->Expired(now_ms_())) {
    AnswerError(to, kInvalidParams, failed + "Task has expired", Json{{"taskId", task_id}});
  } else {
    return false;
  }
  return true;
}

void TaskManager::Get(const ReplyTo& to, const GetTaskRequest& request, TaskDialect dialect) {
  Track(to);
  Store<std::optional<TaskRecord>>(
      [task_id = request.task_id](TaskStore& store) { return store.Get(task_id); },
      [this, to, task_id = request.task_id, dialect](std::optional<TaskRecord> task,
                                                     std::string error) {
        if (AnswerIfUnavailable(to, task_id, task, error, "retrieve")) return;
        if (dialect == TaskDialect::kExtension) {
          return AnswerResult(to, ExtensionDetailedTask(*task), dialect);
        }
        AnswerResult(to, WithRelatedTask(TaskJson(*task), task_id));
      });
}

void TaskManager::List(const ReplyTo& to, const ListTasksRequest& request, const WireForm& wire) {
  Track(to);
  Store<TaskStore::Page>(
      [after = request.after, limit = options_.page_size, now = now_ms_()](TaskStore& store) {
        return store.List(after, limit, now);
      },
      [this, to, wire](TaskStore::Page page, std::string error) {
        if (!error.empty()) {
          return AnswerError(to, kInternalError, "Failed to list tasks: " + error);
        }
        ListTasksResult result;
        result.tasks.reserve(page.tasks.size());
        for (const TaskRecord& task : page.tasks) result.tasks.push_back(TaskJson(task));
        result.next_after = page.next_after;
        AnswerResult(to, ToWire(wire, result));
      });
}

void TaskManager::AnswerOutcome(const ReplyTo& to, const TaskRecord& task) {
  if (task.status == TaskStatus::kCancelled) {
    Json data = {{"taskId", task.task_id},
                 {"status", "cancelled"},
                 {"cancelPhase", std::string(CancelPhaseName(task.cancel_phase))}};
    if (!task.status_message.empty()) data["statusMessage"] = task.status_message;
    if (!task.late_outcome.is_null()) data["lateOutcome"] = task.late_outcome;
    return AnswerError(to, kInternalError,
                       "Task " + task.task_id + " was cancelled: it has no result", data);
  }
  if (task.error.is_object()) {
    Json data = task.error.value("data", Json::object());
    if (data.is_object()) data["taskId"] = task.task_id;
    return AnswerError(to, task.error.value("code", kInternalError),
                       task.error.value("message", std::string("Task failed")), data);
  }
  if (task.result.is_object()) {
    return AnswerResult(to, WithRelatedTask(task.result, task.task_id));
  }
  AnswerError(to, kInternalError, "Task " + task.task_id + " has no result stored",
              Json{{"taskId", task.task_id}});
}

void TaskManager::Result(const ReplyTo& to, const TaskResultRequest& request) {
  const std::string& task_id = request.task_id;
  Track(to);
  if (auto it = live_.find(task_id); it != live_.end()) {
    Live& live = it->second;
    if (!IsTerminal(live.record.status) || !live.terminal_written) {
      live.waiters.push_back(to);  // answered when the terminal state is written
      return;
    }
    return AnswerOutcome(to, live.record);
  }
  Store<std::optional<TaskRecord>>(
      [task_id](TaskStore& store) { return store.Get(task_id); },
      [this, to, task_id](std::optional<TaskRecord> task, std::string error) {
        if (AnswerIfUnavailable(to, task_id, task, error, "retrieve")) return;
        if (IsTerminal(task->status)) return AnswerOutcome(to, *task);
        if (auto it = live_.find(task_id); it != live_.end()) {
          it->second.waiters.push_back(to);  // created here meanwhile
          return;
        }
        AnswerError(
            to, kInternalError,
            "Task " + task_id + " is run by another keel process (pid " +
                std::to_string(task->owner_pid) +
                ") on the same database; poll tasks/get until it is terminal",
            Json{{"taskId", task_id}, {"status", std::string(TaskStatusName(task->status))}});
      });
}

void TaskManager::Cancel(const ReplyTo& to, const CancelTaskRequest& request, TaskDialect dialect) {
  Track(to);
  const int64_t now = now_ms_();
  if (auto it = live_.find(request.task_id); it != live_.end()) {
    return CancelLive(to, it->second, now, dialect);
  }
  CancelStored(to, request.task_id, now, dialect);
}

void TaskManager::CancelLive(const ReplyTo& to, Live& live, int64_t now, TaskDialect dialect) {
  if (IsTerminal(live.record.status)) {
    if (dialect == TaskDialect::kExtension) {  // invariant 7: the same acknowledgement
      return AnswerResult(to, Json::object(), dialect);
    }
    return AnswerError(to, kInvalidParams, AlreadyTerminal(live.record.status),
                       Json{{"taskId", live.record.task_id}});
  }
  // Decided here (invariant 2): whatever the work does next, the task is cancelled.
  live.record.status = TaskStatus::kCancelled;
  live.record.cancel_phase = CancelPhase::kRequested;
  live.record.status_message = kCancelRequested;
  live.record.updated_ms = now;
  const TaskRecord decided = live.record;
  ++live.writes_pending;
  cancel_work_(live.generation);
  Store<bool>(
      [task_id = decided.task_id, now](TaskStore& store) {
        return store.Cancel(task_id, kCancelRequested, now);
      },
      [this, to, decided, dialect](bool written, std::string error) {
        auto it = live_.find(decided.task_id);
        if (it == live_.end()) return;  // cannot happen: erased only with no write pending
        Live& live = it->second;
        --live.writes_pending;
        if (!error.empty() || !written) {
          spdlog::error("task {}: could not write its cancellation ({})", decided.task_id,
                        error.empty() ? "the row is gone or terminal" : error);
        }
        live.terminal_written = true;
        if (dialect == TaskDialect::kExtension) {
          AnswerResult(to, Json::object(), dialect);
        } else {
          AnswerResult(to, WithRelatedTask(TaskJson(decided), decided.task_id));
        }
        NotifyStatus(decided);
        for (const ReplyTo& waiter : live.waiters) AnswerOutcome(waiter, decided);
        live.waiters.clear();
        // Parked, its worker gone already: nothing else will say the work stopped.
        if (live.parked && live.work_ended && live.record.cancel_phase == CancelPhase::kRequested) {
          return AfterCancel(decided.task_id, WorkEnd::kParked, Json());
        }
        EraseIfDone(decided.task_id);
      });
}

void TaskManager::WatchForeignCancels() {
  if (watching_) return;
  bool running = false;
  for (const auto& [task_id, live] : live_) {
    running = running || (!live.work_ended && !IsTerminal(live.record.status));
  }
  if (!running) return;
  watching_ = true;
  Store<std::vector<std::string>>(
      [owner = options_.owner](TaskStore& store) { return store.CancelRequestedOf(owner); },
      [this](std::vector<std::string> cancelled, std::string error) {
        watching_ = false;
        if (!error.empty()) {
          spdlog::warn("tasks: could not look for tasks cancelled elsewhere: {}", error);
          return;
        }
        for (const std::string& task_id : cancelled) CancelledElsewhere(task_id);
      });
}

void TaskManager::CancelledElsewhere(const std::string& task_id) {
  auto it = live_.find(task_id);
  if (it == live_.end() || IsTerminal(it->second.record.status)) return;
  Live& live = it->second;
  spdlog::info("task {} ({}) was cancelled through another keel: its work is cancelled here",
               task_id, live.record.tool);
  live.record.status = TaskStatus::kCancelled;
  live.record.cancel_phase = CancelPhase::kRequested;
  live.record.status_message = kCancelRequested;
  live.record.updated_ms = now_ms_();
  live.terminal_written = true;  // by the keel that answered the tasks/cancel
  NotifyStatus(live.record);
  for (const ReplyTo& waiter : live.waiters) AnswerOutcome(waiter, live.record);
  live.waiters.clear();
  // Parked, its worker gone already: nothing else will say the work stopped.
  if (live.parked && live.work_ended) return AfterCancel(task_id, WorkEnd::kParked, Json());
  cancel_work_(live.generation);  // may end the work at once (OnWorkEnded): `live` is stale
  EraseIfDone(task_id);
}

void TaskManager::CancelStored(const ReplyTo& to, const std::string& task_id, int64_t now,
                               TaskDialect dialect) {
  // Not run here: a task of an earlier (or another) keel process, or a finished one.
  struct Outcome {
    std::optional<TaskRecord> task;
    bool cancelled = false;
  };
  Store<Outcome>(
      [task_id, now](TaskStore& store) {
        Outcome outcome;
        outcome.task = store.Get(task_id);
        if (!outcome.task || outcome.task->Expired(now) || IsTerminal(outcome.task->status)) {
          return outcome;
        }
        const bool parked = outcome.task->status == TaskStatus::kInputRequired;
        outcome.cancelled = store.Cancel(task_id, kCancelRequested, now);
        // Invariant 9: a parked task runs nowhere, so its work is stopped already.
        if (outcome.cancelled && parked) {
          store.RecordAfterCancel(task_id, CancelPhase::kObserved, kCancelWhileWaiting, Json(),
                                  now);
        }
        outcome.task = store.Get(task_id);
        return outcome;
      },
      [this, to, task_id, dialect](Outcome outcome, std::string error) {
        if (AnswerIfUnavailable(to, task_id, outcome.task, error, "cancel")) return;
        if (dialect == TaskDialect::kExtension) {  // invariant 7: terminal or not, acknowledged
          AnswerResult(to, Json::object(), dialect);
        } else if (!outcome.cancelled) {
          return AnswerError(to, kInvalidParams, AlreadyTerminal(outcome.task->status),
                             Json{{"taskId", task_id}});
        } else {
          AnswerResult(to, WithRelatedTask(TaskJson(*outcome.task), task_id));
        }
        if (!outcome.cancelled) return;
        NotifyStatus(*outcome.task);
      });
}

}  // namespace keel
