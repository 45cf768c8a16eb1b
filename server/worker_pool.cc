#include "server/worker_pool.h"

namespace keel {

WorkerPool::WorkerPool(size_t threads) {
  threads_.reserve(threads);
  for (size_t i = 0; i < threads; ++i) threads_.emplace_back([this] { WorkerMain(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::Submit(Job job) {
  if (threads_.empty()) {
    job();
    return;
  }
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(job));
    ++pending_;
    wake = idle_workers_ > 0;  // a busy pool picks the job up without a wake-up
  }
  if (wake) work_cv_.notify_one();
}

size_t WorkerPool::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return pending_;
}

bool WorkerPool::WaitIdle(TimePoint deadline) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_cv_.wait_until(lock, deadline, [this] { return pending_ == 0; });
}

void WorkerPool::WorkerMain() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    ++idle_workers_;
    work_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    --idle_workers_;
    if (queue_.empty()) return;  // stopping, nothing left to run
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
