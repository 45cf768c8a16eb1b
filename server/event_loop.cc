#include "server/event_loop.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

namespace keel {

EventLoop::EventLoop(const Clock& clock) : clock_(clock) {
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) throw std::runtime_error("eventfd failed");
}

EventLoop::~EventLoop() { close(wake_fd_); }

void EventLoop::Post(Fn fn) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mailbox_mu_);
    mailbox_.push_back(std::move(fn));
    wake = !wake_pending_;  // one write per batch: the loop drains everything at once
    wake_pending_ = true;
  }
  if (wake) {
    const uint64_t one = 1;
    // The counter cannot overflow in practice; EAGAIN would still leave it readable.
    [[maybe_unused]] ssize_t n = write(wake_fd_, &one, sizeof(one));
  }
}

EventLoop::TimerId EventLoop::AddTimer(TimePoint when, Fn fn) {
  const TimerId id = next_timer_++;
  timers_.emplace(id, std::make_pair(when, std::move(fn)));
  timers_by_time_.emplace(when, id);
  return id;
}

void EventLoop::CancelTimer(TimerId id) {
  auto it = timers_.find(id);
  if (it == timers_.end()) return;
  auto range = timers_by_time_.equal_range(it->second.first);
  for (auto t = range.first; t != range.second; ++t) {
    if (t->second == id) {
      timers_by_time_.erase(t);
      break;
    }
  }
  timers_.erase(it);
}

void EventLoop::Watch(int fd, short events, FdFn fn) {
  watchers_[fd] = Watcher{events, std::move(fn)};
}

void EventLoop::SetEvents(int fd, short events) {
  auto it = watchers_.find(fd);
  if (it != watchers_.end()) it->second.events = events;
}

void EventLoop::Unwatch(int fd) { watchers_.erase(fd); }

void EventLoop::AddBeforeWait(Fn fn) { before_wait_.push_back(std::move(fn)); }

void EventLoop::DrainMailbox() {
  uint64_t count;
  [[maybe_unused]] ssize_t n = read(wake_fd_, &count, sizeof(count));
  std::vector<Fn> batch;
  {
    std::lock_guard<std::mutex> lock(mailbox_mu_);
    batch.swap(mailbox_);
    wake_pending_ = false;
  }
  for (auto& fn : batch) fn();
}

void EventLoop::FireTimers() {
  const TimePoint now = clock_.Now();
  while (!timers_by_time_.empty() && timers_by_time_.begin()->first <= now) {
    const TimerId id = timers_by_time_.begin()->second;
    timers_by_time_.erase(timers_by_time_.begin());
    auto it = timers_.find(id);
    Fn fn = std::move(it->second.second);
    timers_.erase(it);
    fn();
  }
}

void EventLoop::RunOnce(Duration max_wait) {
  for (auto& fn : before_wait_) fn();
  if (stopping_) return;

  std::vector<pollfd> fds;
  fds.reserve(watchers_.size() + 1);
  fds.push_back(pollfd{wake_fd_, POLLIN, 0});
  for (const auto& [fd, w] : watchers_) {
    if (w.events != 0) fds.push_back(pollfd{fd, w.events, 0});
  }
  Duration wait = max_wait;
  if (!timers_by_time_.empty()) {
    const TimePoint now = clock_.Now();
    const TimePoint next = timers_by_time_.begin()->first;
    wait = std::min(wait, next > now ? next - now : Duration::zero());
  }
  // Round up so a timer is never polled for "0 ms" in a busy loop before it is due.
  const auto ms = std::chrono::ceil<Millis>(wait).count();
  const int timeout = wait == Duration::max() ? -1 : static_cast<int>(std::min<long long>(ms, 1 << 30));
  const int ready = poll(fds.data(), fds.size(), timeout);
  if (ready < 0 && errno != EINTR) throw std::runtime_error("poll failed");

  if (ready > 0) {
    if (fds[0].revents & POLLIN) DrainMailbox();
    for (size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      auto it = watchers_.find(fds[i].fd);  // a handler may have unwatched it
      if (it == watchers_.end()) continue;
      FdFn fn = it->second.fn;  // copy: the handler may re-register itself
      fn(fds[i].revents);
    }
  }
  FireTimers();
}

void EventLoop::Run() {
  while (!stopping_) RunOnce(Duration::max());
}

}  // namespace keel
