// WorkerPool: a set of threads that run tool calls — `threads()` of them, plus one for
// each held slot. The pool only runs jobs; admission (how many calls may be queued or
// running, held ones included) is decided by the caller.
//
// Thread-safety: Submit(), SubmitAll() and the counters may be called from any thread.
// Hold() and Release() log through the default spdlog logger (any thread may log; see
// process_log.h); the server calls them from the loop thread.
// WorkerPool(0) runs every job inline inside Submit()/SubmitAll(), for deterministic tests;
// there Hold() and Release() only count.
// Invariants: the queue is FIFO; a job runs once, on one thread at a time;
// the destructor joins the threads, so it must only run once no job is stuck
// (the server checks WaitIdle() and otherwise exits without destroying the pool).
//
// Fibers: each job runs on a JobFiber (job_fiber.h), so it may Suspend() (suspend.h): its
// thread goes on with other work, and the job's Resume queues it to continue, ahead of new
// jobs, on whichever worker takes it. A suspended job keeps its slot: at most
// threads() + held slots' worth of jobs are started and not finished, running or suspended,
// so --workers bounds the calls that run at once whether they wait blocked or suspended.
//
// Wake-ups: a worker that finishes a job looks at the queues before it parks. Jobs queued
// (new while a slot is free, or resumed) unpark one parked worker unless a worker awake and
// between jobs will take them; a worker that takes a job wakes one more the same way
// before it runs the job (a chain), so the submitting thread — the loop, the server's
// busiest — makes at most one wake-up per batch, and the others are made by workers. No job
// that could start waits while a worker sleeps and every awake worker is inside a job's code
// (which may take long): it waits at most for a worker already woken to take its own job. A
// wake-up is a system call plus a context switch on both sides, which costs more than a
// small tool: the pool makes no wake-up it can do without.
//
// Held slots: cancellation is cooperative, so a call can be settled while its job still
// runs, perhaps forever. The caller reports that with Hold() and the pool starts one more
// thread, so that threads() of them stay free for queued jobs: it aims at
// threads() + min(held(), max_extra) threads in their loop; past that cap Hold() only counts
// (one warning per crossing). When a held job has returned, the caller reports it with
// Release(): one thread is then surplus and retires the next time it finds the queue empty
// (never while jobs are queued: it may be the worker a SubmitAll() woke for them). A retired
// thread has left its loop; its Worker is kept and a later Hold() joins and restarts it, so
// Hold()/Release() cycles do not grow the set, and no Parker is freed while another thread
// may still be inside its Unpark().
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "server/runtime/clock.h"
#include "server/runtime/job_fiber.h"
#include "server/runtime/parker.h"

namespace keel {

class WorkerPool {
 public:
  using Job = std::function<void()>;

  // Threads added for held slots at most. The server passes its --max-inflight: admission
  // counts held calls as in flight, so no more can be held and the cap is never reached.
  // The default bounds a caller without such admission.
  static constexpr size_t kDefaultMaxExtra = 256;

  explicit WorkerPool(size_t threads, size_t max_extra = kDefaultMaxExtra);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void Submit(Job job);
  // Queues every job of `jobs` in order under one lock and leaves `jobs` empty. Hand a
  // burst over this way: workers then wake once for the burst, where job-by-job they would
  // often finish each job and fall asleep before the next one arrives.
  void SubmitAll(std::vector<Job>& jobs);

  // A call whose job is running was settled without the job returning: its thread stays
  // busy. Starts (or restarts) a thread in its place, up to the cap. Rare, so it takes the
  // lock and may create a thread, or join one that has already left its loop.
  void Hold();
  // A job reported by Hold() has returned: call it once that completion is observed, once
  // per Hold(). One thread becomes surplus: a parked one is woken to retire; with none
  // parked, the next one to find the queue empty retires.
  void Release();

  // The base size given to the constructor; held slots do not change it.
  size_t threads() const { return base_; }
  // Slots whose job was settled but still runs: Hold() minus Release().
  size_t held() const;
  // Threads in their loop now, retiring ones excluded (for tests and logs).
  size_t live_threads() const;
  // Jobs queued plus running or suspended, held ones included.
  size_t pending() const;
  // Jobs suspended whose Resume has not been called yet (for tests).
  size_t suspended() const { return suspended_.load(); }

  // Waits until no job is queued or running, or the deadline passes. True when idle.
  bool WaitIdle(TimePoint deadline);

  // Tests only, before the first Submit(): runs on a worker each time it has taken a job or
  // a resume, outside mu_, just before running it (to hold a worker in that window).
  void set_taken_hook_for_test(std::function<void()> hook) { taken_hook_ = std::move(hook); }

 private:
  struct Worker {
    Parker parker;
    // Set under mu_ by the SubmitAll() that claimed the worker, read by it before Unpark().
    Worker* next_to_wake = nullptr;
    // guarded by mu_: the thread left its loop (retired) and may be joined and restarted.
    bool retired = false;
    std::thread thread;
  };
  void WorkerMain(Worker& self);
  // Runs `fiber` on this worker until it finishes or suspends. Without mu_.
  void RunFiber(JobFiber* fiber);
  // A suspended job's Resume: queues it to continue. Any thread, without mu_.
  void QueueResume(JobFiber* fiber);
  // How many parked workers what is queued now needs: the jobs that can start (resumed ones,
  // and new ones while a slot is free) beyond the workers awake and not inside a job, which
  // look at the queues before they park. Requires mu_.
  size_t WakesNeededLocked() const;
  // Takes up to `n` parked workers out of sleepers_, counted awake, linked through
  // next_to_wake; Unpark() them after releasing mu_.
  Worker* ClaimSleepersLocked(size_t n);
  static void Unpark(Worker* to_wake);
  // Threads the pool wants in their loop now. Requires mu_.
  size_t TargetLive() const;
  // Starts `worker->thread`, joining a retired thread first. Without mu_.
  void Start(Worker* worker);

  const size_t base_;
  const size_t max_extra_;
  mutable std::mutex mu_;
  std::condition_variable idle_cv_;  // pending_ reached zero
  std::deque<Job> queue_;            // guarded by mu_
  // guarded by mu_: suspended jobs whose Resume was called, to run before new jobs.
  std::deque<JobFiber*> resumes_;
  size_t pending_ = 0;  // guarded by mu_: queued + running + suspended
  size_t active_ = 0;   // guarded by mu_: started and not finished (running or suspended)
  // guarded by mu_: workers in their loop and not parked, or claimed to be woken.
  size_t awake_ = 0;
  // Workers that took a job or a resume and have not left its code (its arm excluded).
  // Raised under mu_ as the worker takes it, so a worker about to run a job never counts
  // as looking; lowered without mu_ when the job returns or suspends: a worker that has
  // left its job but not yet taken mu_ counts as looking, and it does look at the queues
  // under mu_ before it parks (and parking takes it out of awake_, under mu_).
  std::atomic<size_t> running_{0};
  std::atomic<size_t> suspended_{0};
  std::function<void()> taken_hook_;  // set before any job; read-only after
  // guarded by mu_: parked workers that no Submit() has claimed yet. A Submit() takes one
  // out per job and unparks it; a worker puts itself back only once it has woken.
  std::deque<Worker*> sleepers_;
  bool stopping_ = false;  // guarded by mu_
  size_t held_ = 0;        // guarded by mu_
  size_t live_ = 0;        // guarded by mu_: workers in their loop, not retired
  bool over_cap_ = false;  // guarded by mu_: warned that held_ passed max_extra_
  // guarded by mu_; only grows, to at most base_ + max_extra_. A Worker outlives its
  // thread: it is restarted, never freed before the destructor.
  std::vector<std::unique_ptr<Worker>> workers_;
};

}  // namespace keel
