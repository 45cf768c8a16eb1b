#include "server/call/admission.h"

#include <optional>

#include "protocol/error_codes.h"
#include "protocol/schema_validator.h"
#include "server/catalog/effective_policy.h"

namespace keel {
namespace {

Refusal Refuse(Refusal::Reason reason, int code, std::string text, Json error, bool as_result) {
  return Refusal{reason, code, std::move(text), std::move(error), as_result};
}

// Checks 1-3: what the request itself gets wrong.
std::optional<Refusal> RequestProblem(AdmitAs as, const ToolSpec& spec, const Json& arguments,
                                      const CallIdentity& identity) {
  const bool call = as == AdmitAs::kCall;
  // The registry checked the schema once, at registration; validation skips that step.
  if (auto problem = spec.validate_arguments ? ValidateCheckedSchema(spec.input_schema, arguments)
                                             : std::nullopt) {
    return Refuse(Refusal::Reason::kInvalidArguments, kInvalidParams,
                  "Invalid arguments for tool '" + spec.name + "': " + *problem,
                  Json{{"type", "invalid_arguments"}, {"message", *problem}}, call);
  }
  if (!HasApproval(spec, arguments)) {
    return Refuse(Refusal::Reason::kApprovalRequired, kInvalidParams, ApprovalRequiredText(spec),
                  ApprovalRequiredError(spec), call);
  }
  if (!call && !identity.key_problem.empty()) {
    return Refuse(Refusal::Reason::kInvalidKey, kInvalidParams,
                  "Invalid params: " + identity.key_problem, Json{{"type", "invalid_arguments"}},
                  false);
  }
  return std::nullopt;
}

// Checks 4, 6 and 7: whether the server has room. Nullopt: admitted.
std::optional<Refusal> RoomProblem(AdmitAs as, const ToolSpec& spec, const AdmissionState& state) {
  const bool call = as == AdmitAs::kCall;
  if (state.shutting_down) {
    return Refuse(
        Refusal::Reason::kShuttingDown, kInternalError,
        call ? "Server shutting down: call not started" : "Server shutting down: task not created",
        Json(), false);
  }
  if (call && spec.runs_on_loop) return std::nullopt;
  if (!call && state.tasks_at_limit()) {
    return Refuse(
        Refusal::Reason::kTooManyTasks, kInternalError,
        "Too many tasks: " + std::to_string(state.max_tasks) +
            " tasks are live (--max-tasks); wait for one to finish or cancel one",
        Json{{"type", "too_many_tasks"}, {"max_tasks", state.max_tasks}, {"retry_after_ms", 1000}},
        false);
  }
  if (state.at_capacity()) {
    return Refuse(
        Refusal::Reason::kServerBusy, kInternalError,
        "Server busy: " + std::to_string(state.max_inflight) +
            " calls are already queued or running (--max-inflight); retry later",
        Json{
            {"type", "server_busy"}, {"max_inflight", state.max_inflight}, {"retry_after_ms", 100}},
        call);
  }
  return std::nullopt;
}

}  // namespace

bool HasApproval(const ToolSpec& spec, const Json& arguments) {
  if (!spec.approval_required) return true;
  const auto it = arguments.find("approval_id");
  return it != arguments.end() && it->is_string() && !it->get_ref<const std::string&>().empty();
}

std::string ApprovalRequiredText(const ToolSpec& spec) {
  return "Approval required: '" + spec.name +
         "' runs only with an approval_id argument naming "
         "the approval that authorises this call. Nothing ran. Ask for an approval, then call "
         "again with its id (one approval authorises one intent).";
}

Json ApprovalRequiredError(const ToolSpec& spec) {
  return Json{{"type", "approval_required"}, {"tool", spec.name}, {"argument", "approval_id"}};
}

std::variant<Refusal, AdmittedCall> Admit(AdmitAs as, Tool& tool, const Json& arguments,
                                          const Json& meta, const AdmissionState& state) {
  const ToolSpec& spec = tool.spec();
  AdmittedCall admitted;
  admitted.identity = NewCallIdentity(tool, arguments, meta);
  if (auto refusal = RequestProblem(as, spec, arguments, admitted.identity)) return *refusal;
  if (auto refusal = RoomProblem(as, spec, state)) return *refusal;
  if (as == AdmitAs::kCall && !spec.runs_on_loop) {
    admitted.policy = EffectivePolicy(*state.policy, spec, state.shadow);
  }
  return admitted;
}

}  // namespace keel
