// Admission (admission.h): one set of checks, in one order, for a tools/call and for the
// creation of a durable task; each refusal said once and answered the way its request is.
#include "server/call/admission.h"

#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "protocol/error_codes.h"
#include "server/catalog/effective_policy.h"
#include "server/tools/fn_tool.h"

namespace keel::admission_test {
namespace {

std::unique_ptr<Tool> MakeTool(bool approval = false, bool on_loop = false) {
  ToolSpec spec;
  spec.name = "charge";
  spec.description = "test";
  spec.input_schema = Json{{"type", "object"},
                           {"properties", {{"cents", {{"type", "integer"}}}}},
                           {"required", {"cents"}}};
  spec.approval_required = approval;
  spec.runs_on_loop = on_loop;
  return std::make_unique<FnTool>(std::move(spec), [](ToolContext&) { return TextResult("ok"); });
}

struct Server {
  Policy policy = BuiltinPolicyWithTimeouts(30000, 55000);
  bool full = false;
  bool tasks_full = false;
  int capacity_checks = 0;

  AdmissionState State(bool shutting_down = false) {
    AdmissionState state;
    state.shutting_down = shutting_down;
    state.max_inflight = 4;
    state.max_tasks = 2;
    state.at_capacity = [this] {
      ++capacity_checks;
      return full;
    };
    state.tasks_at_limit = [this] { return tasks_full; };
    state.policy = &policy;
    return state;
  }
};

Refusal RefusalOf(const std::variant<Refusal, AdmittedCall>& admission) {
  REQUIRE(std::holds_alternative<Refusal>(admission));
  return std::get<Refusal>(admission);
}

}  // namespace

TEST_CASE("a call and a task creation refused for capacity get the same server_busy answer",
          "[call][admission]") {
  Server server;
  server.full = true;
  auto tool = MakeTool();
  const Json args = {{"cents", 5}};
  const Refusal call = RefusalOf(Admit(AdmitAs::kCall, *tool, args, Json(), server.State()));
  const Refusal task = RefusalOf(Admit(AdmitAs::kTask, *tool, args, Json(), server.State()));
  CHECK(call.reason == Refusal::Reason::kServerBusy);
  CHECK(task.reason == Refusal::Reason::kServerBusy);
  CHECK(call.text ==
        "Server busy: 4 calls are already queued or running (--max-inflight); retry later");
  CHECK(task.text == call.text);
  CHECK(call.error == Json{{"type", "server_busy"}, {"max_inflight", 4}, {"retry_after_ms", 100}});
  CHECK(task.error == call.error);
  // Only the envelope differs: a call's isError result, a task creation's JSON-RPC error.
  CHECK(call.as_result);
  CHECK_FALSE(task.as_result);
  CHECK(task.code == kInternalError);
}

TEST_CASE("admission checks the arguments, then the approval, then shutdown, then capacity",
          "[call][admission]") {
  Server server;
  server.full = true;
  auto tool = MakeTool(/*approval=*/true);
  const Refusal schema =
      RefusalOf(Admit(AdmitAs::kCall, *tool, Json{{"cents", "x"}}, Json(), server.State(true)));
  CHECK(schema.reason == Refusal::Reason::kInvalidArguments);
  CHECK(schema.error["type"] == "invalid_arguments");
  const Refusal approval =
      RefusalOf(Admit(AdmitAs::kCall, *tool, Json{{"cents", 1}}, Json(), server.State(true)));
  CHECK(approval.reason == Refusal::Reason::kApprovalRequired);
  CHECK(approval.error == ApprovalRequiredError(tool->spec()));
  const Json approved = {{"cents", 1}, {"approval_id", "ap-1"}};
  const Refusal shutdown =
      RefusalOf(Admit(AdmitAs::kCall, *tool, approved, Json(), server.State(true)));
  CHECK(shutdown.reason == Refusal::Reason::kShuttingDown);
  CHECK(shutdown.text == "Server shutting down: call not started");
  CHECK_FALSE(shutdown.as_result);  // a call's shutdown refusal is a JSON-RPC error
  CHECK(shutdown.error.is_null());
  CHECK(server.capacity_checks == 0);  // capacity is asked last: it may collect results
  CHECK(RefusalOf(Admit(AdmitAs::kCall, *tool, approved, Json(), server.State())).reason ==
        Refusal::Reason::kServerBusy);
  CHECK(server.capacity_checks == 1);
}

TEST_CASE(
    "a task creation refuses an invalid key and too many tasks, a call leaves the key "
    "to its tool",
    "[call][admission]") {
  Server server;
  auto tool = MakeTool();
  const Json args = {{"cents", 1}, {"idempotencyKey", ""}};
  const Refusal key = RefusalOf(Admit(AdmitAs::kTask, *tool, args, Json(), server.State()));
  CHECK(key.reason == Refusal::Reason::kInvalidKey);
  CHECK(key.code == kInvalidParams);
  CHECK(key.text ==
        "Invalid params: arguments.idempotencyKey must be a string of 1 to 255 "
        "characters");
  const auto call = Admit(AdmitAs::kCall, *tool, args, Json(), server.State());
  REQUIRE(std::holds_alternative<AdmittedCall>(call));
  CHECK_FALSE(std::get<AdmittedCall>(call).identity.key_problem.empty());

  server.tasks_full = true;
  const Refusal tasks =
      RefusalOf(Admit(AdmitAs::kTask, *tool, Json{{"cents", 1}}, Json(), server.State()));
  CHECK(tasks.reason == Refusal::Reason::kTooManyTasks);
  CHECK(tasks.error["max_tasks"] == 2);
  CHECK(RefusalOf(Admit(AdmitAs::kTask, *tool, Json{{"cents", 1}}, Json(), server.State(true)))
            .text == "Server shutting down: task not created");
}

TEST_CASE(
    "an admitted call carries its scoped key and its effective policy, and a runs_on_loop "
    "call is admitted at capacity",
    "[call][admission]") {
  Server server;
  auto tool = MakeTool();
  const auto admitted = Admit(AdmitAs::kCall, *tool, Json{{"cents", 1}, {"approval_id", "ap"}},
                              Json{{"dev.keel/idempotency-key", "k-1"}}, server.State());
  REQUIRE(std::holds_alternative<AdmittedCall>(admitted));
  const AdmittedCall& call = std::get<AdmittedCall>(admitted);
  CHECK(call.identity.tool == tool.get());
  CHECK(call.identity.tool_name == "charge");
  CHECK(call.identity.idempotency_key == "k-1|approval:ap");
  CHECK(call.policy.timeouts.max_ms == 55000);

  server.full = true;
  server.capacity_checks = 0;
  auto on_loop = MakeTool(false, /*on_loop=*/true);
  CHECK(std::holds_alternative<AdmittedCall>(
      Admit(AdmitAs::kCall, *on_loop, Json{{"cents", 1}}, Json(), server.State())));
  CHECK(server.capacity_checks == 0);
}

}  // namespace keel::admission_test
