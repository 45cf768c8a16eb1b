// The exit sequence of a serving keel, once its loop has stopped. Hosts kill keel 2 s after
// closing stdin, so every wait here is short:
//  1. what the transport holds is written, within kExitFlush (not when the client closed
//     stdout: nothing can arrive);
//  2. the task store thread is joined, so every decided task write reaches the file;
//  3. the workers get kExitWorkers to go idle; the call statistics are logged;
//  4. command process groups still running are killed (none may outlive keel);
//  5. when workers still run tool code, keel says why and exits at once (_Exit(0)) instead of
//     joining threads that may never return.
//
// Thread: the loop thread, after EventLoop::Run() returned.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/call/request_coordinator.h"
#include "server/runtime/clock.h"
#include "server/runtime/worker_pool.h"
#include "server/tasks/task_store_thread.h"
#include "server/transport/transport.h"

namespace keel {

inline constexpr Duration kExitFlush = Millis(250);
inline constexpr Duration kExitWorkers = Millis(100);

struct ExitParts {
  const Clock& clock;
  std::vector<Transport*> transports;           // stdio, HTTP: each flushed
  std::unique_ptr<TaskStoreThread> task_store;  // joined and destroyed by the sequence
  WorkerPool& pool;
  const RequestCoordinator::Stats& stats;
  bool peer_gone = false;  // the client closed stdout
  // Step 4 also stops the server keel wraps (keel wrap), within its grace; null: none.
  std::function<void()> stop_upstream;
};

// Runs the sequence. Returns 0 when every worker is idle; otherwise does not return.
int FinishServing(ExitParts parts);

// The log lines for work still running at exit: `held` tool calls settled but not stopped,
// and the other `pending` jobs (held ones included in it) that nothing cancelled.
std::vector<std::string> UnfinishedWorkWarnings(size_t held, size_t pending, bool peer_gone);

}  // namespace keel
