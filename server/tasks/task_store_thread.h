// TaskStoreThread: the one thread that reads and writes durable tasks. It owns its own
// connection to keel's database (SQLite's one-connection-per-thread rule) and the
// TaskStore over it, so no task write ever blocks the event loop (an fsync, or a wait
// for another writer's lock).
//
// Thread-safety: Post() may be called from any thread.
// Invariants:
//  1. Jobs run one at a time, in the order they were posted: a read posted after a write
//     sees it, and two writes of one task land in the order keel decided them.
//  2. A job that throws is logged and does not stop the thread; jobs report their own
//     failures (they catch SqliteError and post the outcome back to the loop).
//  3. The destructor runs every job already posted, then joins: writes decided before
//     exit reach the file.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "ledger/database.h"
#include "ledger/task_store.h"

namespace keel {

class TaskStoreThread {
 public:
  using Job = std::function<void(TaskStore& store)>;

  // Opens `path` (already migrated) for the new thread. Null with *error set on failure.
  static std::unique_ptr<TaskStoreThread> Start(const std::string& path, std::string* error);
  ~TaskStoreThread();
  TaskStoreThread(const TaskStoreThread&) = delete;
  TaskStoreThread& operator=(const TaskStoreThread&) = delete;

  void Post(Job job);

 private:
  TaskStoreThread() = default;
  void Loop(std::unique_ptr<Database> db);

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Job> jobs_;   // guarded by mu_
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace keel
