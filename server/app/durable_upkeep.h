// Upkeep of keel's durable state while it serves:
//  - finished idempotency keys past --idempotency-ttl are forgotten: once at start-up, then
//    every kReapInterval on a worker (LedgerReaper; a write transaction must never block the
//    loop);
//  - keyed command writes a dead keel left without an outcome are looked up by key
//    (ReconcileCommandTools, on a worker at start-up, and every kFleetReconcileInterval on
//    a database shared across machines);
//  - durable tasks a dead keel left working are settled (OrphanedTaskRecovery, the job
//    TaskManager::StartMaintenance runs on the task store thread before any request is read,
//    then every minute with the sweep of expired tasks).
// Each job catches and logs its own failure: upkeep never stops keel.
//
// Thread: LedgerReaper on the loop thread (its reaps run on the pool); the functions on the
// thread that calls them, each with that thread's own connection.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ledger/task_store.h"
#include "server/catalog/tool_registry.h"
#include "server/durable/ledger_service.h"
#include "server/runtime/clock.h"
#include "server/runtime/event_loop.h"
#include "server/runtime/worker_pool.h"
#include "server/tasks/task_recovery.h"
#include "server/tools/command_tool.h"

namespace keel {

// How often keyed command writes a dead keel left are looked up while keel serves on a
// database shared across machines (at start-up only on SQLite: keels on one file start
// again on the same machine).
inline constexpr Duration kFleetReconcileInterval = Millis(60 * 1000);

// How often expired keys are forgotten while keel serves.
inline constexpr Duration kReapInterval = Millis(10 * 60 * 1000);

// Forgets the expired keys now. Returns how many (0 when it failed; logged).
size_t ReapExpiredKeys(LedgerService& ledger);

// Reconciles each tool's unsettled keys as `owner` (CommandTool::ReconcileAtStartup).
void ReconcileCommandTools(const std::vector<CommandTool*>& tools, const std::string& owner);

// The task store job that settles the tasks a dead keel left working (task_recovery.h).
// `registry` must outlive the job.
std::function<void(TaskStore&)> OrphanedTaskRecovery(const ToolRegistry& registry,
                                                     RecoveryOptions recovery);

// Reaps now, then every kReapInterval on `pool` for as long as it lives.
class LedgerReaper {
 public:
  LedgerReaper(EventLoop& loop, WorkerPool& pool, std::shared_ptr<LedgerService> ledger)
      : loop_(loop), pool_(pool), ledger_(std::move(ledger)) {}
  ~LedgerReaper();
  LedgerReaper(const LedgerReaper&) = delete;
  LedgerReaper& operator=(const LedgerReaper&) = delete;

  // Reaps on the calling thread, then arms the timer.
  void Start();

 private:
  void Arm();

  EventLoop& loop_;
  WorkerPool& pool_;
  std::shared_ptr<LedgerService> ledger_;
  EventLoop::TimerId timer_ = 0;  // 0: none armed
};

}  // namespace keel
