// WorkerPool: a fixed set of threads that run tool calls. The pool only runs jobs;
// admission (how many calls may be queued or running) is decided by the caller.
//
// Thread-safety: Submit() and the counters may be called from any thread.
// WorkerPool(0) runs every job inline inside Submit(), for deterministic tests.
// Invariants: the queue is FIFO; a job runs on exactly one thread, once;
// the destructor joins the threads, so it must only run once no job is stuck
// (the server checks WaitIdle() and otherwise exits without destroying the pool).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "server/clock.h"

namespace keel {

class WorkerPool {
 public:
  using Job = std::function<void()>;

  explicit WorkerPool(size_t threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Submit(Job job);

  size_t threads() const { return threads_.size(); }
  // Jobs queued plus running.
  size_t pending() const;

  // Waits until no job is queued or running, or the deadline passes. True when idle.
  bool WaitIdle(TimePoint deadline);

 private:
  void WorkerMain();

  mutable std::mutex mu_;
  std::condition_variable work_cv_;  // a job was queued, or stopping
  std::condition_variable idle_cv_;  // pending_ reached zero
  std::deque<Job> queue_;            // guarded by mu_
  size_t pending_ = 0;               // guarded by mu_: queued + running
  size_t idle_workers_ = 0;          // guarded by mu_
  bool stopping_ = false;            // guarded by mu_
  std::vector<std::thread> threads_;
};

}  // namespace keel
