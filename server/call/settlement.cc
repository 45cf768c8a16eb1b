#include "server/call/settlement.h"

#include <atomic>

#include <spdlog/spdlog.h>

namespace keel {
namespace {

std::atomic<uint64_t> g_violations{0};

void LogViolation(std::string_view what) {
  g_violations.fetch_add(1, std::memory_order_relaxed);
  spdlog::error("settle-once violated: {}", what);
}

std::atomic<SettlementViolationHandler> g_handler{&LogViolation};

void Report(std::string_view what) { g_handler.load()(what); }

}  // namespace

std::string_view CallStateName(CallState state) {
  switch (state) {
    case CallState::kQueued:
      return "queued";
    case CallState::kRunning:
      return "running";
    case CallState::kCompleted:
      return "completed";
    case CallState::kFailed:
      return "failed";
    case CallState::kCancelled:
      return "cancelled";
    case CallState::kTimedOut:
      return "timed_out";
    case CallState::kShutDown:
      return "shut_down";
  }
  return "unknown";
}

Settlement::Settlement(Settlement&& other) noexcept
    : settled_(other.settled_), state_(other.state_), reason_(std::move(other.reason_)) {
  other.moved_from_ = true;
}

Settlement& Settlement::operator=(Settlement&& other) noexcept {
  if (this != &other) {
    if (!settled_ && !moved_from_) Report("an unsettled request was overwritten");
    settled_ = other.settled_;
    moved_from_ = false;
    state_ = other.state_;
    reason_ = std::move(other.reason_);
    other.moved_from_ = true;
  }
  return *this;
}

Settlement::~Settlement() {
  if (!settled_ && !moved_from_) Report("a request was dropped without being settled");
}

void Settlement::Settle(CallState terminal, std::string reason) {
  if (!IsTerminal(terminal)) {
    Report("settled with a non-terminal state");
    return;
  }
  if (settled_) {
    Report(std::string("settled twice: ") + std::string(CallStateName(state_)) + " then " +
           std::string(CallStateName(terminal)));
    return;
  }
  settled_ = true;
  state_ = terminal;
  reason_ = std::move(reason);
}

void SetSettlementViolationHandler(SettlementViolationHandler handler) {
  g_handler.store(handler != nullptr ? handler : &LogViolation);
}

uint64_t SettlementViolations() { return g_violations.load(std::memory_order_relaxed); }

}  // namespace keel
