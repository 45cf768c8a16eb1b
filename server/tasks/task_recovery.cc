#include "server/tasks/task_recovery.h"

#include <signal.h>

#include <cerrno>
#include <exception>

#include <spdlog/spdlog.h>

#include "ledger/instance_registry.h"

namespace keel {
namespace {

bool ProcessRuns(int64_t pid) {
  if (pid <= 0) return false;
  return kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

constexpr const char* kRestarted = "keel restarted while this task was running";

}  // namespace

size_t RecoverOrphanedTasks(TaskStore& store, const ToolRegistry& tools,
                            const RecoveryOptions& options, int64_t now_ms) {
  size_t settled = 0;
  for (const TaskRecord& task : store.Unfinished(options.owner)) {
    // A task waiting for input runs nowhere: it stays parked, and whoever answers its last
    // question (tasks/update) resumes it.
    if (task.status == TaskStatus::kInputRequired) continue;
    if (options.registry) {
      bool gone = false;
      try {
        gone = InstanceRegistry(store.db()).Gone(task.owner);
      } catch (const std::exception& e) {
        spdlog::warn("task {}: keel_instances cannot be read ({}); its owner counts as alive",
                     task.task_id, e.what());
      }
      if (!gone) continue;
    } else {
      const bool owner_runs =
          task.owner_pid != options.pid &&
          (options.alive ? options.alive(task.owner_pid) : ProcessRuns(task.owner_pid));
      if (owner_runs && task.lease_until_ms > now_ms) continue;  // still someone's live task
    }
    if (!store.TakeOver(task.task_id, task.owner, options.owner, options.pid)) continue;

    Reconciled found;
    Tool* tool = tools.Find(task.tool);
    if (tool != nullptr) {
      const Json arguments = task.request.value("arguments", Json::object());
      const Json meta = task.request.value("_meta", Json());
      try {
        found = tool->Reconcile(arguments, meta);
      } catch (const std::exception& e) {
        spdlog::warn("task {}: reconciling with tool '{}' failed: {}", task.task_id, task.tool,
                     e.what());
      }
    }
    TaskStatus status = TaskStatus::kFailed;
    std::string message;
    Json result;
    switch (found.outcome) {
      case Reconciled::Outcome::kHappened: {
        const auto flag = found.result.find("isError");
        const bool failed = flag != found.result.end() && flag->is_boolean() && flag->get<bool>();
        status = failed ? TaskStatus::kFailed : TaskStatus::kCompleted;
        message = std::string(kRestarted) +
                  "; the work had finished, and its result was recovered from the tool's "
                  "durable record.";
        result = found.result;
        break;
      }
      case Reconciled::Outcome::kDidNotHappen:
        message = std::string(kRestarted) +
                  ", before its effect: nothing happened, and calling it again is safe.";
        result = ErrorResult(message, Json{{"type", "interrupted"},
                                           {"reason", "server_restarted"},
                                           {"effect", "did_not_happen"},
                                           {"taskId", task.task_id}});
        break;
      case Reconciled::Outcome::kUnknown:
        message = std::string(kRestarted) +
                  "; the work was interrupted and whether it took effect is unknown. Check "
                  "before calling it again unless the tool is idempotent.";
        result = ErrorResult(message, Json{{"type", "interrupted"},
                                           {"reason", "server_restarted"},
                                           {"effect", "unknown"},
                                           {"taskId", task.task_id}});
        break;
    }
    if (store.Finish(task.task_id, status, message, result, Json(), now_ms)) {
      ++settled;
      spdlog::info("task {} ({}) was left working by {} (pid {}): now {}", task.task_id, task.tool,
                   task.owner, task.owner_pid, TaskStatusName(status));
    }
  }
  return settled;
}

}  // namespace keel
