// Task recovery (TASK-2): what happens to a task whose keel process died while it was
// `working`. Runs on the TaskStoreThread: at start-up, before any request is served, and
// every minute after (another keel on the same file may die meanwhile).
//
// A task is orphaned when its owner is not this process and the owner is gone: its pid
// no longer runs, or its lease (renewed while the owner lives) has expired; with a store
// shared across machines, the registry of instances says it is gone. Exactly one survivor
// settles each orphan: it takes the task over first (TaskStore::TakeOver), and a keel that
// loses that race leaves the task alone. An orphan
// becomes terminal, never silently lost (a task parked in input_required is no orphan: no
// work of it runs anywhere, and it stays parked until answered, cancelled or expired):
//  - its tool can reconcile it (Tool::Reconcile, e.g. the ledger by idempotency key) and
//    the work happened: completed (or failed) with the result the call produced;
//  - its tool knows the work surely did not happen: failed, "safe to retry";
//  - otherwise: failed, outcome unknown.
// Each gets a statusMessage saying keel restarted during the run, and an isError result
// with structuredContent.error {type: "interrupted", effect: happened|did_not_happen|
// unknown} where applicable.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "ledger/task_store.h"
#include "server/catalog/tool_registry.h"

namespace keel {

struct RecoveryOptions {
  std::string owner;  // this process: its own tasks are never orphans
  int64_t pid = 0;
  // Whether a process runs; null: kill(pid, 0). Our own pid never counts as the owner's.
  std::function<bool(int64_t pid)> alive;
  // The store is shared by keels on several machines (PostgreSQL): an owner runs while the
  // registry of instances says so (InstanceRegistry::Gone, by the server's clock); neither
  // its pid nor the lease (written by its own clock) is looked at.
  bool registry = false;
};

// Returns how many orphans were settled.
size_t RecoverOrphanedTasks(TaskStore& store, const ToolRegistry& tools,
                            const RecoveryOptions& options, int64_t now_ms);

}  // namespace keel
