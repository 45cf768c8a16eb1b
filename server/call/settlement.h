// Settlement: the fate of one request, decided exactly once.
//
// A request is queued, then running, then reaches exactly one terminal state. The first
// terminal event wins; the RequestCoordinator checks settled() before it settles, so a
// second Settle() is a bug in keel, not a race, and so is destroying a Settlement that was
// never settled (a request that silently vanished). Both are reported to the violation
// handler: in production it logs and counts; the unit tests install one that aborts, so
// such a bug cannot pass a test unnoticed.
//
// Thread: one owner (the loop thread). The handler may be swapped by tests only.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace keel {

enum class CallState : uint8_t {
  kQueued,
  kRunning,
  // Terminal states.
  kCompleted,  // the tool's result was sent
  kFailed,     // the tool's error result was sent (isError, or the tool threw)
  kCancelled,  // notifications/cancelled won: nothing was sent
  kTimedOut,   // the idle or maximum clock ran out: a timeout result was sent
  kShutDown,   // the server stopped before the call finished: an error was sent
};

std::string_view CallStateName(CallState state);
inline bool IsTerminal(CallState state) { return state >= CallState::kCompleted; }

class Settlement {
 public:
  Settlement() = default;
  Settlement(Settlement&& other) noexcept;
  Settlement& operator=(Settlement&& other) noexcept;
  Settlement(const Settlement&) = delete;
  Settlement& operator=(const Settlement&) = delete;
  // Reports a violation if the request was never settled.
  ~Settlement();

  // Records the terminal state and why. Reports a violation if already settled (the first
  // settlement stands) or if `terminal` is not a terminal state.
  void Settle(CallState terminal, std::string reason);

  bool settled() const { return settled_; }
  // The terminal state; kQueued until settled.
  CallState state() const { return state_; }
  const std::string& reason() const { return reason_; }

 private:
  bool settled_ = false;
  bool moved_from_ = false;
  CallState state_ = CallState::kQueued;
  std::string reason_;
};

// Called with a description of each violation. nullptr restores the default (log + count).
using SettlementViolationHandler = void (*)(std::string_view what);
void SetSettlementViolationHandler(SettlementViolationHandler handler);
// Violations seen so far by the default handler.
uint64_t SettlementViolations();

}  // namespace keel
