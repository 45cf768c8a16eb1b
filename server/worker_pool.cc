#include "server/worker_pool.h"

namespace keel {

WorkerPool::WorkerPool(size_t threads) {
  workers_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) workers_.push_back(std::make_unique<Worker>());
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
  for (auto& worker : workers_) worker->parker.Unpark();
  for (auto& worker : workers_) worker->thread.join();
}

void WorkerPool::Submit(Job job) {
  std::vector<Job> jobs;
  jobs.push_back(std::move(job));
  SubmitAll(jobs);
}

void WorkerPool::SubmitAll(std::vector<Job>& jobs) {
  if (workers_.empty()) {
    for (Job& job : jobs) job();
    jobs.clear();
    return;
  }
  Worker* to_wake = nullptr;  // claimed sleepers, linked through next_to_wake
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Job& job : jobs) queue_.push_back(std::move(job));
    pending_ += jobs.size();
    // One sleeper per job, the longest asleep first (measured better than the most recent).
    // With no sleeper left, every worker is running a job or about to look at the queue
    // under mu_, so the remaining jobs are picked up without a wake-up.
    Worker** tail = &to_wake;
    for (size_t i = 0; i < jobs.size() && !sleepers_.empty(); ++i) {
      *tail = sleepers_.front();
      sleepers_.pop_front();
      tail = &(*tail)->next_to_wake;
    }
    *tail = nullptr;
  }
  jobs.clear();
  // Unparked outside mu_: a woken worker wants mu_ at once.
  while (to_wake != nullptr) {
    Worker* worker = to_wake;
    to_wake = worker->next_to_wake;  // read first: once unparked, it may be claimed anew
    worker->parker.Unpark();
  }
}

size_t WorkerPool::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_;
}

bool WorkerPool::WaitIdle(TimePoint deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_cv_.wait_until(lock, deadline, [this] { return pending_ == 0; });
}

void WorkerPool::WorkerMain(Worker& self) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (queue_.empty()) {
      if (stopping_) return;  // nothing left to run
      sleepers_.push_back(&self);
      lock.unlock();
      self.parker.Park();
      lock.lock();
      // The job it was woken for may have gone to a worker that finished meanwhile:
      // look again, and park again if the queue is empty.
      continue;
    }
    Job job = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    job();
    job = nullptr;  // release captured state before reporting idle
    lock.lock();
    if (--pending_ == 0) idle_cv_.notify_all();
  }
}

}  // namespace keel
