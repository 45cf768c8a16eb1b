#include "server/tasks/task_manager.h"

#include <cstdint>
#include <limits>

#include <spdlog/spdlog.h>

#include "protocol/cursor.h"
#include "protocol/error_codes.h"
#include "protocol/json_rpc.h"
#include "server/tasks/task_wire.h"
#include "server/catalog/tool.h"

namespace keel {
namespace {

constexpr const char* kCancelRequested =
    "Cancelled by tasks/cancel (cancel_requested): the work was asked to stop and has not "
    "reached a checkpoint yet.";
constexpr const char* kCancelObserved =
    "Cancelled by tasks/cancel (cancel_observed): the work stopped at a checkpoint.";
constexpr const char* kCancelNeverStarted =
    "Cancelled by tasks/cancel (cancel_observed): the work never started.";
constexpr const char* kFinishedAfterCancel =
    "Cancelled by tasks/cancel, but the work did not stop and ran to its end "
    "(finished_after_cancel): whatever it did has happened; tasks/result reports it in "
    "error.data.lateOutcome.";

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

TaskManager::TaskManager(EventLoop& loop, OutputSink& sink, TaskStoreThread& store,
                         TaskOptions options, std::function<int64_t()> now_ms)
    : loop_(loop), sink_(sink), store_(store), options_(std::move(options)),
      now_ms_(std::move(now_ms)) {}

template <typename T>
void TaskManager::Store(std::function<T(TaskStore&)> work,
                        std::function<void(T, std::string error)> done) {
  ++jobs_in_flight_;
  // The job refers to the loop only: it may run after this manager is gone (at exit the
  // store thread drains), and then its posted answer is simply never run.
  store_.Post([&loop = loop_, this, work = std::move(work),
               done = std::move(done)](TaskStore& store) mutable {
    T value{};
    std::string error;
    try {
      value = work(store);
    } catch (const std::exception& e) {
      error = e.what();
      if (error.empty()) error = "unknown SQLite error";
    }
    loop.Post([this, value = std::move(value), error = std::move(error),
               done = std::move(done)]() mutable {
      done(std::move(value), std::move(error));
      JobDone();
    });
  });
}

void TaskManager::JobDone() {
  --jobs_in_flight_;
  if (jobs_in_flight_ == 0 && on_idle_) on_idle_();
}

void TaskManager::Track(const Json& id) { pending_[IdKey(id)] = false; }

bool TaskManager::InFlight(const Json& id) const { return pending_.count(IdKey(id)) != 0; }

bool TaskManager::CancelRequest(const Json& id) {
  if (!IsValidId(id)) return false;
  auto it = pending_.find(IdKey(id));
  if (it == pending_.end()) return false;
  it->second = true;  // its answer is dropped when it comes
  return true;
}

void TaskManager::Answer(const Json& id, const std::string& line) {
  auto it = pending_.find(IdKey(id));
  if (it == pending_.end()) return;  // answered already
  const bool cancelled = it->second;
  pending_.erase(it);
  if (!cancelled) sink_.SendResponse(line);
}

void TaskManager::AnswerResult(const Json& id, const Json& result) {
  Answer(id, EncodeResult(id, result));
}

void TaskManager::AnswerError(const Json& id, int code, const std::string& message,
                              const Json& data) {
  Answer(id, EncodeError(id, code, message, data));
}

void TaskManager::NotifyStatus(const TaskRecord& task) {
  if (!client_ready_) return;
  sink_.SendResponse(EncodeNotification("notifications/tasks/status", TaskJson(task)));
}

void TaskManager::Create(CreateRequest request) {
  Track(request.id);
  const int64_t now = now_ms_();
  TaskRecord task;
  task.task_id = NewTaskId();
  task.tool = request.tool;
  task.created_ms = now;
  task.updated_ms = now;
  task.ttl_ms = request.requested_ttl_ms;
  if (options_.max_ttl_ms > 0) {
    task.ttl_ms = std::min(task.ttl_ms.value_or(options_.max_ttl_ms), options_.max_ttl_ms);
  }
  task.poll_interval_ms = options_.poll_interval_ms;
  task.request = std::move(request.params);
  task.idempotency_key = request.idempotency_key;
  task.fingerprint = request.fingerprint;
  task.owner = options_.owner;
  task.owner_pid = options_.pid;
  task.lease_until_ms = now + options_.lease_ms;
  ++creating_;
  Store<TaskStore::Created>(
      [task, now](TaskStore& store) { return store.Create(task, now); },
      [this, id = request.id, token = std::move(request.progress_token)](
          TaskStore::Created created, std::string error) mutable {
        --creating_;
        if (!error.empty()) {
          spdlog::error("could not create a task: {}", error);
          return AnswerError(id, kInternalError,
                             "Could not create the task: the task store failed (" + error +
                                 "); nothing was started");
        }
        TaskRecord& task = created.task;
        if (created.outcome == TaskStore::CreateOutcome::kKeyMismatch) {
          return AnswerError(
              id, kInvalidParams,
              "Idempotency key '" + task.idempotency_key + "' was already used for task " +
                  task.task_id + " with other arguments; nothing was started",
              Json{{"type", "idempotency_key_mismatch"}, {"taskId", task.task_id}});
        }
        if (created.outcome == TaskStore::CreateOutcome::kExisting) {
          // Idempotent creation: the task this key made before, whatever its state.
          Json meta = RelatedTaskMeta(task.task_id);
          meta["dev.keel/existing-task"] = true;
          return AnswerResult(id, Json{{"task", TaskJson(task)}, {"_meta", std::move(meta)}});
        }
        if (pending_.count(IdKey(id)) != 0 && pending_[IdKey(id)]) {
          // The client cancelled the tools/call before it was answered: it will never
          // learn the task id, so the task is cancelled without running.
          pending_.erase(IdKey(id));
          const std::string task_id = task.task_id;
          Store<bool>(
              [task_id, now = now_ms_()](TaskStore& store) {
                constexpr const char* kWhy =
                    "Cancelled: the tools/call that created this task was cancelled before "
                    "keel answered it (cancel_observed): the work never started.";
                return store.Cancel(task_id, kWhy, now) &&
                       store.RecordAfterCancel(task_id, CancelPhase::kObserved, kWhy, Json(), now);
              },
              [](bool, std::string) {});
          return;
        }
        const std::string task_id = task.task_id;
        Live& live = live_[task_id];
        live.record = task;
        AnswerResult(id, Json{{"task", TaskJson(task)}, {"_meta", RelatedTaskMeta(task_id)}});
        const std::optional<uint64_t> generation = start_(task, std::move(token));
        if (generation) {
          live.generation = *generation;
          return;
        }
        // Shutdown began while the row was being written: the work never starts.
        const std::string text =
            "keel was shutting down when this task was created; its work never started, and "
            "calling again is safe.";
        live.record.status = TaskStatus::kFailed;
        live.record.status_message = text;
        live.record.result = ErrorResult(text, Json{{"type", "interrupted"},
                                                    {"reason", "server_shutdown"},
                                                    {"effect", "did_not_happen"},
                                                    {"taskId", task_id}});
        live.work_ended = true;
        Persist(task_id);
      });
}

std::optional<std::string> TaskManager::TaskIdParam(const Json& id, const Json& params) {
  if (params.is_object()) {
    const auto task_id = params.find("taskId");
    if (task_id != params.end() && task_id->is_string() && !task_id->get_ref<const std::string&>().empty()) {
      return task_id->get<std::string>();
    }
  }
  sink_.SendResponse(
      EncodeError(id, kInvalidParams, "Invalid params: taskId (a non-empty string) is required"));
  return std::nullopt;
}

bool TaskManager::AnswerIfUnavailable(const Json& id, const std::string& task_id,
                                      const std::optional<TaskRecord>& task,
                                      const std::string& error, const char* action) {
  const std::string failed = std::string("Failed to ") + action + " task: ";
  if (!error.empty()) {
    AnswerError(id, kInternalError, failed + error, Json{{"taskId", task_id}});
  } else if (!task) {
    AnswerError(id, kInvalidParams, failed + "Task not found", Json{{"taskId", task_id}});
  } else if (task->Expired(now_ms_())) {
    AnswerError(id, kInvalidParams, failed + "Task has expired", Json{{"taskId", task_id}});
  } else {
    return false;
  }
  return true;
}

void TaskManager::Get(const Json& id, const Json& params) {
  const std::optional<std::string> task_id = TaskIdParam(id, params);
  if (!task_id) return;
  Track(id);
  Store<std::optional<TaskRecord>>(
      [task_id = *task_id](TaskStore& store) { return store.Get(task_id); },
      [this, id, task_id = *task_id](std::optional<TaskRecord> task, std::string error) {
        if (AnswerIfUnavailable(id, task_id, task, error, "retrieve")) return;
        AnswerResult(id, WithRelatedTask(TaskJson(*task), task_id));
      });
}

void TaskManager::List(const Json& id, const Json& params) {
  int64_t after = 0;
  if (params.is_object()) {
    const auto cursor = params.find("cursor");
    if (cursor != params.end() && !cursor->is_null()) {
      std::optional<size_t> decoded;
      if (cursor->is_string()) decoded = DecodeCursor("tasks", cursor->get<std::string>());
      // keel's cursors hold a row number; one past int64 is forged and would wrap negative.
      if (!decoded || *decoded > static_cast<size_t>(std::numeric_limits<int64_t>::max())) {
        return sink_.SendResponse(
            EncodeError(id, kInvalidParams, "Failed to list tasks: Invalid cursor"));
      }
      after = static_cast<int64_t>(*decoded);
    }
  }
  Track(id);
  Store<TaskStore::Page>(
      [after, limit = options_.page_size, now = now_ms_()](TaskStore& store) {
        return store.List(after, limit, now);
      },
      [this, id](TaskStore::Page page, std::string error) {
        if (!error.empty()) return AnswerError(id, kInternalError, "Failed to list tasks: " + error);
        Json tasks = Json::array();
        for (const TaskRecord& task : page.tasks) tasks.push_back(TaskJson(task));
        Json result = {{"tasks", std::move(tasks)}};
        if (page.next_after) {
          result["nextCursor"] = EncodeCursor("tasks", static_cast<size_t>(*page.next_after));
        }
        AnswerResult(id, result);
      });
}

void TaskManager::AnswerOutcome(const Json& id, const TaskRecord& task) {
  if (task.status == TaskStatus::kCancelled) {
    Json data = {{"taskId", task.task_id},
                 {"status", "cancelled"},
                 {"cancelPhase", std::string(CancelPhaseName(task.cancel_phase))}};
    if (!task.status_message.empty()) data["statusMessage"] = task.status_message;
    if (!task.late_outcome.is_null()) data["lateOutcome"] = task.late_outcome;
    return AnswerError(id, kInternalError,
                       "Task " + task.task_id + " was cancelled: it has no result", data);
  }
  if (task.error.is_object()) {
    Json data = task.error.value("data", Json::object());
    if (data.is_object()) data["taskId"] = task.task_id;
    return AnswerError(id, task.error.value("code", kInternalError),
                       task.error.value("message", std::string("Task failed")), data);
  }
  if (task.result.is_object()) return AnswerResult(id, WithRelatedTask(task.result, task.task_id));
  AnswerError(id, kInternalError, "Task " + task.task_id + " has no result stored",
              Json{{"taskId", task.task_id}});
}

void TaskManager::Result(const Json& id, const Json& params) {
  const std::optional<std::string> task_id = TaskIdParam(id, params);
  if (!task_id) return;
  Track(id);
  if (auto it = live_.find(*task_id); it != live_.end()) {
    Live& live = it->second;
    if (!IsTerminal(live.record.status) || !live.terminal_written) {
      live.waiters.push_back(id);  // answered when the terminal state is written
      return;
    }
    return AnswerOutcome(id, live.record);
  }
  Store<std::optional<TaskRecord>>(
      [task_id = *task_id](TaskStore& store) { return store.Get(task_id); },
      [this, id, task_id = *task_id](std::optional<TaskRecord> task, std::string error) {
        if (AnswerIfUnavailable(id, task_id, task, error, "retrieve")) return;
        if (IsTerminal(task->status)) return AnswerOutcome(id, *task);
        if (auto it = live_.find(task_id); it != live_.end()) {
          it->second.waiters.push_back(id);  // created here meanwhile
          return;
        }
        AnswerError(id, kInternalError,
                    "Task " + task_id + " is run by another keel process (pid " +
                        std::to_string(task->owner_pid) +
                        ") on the same database; poll tasks/get until it is terminal",
                    Json{{"taskId", task_id}, {"status", std::string(TaskStatusName(task->status))}});
      });
}

void TaskManager::Cancel(const Json& id, const Json& params) {
  const std::optional<std::string> task_id = TaskIdParam(id, params);
  if (!task_id) return;
  Track(id);
  const int64_t now = now_ms_();
  if (auto it = live_.find(*task_id); it != live_.end()) {
    Live& live = it->second;
    if (IsTerminal(live.record.status)) {
      return AnswerError(id, kInvalidParams,
                         "Cannot cancel task: already in terminal status '" +
                             std::string(TaskStatusName(live.record.status)) + "'",
                         Json{{"taskId", *task_id}});
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
        [task_id = *task_id, now](TaskStore& store) {
          return store.Cancel(task_id, kCancelRequested, now);
        },
        [this, id, decided](bool written, std::string error) {
          auto it = live_.find(decided.task_id);
          if (it == live_.end()) return;  // cannot happen: erased only with no write pending
          Live& live = it->second;
          --live.writes_pending;
          if (!error.empty() || !written) {
            spdlog::error("task {}: could not write its cancellation ({})", decided.task_id,
                          error.empty() ? "the row is gone or terminal" : error);
          }
          live.terminal_written = true;
          AnswerResult(id, WithRelatedTask(TaskJson(decided), decided.task_id));
          NotifyStatus(decided);
          for (const Json& waiter : live.waiters) AnswerOutcome(waiter, decided);
          live.waiters.clear();
          EraseIfDone(decided.task_id);
        });
    return;
  }
  // Not run here: a task of an earlier (or another) keel process, or a finished one.
  struct Outcome {
    std::optional<TaskRecord> task;
    bool cancelled = false;
  };
  Store<Outcome>(
      [task_id = *task_id, now](TaskStore& store) {
        Outcome outcome;
        outcome.task = store.Get(task_id);
        if (!outcome.task || outcome.task->Expired(now) || IsTerminal(outcome.task->status)) {
          return outcome;
        }
        outcome.cancelled = store.Cancel(task_id, kCancelRequested, now);
        outcome.task = store.Get(task_id);
        return outcome;
      },
      [this, id, task_id = *task_id](Outcome outcome, std::string error) {
        if (AnswerIfUnavailable(id, task_id, outcome.task, error, "cancel")) return;
        if (!outcome.cancelled) {
          return AnswerError(id, kInvalidParams,
                             "Cannot cancel task: already in terminal status '" +
                                 std::string(TaskStatusName(outcome.task->status)) + "'",
                             Json{{"taskId", task_id}});
        }
        AnswerResult(id, WithRelatedTask(TaskJson(*outcome.task), task_id));
        NotifyStatus(*outcome.task);
      });
}

void TaskManager::OnSettled(const std::string& task_id, CallState state, CallAnswer answer) {
  Json* returned = std::get_if<Json>(&answer);
  Json result = returned != nullptr ? std::move(*returned) : Json();
  auto it = live_.find(task_id);
  if (it == live_.end()) return;
  Live& live = it->second;
  if (IsTerminal(live.record.status)) return;  // tasks/cancel came first
  switch (state) {
    case CallState::kCompleted:
      live.record.status = TaskStatus::kCompleted;
      break;
    case CallState::kFailed:
    case CallState::kTimedOut:
      live.record.status = TaskStatus::kFailed;
      live.record.status_message = FirstText(result);
      break;
    case CallState::kShutDown:
      // Invariant 6: the task stays working in the file; only the waiters hear of it.
      for (const Json& waiter : live.waiters) {
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
        for (const Json& waiter : live.waiters) AnswerOutcome(waiter, live.record);
        live.waiters.clear();
        EraseIfDone(task_id);
      });
}

void TaskManager::OnWorkEnded(const std::string& task_id, WorkEnd how, Json result) {
  auto it = live_.find(task_id);
  if (it == live_.end()) return;
  Live& live = it->second;
  live.work_ended = true;
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
    live_.erase(it);
  }
}

void TaskManager::ShutDown() {
  for (auto& [task_id, live] : live_) {
    for (const Json& waiter : live.waiters) {
      AnswerError(waiter, kInternalError,
                  "Server shutting down before task " + task_id + " finished",
                  Json{{"taskId", task_id}});
    }
    live.waiters.clear();
  }
}

void TaskManager::StartMaintenance(std::function<void(TaskStore&)> recover) {
  auto upkeep = [recover, now_ms = now_ms_](TaskStore& store) {
    recover(store);
    if (const size_t swept = store.SweepExpired(now_ms()); swept > 0) {
      spdlog::info("tasks: deleted {} expired task(s)", swept);
    }
  };
  store_.Post(upkeep);  // first, before any request is read (FIFO)
  // Timers re-arm themselves; the loop runs them only while it runs, and this manager
  // lives as long as the loop runs.
  const Duration renew_every = Millis(std::max<int64_t>(options_.lease_ms / 3, 1000));
  renew_timer_ = [this, renew_every] {
    if (!live_.empty()) {
      store_.Post([owner = options_.owner, until = now_ms_() + options_.lease_ms](TaskStore& store) {
        store.RenewLeases(owner, until);
      });
    }
    loop_.AddTimer(loop_.clock().Now() + renew_every, renew_timer_);
  };
  const Duration upkeep_every = Millis(60000);
  upkeep_timer_ = [this, upkeep, upkeep_every] {
    store_.Post(upkeep);
    loop_.AddTimer(loop_.clock().Now() + upkeep_every, upkeep_timer_);
  };
  loop_.AddTimer(loop_.clock().Now() + renew_every, renew_timer_);
  loop_.AddTimer(loop_.clock().Now() + upkeep_every, upkeep_timer_);
}

}  // namespace keel
