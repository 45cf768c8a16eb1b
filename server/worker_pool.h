// WorkerPool: a fixed set of threads that run tool calls. The pool only runs jobs;
// admission (how many calls may be queued or running) is decided by the caller.
//
// Thread-safety: Submit(), SubmitAll() and the counters may be called from any thread.
// WorkerPool(0) runs every job inline inside Submit()/SubmitAll(), for deterministic tests.
// Invariants: the queue is FIFO; a job runs on exactly one thread, once;
// the destructor joins the threads, so it must only run once no job is stuck
// (the server checks WaitIdle() and otherwise exits without destroying the pool).
// Wake-ups: a worker that finishes a job looks at the queue before it parks, and each
// queued job unparks at most one parked worker, so no job waits while a worker sleeps. A
// wake-up is a system call plus a context switch on both sides, which costs more than a
// small tool: the pool makes no wake-up it can do without.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "server/clock.h"
#include "server/parker.h"

namespace keel {

class WorkerPool {
 public:
  using Job = std::function<void()>;

  explicit WorkerPool(size_t threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Submit(Job job);
  // Queues every job of `jobs` in order under one lock and leaves `jobs` empty. Hand a
  // burst over this way: workers then wake once for the burst, where job-by-job they would
  // often finish each job and fall asleep before the next one arrives.
  void SubmitAll(std::vector<Job>& jobs);

  size_t threads() const { return workers_.size(); }
  // Jobs queued plus running.
  size_t pending() const;

  // Waits until no job is queued or running, or the deadline passes. True when idle.
  bool WaitIdle(TimePoint deadline);

 private:
  struct Worker {
    Parker parker;
    // Set under mu_ by the SubmitAll() that claimed the worker, read by it before Unpark().
    Worker* next_to_wake = nullptr;
    std::thread thread;
  };
  void WorkerMain(Worker& self);

  mutable std::mutex mu_;
  std::condition_variable idle_cv_;  // pending_ reached zero
  std::deque<Job> queue_;            // guarded by mu_
  size_t pending_ = 0;               // guarded by mu_: queued + running
  // guarded by mu_: parked workers that no Submit() has claimed yet. A Submit() takes one
  // out per job and unparks it; a worker puts itself back only once it has woken.
  std::deque<Worker*> sleepers_;
  bool stopping_ = false;            // guarded by mu_
  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace keel
