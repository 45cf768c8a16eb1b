#include "server/runtime/deadline_timer.h"

namespace keel {

DeadlineTimer& DeadlineTimer::Shared() {
  static DeadlineTimer* timer = new DeadlineTimer();
  return *timer;
}

DeadlineTimer::~DeadlineTimer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

uint64_t DeadlineTimer::Arm(TimePoint when, std::function<void()> fn) {
  bool wake = false;
  uint64_t id = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    id = next_id_++;
    // The thread is waiting until wake_at_ (or longer): only an earlier time needs it awake.
    // Disarmed timers are not taken out of its wait; it wakes at their time for nothing.
    wake = when < wake_at_;
    if (wake) wake_at_ = when;
    timers_.emplace(Key{when, id}, std::move(fn));
    when_.emplace(id, when);
    if (!thread_.joinable()) thread_ = std::thread([this] { Main(); });
  }
  if (wake) cv_.notify_one();
  return id;
}

void DeadlineTimer::Disarm(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = when_.find(id);
  if (it == when_.end()) return;
  timers_.erase(Key{it->second, id});
  when_.erase(it);
}

size_t DeadlineTimer::armed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return timers_.size();
}

void DeadlineTimer::Main() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stopping_) {
    if (timers_.empty()) {
      wake_at_ = TimePoint::max();
      cv_.wait(lock);
      continue;
    }
    const auto first = timers_.begin();
    const TimePoint when = first->first.first;
    wake_at_ = when;
    if (when == TimePoint::max()) {  // never: only an earlier timer matters
      cv_.wait(lock);
      continue;
    }
    if (std::chrono::steady_clock::now() < when) {
      cv_.wait_until(lock, when);
      continue;
    }
    std::function<void()> fn = std::move(first->second);
    when_.erase(first->first.second);
    timers_.erase(first);
    lock.unlock();
    fn();
    fn = nullptr;  // its captures are released outside the lock too
    lock.lock();
  }
}

}  // namespace keel
