// CancellationToken: how the loop tells a running tool to stop. Cancellation is
// cooperative and racy by nature: a tool may finish just as the token is set, which is why
// the RequestCoordinator (not the token) decides whether a result is written.
//
// Thread-safety: every member may be called from any thread. Copies share one state.
// Invariants: once cancelled, always cancelled; each registered callback runs at most once,
// either inside Cancel() or, if already cancelled, inside OnCancel() itself.
#pragma once

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "server/runtime/clock.h"

namespace keel {

class CancellationToken {
 public:
  // Unregisters its callback when destroyed; the callback never runs after that.
  class Registration {
   public:
    Registration() = default;
    Registration(Registration&& other) noexcept;
    Registration& operator=(Registration&& other) noexcept;
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    ~Registration();

   private:
    friend class CancellationToken;
    struct State;
    Registration(std::shared_ptr<State> state, int id) : state_(std::move(state)), id_(id) {}
    std::shared_ptr<State> state_;
    int id_ = 0;
  };

  CancellationToken();

  void Cancel();
  bool IsCancelled() const;

  // Runs `fn` once when the token is cancelled (now, if it already is).
  [[nodiscard]] Registration OnCancel(std::function<void()> fn) const;

  // Blocks until `deadline` or cancellation. Returns true if cancelled. This is the
  // cooperative wait for tools (the `sleep` test tool), not a test helper.
  bool WaitUntil(TimePoint deadline) const;

 private:
  using State = Registration::State;
  std::shared_ptr<State> state_;
};

struct CancellationToken::Registration::State {
  mutable std::mutex mu;
  std::condition_variable cv;
  bool cancelled = false;
  int next_id = 1;
  std::map<int, std::function<void()>> callbacks;
};

}  // namespace keel
