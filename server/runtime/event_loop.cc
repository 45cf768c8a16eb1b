#include "server/runtime/event_loop.h"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

#include <sys/eventfd.h>

namespace keel {

EventLoop::EventLoop(const Clock& clock) : clock_(clock) {
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) throw std::runtime_error("eventfd failed");
}

EventLoop::~EventLoop() { close(wake_fd_); }

void EventLoop::Post(Fn fn) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mailbox_mu_);
    mailbox_.push_back(std::move(fn));
    // One write per batch (the loop drains everything at once), and none while the loop
    // runs: it checks the mailbox under this lock before it blocks (PrepareToBlock).
    if (blocking_ && !wake_pending_) {
      wake_pending_ = true;
      wake = true;
    }
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
  poll_set_stale_ = true;
}

void EventLoop::SetEvents(int fd, short events) {
  auto it = watchers_.find(fd);
  if (it == watchers_.end() || it->second.events == events) return;
  it->second.events = events;
  poll_set_stale_ = true;
}

void EventLoop::Unwatch(int fd) {
  watchers_.erase(fd);
  poll_set_stale_ = true;
}

void EventLoop::AddBeforeWait(Fn fn) { before_wait_.push_back(std::move(fn)); }

bool EventLoop::PrepareToBlock() {
  std::lock_guard<std::mutex> lock(mailbox_mu_);
  if (!mailbox_.empty()) return false;
  blocking_ = true;
  return true;
}

void EventLoop::DrainMailbox(bool wake_fd_readable) {
  if (wake_fd_readable) {
    uint64_t count;
    [[maybe_unused]] ssize_t n = read(wake_fd_, &count, sizeof(count));
  }
  {
    std::lock_guard<std::mutex> lock(mailbox_mu_);
    blocking_ = false;
    draining_.swap(mailbox_);
    // A write made after this point finds the fd readable at the next poll: one spare
    // iteration, never a lost wake-up.
    wake_pending_ = false;
  }
  in_drain_ = true;
  for (auto& fn : draining_) fn();
  draining_.clear();
  in_drain_ = false;
}

void EventLoop::RunPosted() {
  if (!in_drain_) DrainMailbox(false);
}

void EventLoop::RebuildPollSet() {
  poll_set_.clear();
  poll_set_.push_back(pollfd{wake_fd_, POLLIN, 0});
  for (const auto& [fd, w] : watchers_) {
    if (w.events != 0) poll_set_.push_back(pollfd{fd, w.events, 0});
  }
  poll_set_stale_ = false;
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

  if (poll_set_stale_) RebuildPollSet();
  Duration wait = max_wait;
  if (!timers_by_time_.empty()) {
    const TimePoint now = clock_.Now();
    const TimePoint next = timers_by_time_.begin()->first;
    wait = std::min(wait, next > now ? next - now : Duration::zero());
  }
  if (wait > Duration::zero() && !PrepareToBlock()) wait = Duration::zero();
  // Round up so a timer is never polled for "0 ms" in a busy loop before it is due.
  const auto ms = std::chrono::ceil<Millis>(wait).count();
  const int timeout =
      wait == Duration::max() ? -1 : static_cast<int>(std::min<long long>(ms, 1 << 30));
  const int ready = poll(poll_set_.data(), poll_set_.size(), timeout);
  if (ready < 0 && errno != EINTR) throw std::runtime_error("poll failed");

  // Handlers that change the watchers only mark poll_set_ stale; it is rebuilt at the
  // start of the next iteration, so it stays as poll() filled it until then.
  DrainMailbox(ready > 0 && (poll_set_[0].revents & POLLIN));
  for (size_t i = 1; ready > 0 && i < poll_set_.size(); ++i) {
    if (poll_set_[i].revents == 0) continue;
    auto it = watchers_.find(poll_set_[i].fd);  // a handler may have unwatched it
    if (it == watchers_.end()) continue;
    FdFn fn = it->second.fn;  // copy: the handler may re-register itself
    fn(poll_set_[i].revents);
  }
  FireTimers();
}

void EventLoop::Run() {
  while (!stopping_) RunOnce(Duration::max());
}

}  // namespace keel
