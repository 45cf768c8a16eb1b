// Makes a settle-once violation (a request settled twice, or dropped unsettled) impossible
// to miss in the unit tests: it aborts the test run with a message, wherever it happens.
// Tests that prove the violation detection install their own handler for their duration.
#include <cstdio>
#include <cstdlib>
#include <string>

#define CATCH_CONFIG_EXTERNAL_INTERFACES  // for TestEventListenerBase
#include <catch2/catch.hpp>

#include "server/call/settlement.h"

namespace keel {

void AbortOnViolation(std::string_view what) {
  std::fprintf(stderr, "settle-once violation in a test: %s\n", std::string(what).c_str());
  std::abort();
}

}  // namespace keel

// Global: Catch2 v2's registration macro pastes the name into an identifier.
struct KeelSettlementGuard : Catch::TestEventListenerBase {
  using TestEventListenerBase::TestEventListenerBase;
  void testRunStarting(const Catch::TestRunInfo&) override {
    keel::SetSettlementViolationHandler(&keel::AbortOnViolation);
  }
};

CATCH_REGISTER_LISTENER(KeelSettlementGuard)
