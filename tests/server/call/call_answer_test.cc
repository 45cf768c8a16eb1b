// The typed answer of a settle (call_answer.h) and the call identity the coordinator carries:
// a task's on_settle gets a JSON-RPC error or nothing as such, never packed into JSON, and the
// result filter gets the call's Tool* instead of looking the tool up by name.
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"
#include "fakes/recording_sink.h"
#include "server/call/request_coordinator.h"
#include "server/tools/fn_tool.h"

namespace keel::call_answer_test {
namespace {

CallIdentity TaskWork(const std::string& task_id) {
  CallIdentity identity;
  identity.tool_name = "slow";
  identity.task_id = task_id;
  return identity;
}

}  // namespace

TEST_CASE(
    "a task's work settled by shutdown gets the JSON-RPC error typed, and one cancelled "
    "gets no answer",
    "[coordinator][tasks]") {
  FakeClock clock;
  RecordingSink sink;
  RequestCoordinator coordinator(sink, clock, RequestCoordinator::Options());
  std::vector<std::pair<CallState, CallAnswer>> settled;
  const auto on_settle = [&](CallState state, CallAnswer answer) {
    settled.emplace_back(state, std::move(answer));
  };
  const CallLimits limits{Millis(0), Millis(60000)};
  coordinator.BeginTask(TaskWork("t-1"), Json(), Json(), limits, on_settle);
  auto cancelled = coordinator.BeginTask(TaskWork("t-2"), Json(), Json(), limits, on_settle);
  CHECK(cancelled.identity.request_id.is_null());
  REQUIRE(coordinator.CancelTask(cancelled.generation));
  CHECK(coordinator.ShutDownAll(-32603, "going away") == 1);

  REQUIRE(settled.size() == 2);
  CHECK(settled[0].first == CallState::kCancelled);
  CHECK(std::holds_alternative<std::monostate>(settled[0].second));
  CHECK(settled[1].first == CallState::kShutDown);
  const JsonRpcError* error = std::get_if<JsonRpcError>(&settled[1].second);
  REQUIRE(error != nullptr);
  CHECK(error->code == -32603);
  CHECK(error->message == "going away");
  CHECK(sink.messages().empty());  // a task's outcome goes to its on_settle, never to stdout
}

TEST_CASE("the result filter gets the call's Tool*, for the tool's result and for a timeout's",
          "[coordinator]") {
  FakeClock clock;
  RecordingSink sink;
  RequestCoordinator coordinator(sink, clock, RequestCoordinator::Options());
  ToolSpec spec;
  spec.name = "slow";
  FnTool tool(spec, [](ToolContext&) { return TextResult("ok"); });
  std::vector<const Tool*> filtered;
  coordinator.set_result_filter([&](const CallIdentity& call, Json result) {
    filtered.push_back(call.tool);
    result["_meta"] = Json{{"filtered_for", call.tool_name}};
    return result;
  });
  auto begin = [&](int id) {
    CallIdentity identity;
    identity.tool_name = "slow";
    identity.tool = &tool;
    identity.request_id = id;
    return coordinator.Begin(std::move(identity), Json(), CallLimits{Millis(0), Millis(1000)});
  };
  auto done = begin(1);
  begin(2);
  CHECK(done.identity.correlation_id == "k-1");
  coordinator.Complete(done.generation, TextResult("ok"));
  clock.Advance(Millis(1000));
  coordinator.RunDue();  // call 2 times out on its maximum

  CHECK(filtered == std::vector<const Tool*>{&tool, &tool});
  REQUIRE(sink.ForId(1).size() == 1);
  REQUIRE(sink.ForId(2).size() == 1);
  CHECK(sink.ForId(1)[0]["result"]["_meta"]["filtered_for"] == "slow");
  CHECK(sink.ForId(2)[0]["result"]["structuredContent"]["error"]["type"] == "timeout");
  CHECK(sink.ForId(2)[0]["result"]["_meta"]["filtered_for"] == "slow");
}

}  // namespace keel::call_answer_test
