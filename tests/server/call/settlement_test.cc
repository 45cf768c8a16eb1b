// Settlement: the settle-once type reports a second settle and a request dropped unsettled.
// Proves the DC-1 guard the coordinator relies on (one terminal state per request).
#include "server/call/settlement.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace keel::settlement_test {
namespace {

std::vector<std::string>* g_seen = nullptr;
void Record(std::string_view what) { g_seen->emplace_back(what); }

// Routes violations to a list for the duration of one test, then restores the guard.
struct RecordViolations {
  explicit RecordViolations(std::vector<std::string>& seen) {
    g_seen = &seen;
    SetSettlementViolationHandler(&Record);
  }
  ~RecordViolations() {
    SetSettlementViolationHandler(nullptr);
    g_seen = nullptr;
  }
};

TEST_CASE("the first terminal state stands and a second settle is reported (DC-1)",
          "[settlement][DC-1]") {
  std::vector<std::string> seen;
  {
    RecordViolations guard(seen);
    Settlement s;
    CHECK_FALSE(s.settled());
    s.Settle(CallState::kCancelled, "notifications/cancelled");
    s.Settle(CallState::kCompleted, "result");
    CHECK(s.state() == CallState::kCancelled);
    CHECK(s.reason() == "notifications/cancelled");
  }
  REQUIRE(seen.size() == 1);
  CHECK(seen[0] == "settled twice: cancelled then completed");
}

TEST_CASE("a request dropped without being settled is reported (DC-1)", "[settlement][DC-1]") {
  std::vector<std::string> seen;
  {
    RecordViolations guard(seen);
    { Settlement unsettled; }
    Settlement moved_from;
    Settlement target(std::move(moved_from));  // only the new owner is accountable
    target.Settle(CallState::kCompleted, "result");
    Settlement not_terminal;
    not_terminal.Settle(CallState::kRunning, "oops");
    not_terminal.Settle(CallState::kFailed, "error");
  }
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == "a request was dropped without being settled");
  CHECK(seen[1] == "settled with a non-terminal state");
}

TEST_CASE("terminal states have the names traces use", "[settlement]") {
  CHECK(CallStateName(CallState::kTimedOut) == "timed_out");
  CHECK(CallStateName(CallState::kShutDown) == "shut_down");
  CHECK_FALSE(IsTerminal(CallState::kRunning));
  CHECK(IsTerminal(CallState::kCancelled));
}

}  // namespace
}  // namespace keel::settlement_test
