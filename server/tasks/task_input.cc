// TaskManager: a task whose work asks for input (invariant 9) — parking it in
// input_required, tasks/update keeping the answers with it, and its work running again once
// every question is answered. Extension dialect only: a legacy task's work never gets here
// (Session::FilterCallResult ends it input_unavailable).
#include <spdlog/spdlog.h>

#include "protocol/error_codes.h"
#include "server/input/input_round.h"
#include "server/tasks/task_cancel_text.h"
#include "server/tasks/task_manager.h"
#include "server/tasks/task_store_job.h"
#include "server/tasks/task_wire.h"

namespace keel {

void TaskManager::Park(const std::string& task_id, Json asked) {
  Live& live = live_.at(task_id);
  TaskRecord& task = live.record;
  task.status = TaskStatus::kInputRequired;
  task.input_requests = std::move(asked["inputRequests"]);
  // A key asked again wants a new answer: the old one goes.
  if (task.input_answers.is_object()) {
    for (const auto& [key, request] : task.input_requests.items()) task.input_answers.erase(key);
  }
  task.updated_ms = now_ms_();
  live.parked = true;
  const TaskRecord decided = task;
  ++live.writes_pending;
  Store<bool>(
      [decided](TaskStore& store) {
        if (store.Park(decided.task_id, decided.input_requests, decided.input_answers,
                       decided.updated_ms)) {
          return true;
        }
        // Cancelled meanwhile by another keel on the file: its work has stopped, asking.
        store.RecordAfterCancel(decided.task_id, CancelPhase::kObserved, kCancelWhileWaiting,
                                Json(), decided.updated_ms);
        return false;
      },
      [this, task_id](bool parked, std::string error) {
        auto it = live_.find(task_id);
        if (it == live_.end()) return;  // cannot happen: erased only with no write pending
        Live& live = it->second;
        --live.writes_pending;
        if (!error.empty()) {
          spdlog::error("task {}: could not write that it waits for input: {}", task_id, error);
        } else if (parked) {
          spdlog::info("task {} ({}) waits for input", task_id, live.record.tool);
        }
        live.terminal_written = true;  // its state for now is written: the loop may forget it
        EraseIfDone(task_id);
      });
}

void TaskManager::Update(const ReplyTo& to, const UpdateTaskRequest& request) {
  Track(to);
  const int64_t now = now_ms_();
  TaskStore::InputOwner resumer;
  resumer.owner = options_.owner;
  resumer.pid = options_.pid;
  resumer.lease_until_ms = now + options_.lease_ms;
  resumer.max_answer_bytes = kMaxCarriedAnswerBytes;
  // Keys not outstanding (or a task not waiting) are ignored, as the extension says; the
  // task must still exist.
  Store<TaskStore::Answered>(
      [task_id = request.task_id, responses = request.input_responses, resumer,
       now](TaskStore& store) { return store.AnswerInput(task_id, responses, resumer, now); },
      [this, to, task_id = request.task_id](TaskStore::Answered answered, std::string error) {
        if (AnswerIfUnavailable(to, task_id, answered.task, error, "update")) return;
        if (answered.outcome == TaskStore::AnswerOutcome::kTooLarge) {
          return AnswerError(to, kInvalidParams,
                             "Failed to update task: its answers would exceed " +
                                 std::to_string(kMaxCarriedAnswerBytes) +
                                 " bytes; none of these was kept",
                             Json{{"taskId", task_id}});
        }
        AnswerResult(to, Json::object(), TaskDialect::kExtension);
        if (answered.outcome == TaskStore::AnswerOutcome::kResumed) Resume(*answered.task);
      });
}

void TaskManager::Resume(const TaskRecord& task) {
  if (auto it = live_.find(task.task_id); it != live_.end()) {
    it->second.resume = task;  // its parked run is still tracked: EraseIfDone resumes it
    return;
  }
  Live& live = live_[task.task_id];
  live.record = task;
  spdlog::info("task {} ({}) has its answers: its work runs again", task.task_id, task.tool);
  const std::optional<uint64_t> generation = start_(task, Json());
  if (generation) {
    live.generation = *generation;
    return;
  }
  FailUnstarted(task.task_id);
}

}  // namespace keel
