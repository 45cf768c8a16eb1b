#include "server/runtime/worker_pool.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <system_error>

#include <spdlog/spdlog.h>

namespace keel {

WorkerPool::WorkerPool(size_t threads, size_t max_extra) : base_(threads), max_extra_(max_extra) {
  workers_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) workers_.push_back(std::make_unique<Worker>());
  live_ = threads;
  for (auto& worker : workers_) {
    worker->thread = std::thread([this, w = worker.get()] { WorkerMain(*w); });
  }
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  // Unpark() only grants a permit, so waking a worker that is not parked is harmless.
  // Retired workers have left their loop already: their join returns at once.
  for (auto& worker : workers_) worker->parker.Unpark();
  for (auto& worker : workers_) {
    if (worker->thread.joinable()) worker->thread.join();
  }
}

void WorkerPool::Submit(Job job) {
  std::vector<Job> jobs;
  jobs.push_back(std::move(job));
  SubmitAll(jobs);
}

void WorkerPool::SubmitAll(std::vector<Job>& jobs) {
  if (base_ == 0) {
    for (Job& job : jobs) job();
    jobs.clear();
    return;
  }
  Worker* to_wake = nullptr;  // claimed sleepers, linked through next_to_wake
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Job& job : jobs) queue_.push_back(std::move(job));
    pending_ += jobs.size();
    to_wake = ClaimSleepersLocked(std::min<size_t>(1, WakesNeededLocked()));
  }
  jobs.clear();
  Unpark(to_wake);
}

void WorkerPool::Hold() {
  Worker* to_start = nullptr;
  bool crossed_cap = false;
  size_t held = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    held = ++held_;
    if (base_ > 0 && live_ < TargetLive()) {
      // A surplus thread that has not retired yet counts in live_ and simply stays; only a
      // real shortfall restarts a retired worker, or adds one.
      ++live_;
      for (auto& worker : workers_) {
        if (worker->retired) {
          to_start = worker.get();
          break;
        }
      }
      if (to_start == nullptr) {
        workers_.push_back(std::make_unique<Worker>());
        to_start = workers_.back().get();
      }
      to_start->retired = false;
    } else if (base_ > 0 && held_ > max_extra_ && !over_cap_) {
      over_cap_ = true;
      crossed_cap = true;
    }
  }
  if (to_start != nullptr) Start(to_start);
  spdlog::warn("worker slot held by a call that ignored cancellation; {} held", held);
  if (crossed_cap) {
    spdlog::warn(
        "worker pool at its cap of {} extra threads: further held slots are counted, "
        "not replaced; {} held",
        max_extra_, held);
  }
}

void WorkerPool::Release() {
  Worker* to_retire = nullptr;
  size_t held = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    assert(held_ > 0 && "Release() without a Hold()");
    if (held_ == 0) return;
    held = --held_;
    if (held_ <= max_extra_) over_cap_ = false;
    // A parked worker is woken to retire; with none parked, the first worker to find the
    // queue empty retires instead of parking.
    if (live_ > TargetLive() && !sleepers_.empty()) to_retire = ClaimSleepersLocked(1);
  }
  Unpark(to_retire);
  spdlog::info("held worker slot released; {} held", held);
}

size_t WorkerPool::held() const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_;
}

size_t WorkerPool::live_threads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_;
}

size_t WorkerPool::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_;
}

bool WorkerPool::WaitIdle(TimePoint deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_cv_.wait_until(lock, deadline, [this] { return pending_ == 0; });
}

size_t WorkerPool::TargetLive() const { return base_ + std::min(held_, max_extra_); }

void WorkerPool::Start(Worker* worker) {
  // A retired thread has left its loop; join() waits at most for its return.
  if (worker->thread.joinable()) worker->thread.join();
  try {
    worker->thread = std::thread([this, worker] { WorkerMain(*worker); });
  } catch (const std::system_error& e) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      --live_;
      worker->retired = true;  // a later Hold() tries again
    }
    spdlog::error("could not start a worker thread for a held slot: {}", e.what());
  }
}

void WorkerPool::WorkerMain(Worker& self) {
  std::unique_lock<std::mutex> lock(mu_);
  ++awake_;
  for (;;) {
    JobFiber* fiber = nullptr;
    Job job;
    if (!resumes_.empty()) {
      fiber = resumes_.front();
      resumes_.pop_front();
      ++running_;  // under mu_: from here this worker is not looking at the queues
    } else if (!queue_.empty() && active_ < TargetLive()) {
      job = std::move(queue_.front());
      queue_.pop_front();
      ++active_;
      ++running_;
    } else {
      if (queue_.empty() && stopping_) break;  // nothing left to run
      // Surplus after a Release(): retire instead of parking. Never with jobs queued: this
      // worker may be the one a SubmitAll() claimed for them.
      if (queue_.empty() && live_ > TargetLive()) {
        --live_;
        self.retired = true;
        break;
      }
      sleepers_.push_back(&self);
      --awake_;
      lock.unlock();
      self.parker.Park();
      lock.lock();
      // Claimed (and counted awake) by whoever woke it; the destructor wakes without claiming.
      if (const auto it = std::find(sleepers_.begin(), sleepers_.end(), &self);
          it != sleepers_.end()) {
        sleepers_.erase(it);
        ++awake_;
      }
      // The job it was woken for may have gone to a worker that finished meanwhile:
      // look again, and park again if there is nothing to take.
      continue;
    }
    // The wake-up chain: this worker is now inside a job, so if what is still queued needs
    // a worker it wakes one more, which does the same as it takes its job.
    Worker* next = ClaimSleepersLocked(std::min<size_t>(1, WakesNeededLocked()));
    lock.unlock();
    Unpark(next);
    if (taken_hook_) taken_hook_();
    if (fiber == nullptr) {
      fiber = new JobFiber(std::move(job));
      job = nullptr;
    }
    RunFiber(fiber);
    lock.lock();
  }
  --awake_;
}

void WorkerPool::RunFiber(JobFiber* fiber) {
  const bool finished = fiber->Run();
  --running_;  // may be early: the worker looks at the queues under mu_ before it parks
  if (!finished) {
    ++suspended_;
    // Suspended: its arm decides when it goes on. Called here, on the worker's stack, once
    // the job's frames are switched out, so a Resume called at once finds it resumable.
    fiber->arm()([this, fiber] { QueueResume(fiber); });
    return;
  }
  delete fiber;  // the job and its captures are gone already (released on the fiber)
  std::lock_guard<std::mutex> lock(mu_);
  --active_;
  if (--pending_ == 0) idle_cv_.notify_all();
}

void WorkerPool::QueueResume(JobFiber* fiber) {
  if (!fiber->MarkResumed()) {
    spdlog::critical("a suspended job was resumed twice");
    std::abort();
  }
  --suspended_;
  Worker* to_wake = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    resumes_.push_back(fiber);
    to_wake = ClaimSleepersLocked(std::min<size_t>(1, WakesNeededLocked()));
  }
  Unpark(to_wake);
}

size_t WorkerPool::WakesNeededLocked() const {
  const size_t free = TargetLive() > active_ ? TargetLive() - active_ : 0;
  const size_t takeable = resumes_.size() + std::min(queue_.size(), free);
  const size_t looking = awake_ - std::min(running_.load(), awake_);
  return takeable > looking ? takeable - looking : 0;
}

WorkerPool::Worker* WorkerPool::ClaimSleepersLocked(size_t n) {
  // The most recently parked first: its stack and caches are the warmest. With 64 workers
  // (keel wrap's default) waking the longest asleep sent every call to a different cold
  // thread: keel spent 160-220 us of CPU per forwarded call instead of about 100
  // (scripts/bench --wrap, 1 in flight). With --workers at the core count the two orders
  // measured the same (scripts/bench).
  Worker* first = nullptr;
  Worker** tail = &first;
  for (size_t i = 0; i < n && !sleepers_.empty(); ++i) {
    *tail = sleepers_.back();
    sleepers_.pop_back();
    ++awake_;
    tail = &(*tail)->next_to_wake;
  }
  *tail = nullptr;
  return first;
}

void WorkerPool::Unpark(Worker* to_wake) {
  // Outside mu_: a woken worker wants mu_ at once.
  while (to_wake != nullptr) {
    Worker* worker = to_wake;
    to_wake = worker->next_to_wake;  // read first: once unparked, it may be claimed anew
    worker->parker.Unpark();
  }
}

}  // namespace keel
