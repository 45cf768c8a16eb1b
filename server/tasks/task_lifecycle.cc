// TaskManager: the fate of a task's work — the coordinator settling it, its worker returning
// — turned into durable task state (invariants 2, 3 and 6), and a live task forgotten once
// nothing about it is pending.
#include <spdlog/spdlog.h>

#include "protocol/error_codes.h"
#include "protocol/tool_result.h"
#include "server/tasks/task_cancel_text.h"
#include "server/tasks/task_manager.h"
#include "server/tasks/task_store_job.h"

namespace keel {
namespace {

// The first text block of a result, short: a failed task's statusMessage.
std::string FirstText(const Json& result) {
  constexpr size_t kMaxMessage = 300;
  const auto content = result.find("content");
  if (content == result.end() || !content->is_array()) return std::string();
  for (const Json& block : *content) {
    const auto text = block.find("text");
    if (text != block.end() && text->is_string()) {
      std::string out = text->get<std::string>();
      if (out.size() > kMaxMessage) out = out.substr(0, kMaxMessage) + "...";
      return out;
    }
  }
  return std::string();
}

}  // namespace

void TaskManager::OnSettled(const std::string& task_id, CallState state, CallAnswer answer) {
  Json* returned = std::get_if<Json>(&answer);
  Json result = returned != nullptr ? std::move(*returned) : Json();
  auto it = live_.find(task_id);
  if (it == live_.end()) return;
  Live& live = it->second;
  if (IsTerminal(live.record.status)) return;  // tasks/cancel came first
  switch (state) {
    case CallState::kCompleted:
      // Invariant 9: only an extension task's work gets here with a question.
      if (IsInputRequired(result)) return Park(task_id, std::move(result));
      live.record.status = TaskStatus::kCompleted;
      break;
    case CallState::kFailed:
    case CallState::kTimedOut:
      live.record.status = TaskStatus::kFailed;
      live.record.status_message = FirstText(result);
      break;
    case CallState::kShutDown:
      // Invariant 6: the task stays working in the file; only the waiters hear of it.
      for (const ReplyTo& waiter : live.waiters) {
        const JsonRpcError* error = std::get_if<JsonRpcError>(&answer);
        AnswerError(waiter, error != nullptr ? error->code : kInternalError,
                    "Server shutting down before task " + task_id +
                        " finished; it stays 'working' until keel restarts and recovers it",
                    Json{{"taskId", task_id}});
      }
      live.waiters.clear();
      return;
    case CallState::kCancelled:
    case CallState::kQueued:
    case CallState::kRunning:
      return;
  }
  live.record.result = std::move(result);
  live.record.updated_ms = now_ms_();
  Persist(task_id);
}

void TaskManager::Persist(const std::string& task_id) {
  Live& live = live_.at(task_id);
  const TaskRecord decided = live.record;
  ++live.writes_pending;
  // Finish is a compare-and-set: if another keel process cancelled the row meanwhile, the
  // outcome is kept as what the work really did after that cancel (TASK-1).
  Store<std::optional<TaskRecord>>(
      [decided](TaskStore& store) -> std::optional<TaskRecord> {
        if (store.Finish(decided.task_id, decided.status, decided.status_message, decided.result,
                         decided.error, decided.updated_ms)) {
          return std::nullopt;
        }
        std::optional<TaskRecord> row = store.Get(decided.task_id);
        if (row && row->status == TaskStatus::kCancelled) {
          const Json late = decided.result.is_null() ? decided.error : decided.result;
          store.RecordAfterCancel(decided.task_id, CancelPhase::kFinishedAfterCancel,
                                  kFinishedAfterCancel, late, decided.updated_ms);
          row = store.Get(decided.task_id);
        }
        return row;
      },
      [this, task_id](std::optional<TaskRecord> row, std::string error) {
        auto it = live_.find(task_id);
        if (it == live_.end()) return;
        Live& live = it->second;
        --live.writes_pending;
        if (!error.empty()) {
          spdlog::error("task {}: could not write its outcome: {}", task_id, error);
        } else if (row) {
          live.record = *row;  // the file's word wins over our decision
        }
        live.terminal_written = true;
        NotifyStatus(live.record);
        for (const ReplyTo& waiter : live.waiters) AnswerOutcome(waiter, live.record);
        live.waiters.clear();
        EraseIfDone(task_id);
      });
}

void TaskManager::OnWorkEnded(const std::string& task_id, WorkEnd how, Json result) {
  auto it = live_.find(task_id);
  if (it == live_.end()) return;
  Live& live = it->second;
  live.work_ended = true;
  if (live.parked) how = WorkEnd::kParked;  // it returned its question
  if (live.record.status == TaskStatus::kCancelled &&
      live.record.cancel_phase == CancelPhase::kRequested) {
    return AfterCancel(task_id, how, std::move(result));
  }
  EraseIfDone(task_id);
}

void TaskManager::AfterCancel(const std::string& task_id, WorkEnd how, Json result) {
  Live& live = live_.at(task_id);
  TaskRecord& task = live.record;
  switch (how) {
    case WorkEnd::kNeverStarted:
      task.cancel_phase = CancelPhase::kObserved;
      task.status_message = kCancelNeverStarted;
      break;
    case WorkEnd::kStoppedAtCheckpoint:
      task.cancel_phase = CancelPhase::kObserved;
      task.status_message = kCancelObserved;
      break;
    case WorkEnd::kParked:
      task.cancel_phase = CancelPhase::kObserved;
      task.status_message = kCancelWhileWaiting;
      break;
    case WorkEnd::kReturned:
      task.cancel_phase = CancelPhase::kFinishedAfterCancel;
      task.status_message = kFinishedAfterCancel;
      task.late_outcome = std::move(result);
      spdlog::info("task {} ({}) ran to its end after tasks/cancel; its outcome is recorded",
                   task_id, task.tool);
      break;
  }
  task.updated_ms = now_ms_();
  const TaskRecord decided = task;
  ++live.writes_pending;
  Store<bool>(
      [decided](TaskStore& store) {
        return store.RecordAfterCancel(decided.task_id, decided.cancel_phase,
                                       decided.status_message, decided.late_outcome,
                                       decided.updated_ms);
      },
      [this, decided](bool, std::string error) {
        if (!error.empty()) {
          spdlog::error("task {}: could not write its cancel phase: {}", decided.task_id, error);
        }
        auto it = live_.find(decided.task_id);
        if (it == live_.end()) return;
        --it->second.writes_pending;
        NotifyStatus(decided);
        EraseIfDone(decided.task_id);
      });
}

void TaskManager::EraseIfDone(const std::string& task_id) {
  auto it = live_.find(task_id);
  if (it == live_.end()) return;
  const Live& live = it->second;
  if (live.work_ended && live.terminal_written && live.writes_pending == 0 &&
      live.waiters.empty()) {
    std::optional<TaskRecord> resume = std::move(it->second.resume);
    live_.erase(it);
    if (resume) Resume(*resume);  // invariant 9: answered while this run was tracked
  }
}

}  // namespace keel
