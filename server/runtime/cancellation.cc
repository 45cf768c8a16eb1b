#include "server/runtime/cancellation.h"

#include <vector>

namespace keel {

CancellationToken::Registration::Registration(Registration&& other) noexcept
    : state_(std::move(other.state_)), id_(other.id_) {}

CancellationToken::Registration& CancellationToken::Registration::operator=(
    Registration&& other) noexcept {
  if (this != &other) {
    Registration old(std::move(*this));
    state_ = std::move(other.state_);
    id_ = other.id_;
  }
  return *this;
}

CancellationToken::Registration::~Registration() {
  if (!state_) return;
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->callbacks.erase(id_);
}

CancellationToken::CancellationToken() : state_(std::make_shared<State>()) {}

void CancellationToken::Cancel() {
  std::map<int, std::function<void()>> callbacks;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (state_->cancelled) return;
    state_->cancelled = true;
    callbacks.swap(state_->callbacks);
  }
  state_->cv.notify_all();
  // Run outside the lock: a callback may take the lock of whatever it wakes.
  for (auto& [id, fn] : callbacks) fn();
}

bool CancellationToken::IsCancelled() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->cancelled;
}

CancellationToken::Registration CancellationToken::OnCancel(std::function<void()> fn) const {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!state_->cancelled) {
      const int id = state_->next_id++;
      state_->callbacks.emplace(id, std::move(fn));
      return Registration(state_, id);
    }
  }
  fn();
  return Registration();
}

bool CancellationToken::WaitUntil(TimePoint deadline) const {
  std::unique_lock<std::mutex> lock(state_->mu);
  state_->cv.wait_until(lock, deadline, [this] { return state_->cancelled; });
  return state_->cancelled;
}

}  // namespace keel
