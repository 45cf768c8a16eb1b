// RequestCoordinator::WaitForClient: while keel waits for a legacy client's answers to a
// tool's questions, the call's idle clock is paused and its maximum clock runs on (TMO-1,
// MRTR-1). Forced on a fake clock: no threads, no sleeps.
#include <optional>

#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"
#include "fakes/recording_sink.h"
#include "server/call/request_coordinator.h"

namespace keel::wait_for_client_test {
namespace {

struct Fixture {
  Fixture() : coordinator(sink, clock, RequestCoordinator::Options()) {}
  // A running call with a 1 s idle clock and a 10 s maximum.
  RequestCoordinator::Admitted Start() {
    CallIdentity identity;
    identity.tool_name = "ask";
    identity.request_id = 1;
    auto call =
        coordinator.Begin(std::move(identity), Json(), CallLimits{Millis(1000), Millis(10000)});
    REQUIRE(call.control->TryStart());
    return call;
  }
  void AdvanceTo(int ms) {
    clock.Advance(start + Millis(ms) - clock.Now());
    coordinator.RunDue();
  }
  std::optional<std::string> Layer() const {
    const auto answers = sink.ForId(1);
    if (answers.empty()) return std::nullopt;
    return answers[0]["result"]["structuredContent"]["error"]["layer"].get<std::string>();
  }

  FakeClock clock;
  TimePoint start = clock.Now();
  RecordingSink sink;
  RequestCoordinator coordinator;
};

}  // namespace

TEST_CASE("waiting for the client pauses the idle clock, and the answer restarts it", "[TMO-1]") {
  Fixture f;
  auto call = f.Start();
  f.AdvanceTo(500);
  f.coordinator.WaitForClient(call.generation, true);
  f.AdvanceTo(5000);  // the user takes their time: no idle timeout
  CHECK_FALSE(f.Layer().has_value());
  f.coordinator.WaitForClient(call.generation, false);  // answered at 5 s
  f.AdvanceTo(5900);
  CHECK_FALSE(f.Layer().has_value());
  f.AdvanceTo(6000);  // 1 s of silence after the answer
  CHECK(f.Layer() == "idle");
}

TEST_CASE("the maximum clock runs while keel waits for the client", "[TMO-1]") {
  Fixture f;
  auto call = f.Start();
  f.coordinator.WaitForClient(call.generation, true);
  f.AdvanceTo(9999);
  CHECK_FALSE(f.Layer().has_value());
  f.AdvanceTo(10000);
  CHECK(f.Layer() == "max");
}

}  // namespace keel::wait_for_client_test
