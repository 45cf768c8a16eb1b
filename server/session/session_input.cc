// The Session's side of multi round-trip requests (MCP 2026-07-28, MRTR-1): a modern call
// that needs the client's answer is answered with an InputRequiredResult, and its retry
// carries the answer. Two kinds of question: keel's own, the approval of an
// approval-required tool, asked before the call runs (server/input/approval_input.h); and a
// tool's own, asked by the tool as it runs (server/input/input_round.h).
#include "protocol/schema_validator.h"
#include "protocol/tool_result.h"
#include "server/input/approval_input.h"
#include "server/runtime/random_hex.h"
#include "server/session/session.h"
#include "server/surface/surface_answer.h"

namespace keel {

bool Session::ApproveByElicitation(const RequestContext& request, const ToolSpec& spec,
                                   CallToolRequest& call) {
  static const Json kNoCapabilities;
  const Json& capabilities =
      request.client_capabilities != nullptr ? *request.client_capabilities : kNoCapabilities;
  if (!IsModern(request.wire) || !WantsApprovalInput(spec, call.arguments, capabilities)) {
    return true;  // admission answers as before: approved already, or approval_required
  }
  // Arguments that admission would refuse are refused first (invalid_arguments): nobody is
  // asked to approve a call that cannot run.
  if (spec.validate_arguments && ValidateCheckedSchema(spec.input_schema, call.arguments)) {
    return true;
  }
  const ApprovalRound round{&options_.state_keys, wall_clock_ms_(), RandomHex(16)};
  ApprovalStep step =
      ApprovalByElicitation(spec, call.arguments, call.input_responses, call.request_state, round);
  switch (step.kind) {
    case ApprovalStep::Kind::kApproved:
      call.arguments["approval_id"] = std::move(step.approval_id);
      return true;
    case ApprovalStep::Kind::kAsk:
      Reply(request, step.result);
      return false;
    case ApprovalStep::Kind::kDeclined:
      Reply(request, ForOutputSchema(spec, std::move(step.result)));
      return false;
    case ApprovalStep::Kind::kRefused:
      ReplyError(request, step.error);
      return false;
  }
  return false;
}

std::shared_ptr<const InputRound> Session::BeginInput(const RequestContext& request,
                                                      const ToolSpec& spec,
                                                      const CallToolRequest& call, bool* refused) {
  *refused = false;
  if (!IsModern(request.wire) || !spec.asks_for_input) return nullptr;
  static const Json kNoCapabilities;
  const Json& capabilities =
      request.client_capabilities != nullptr ? *request.client_capabilities : kNoCapabilities;
  const InputClock clock{&options_.state_keys, wall_clock_ms_(), std::string()};
  std::variant<InputRound, RpcError> begun = BeginInputRound(
      spec.name, call.arguments, capabilities, call.input_responses, call.request_state, clock);
  if (const RpcError* error = std::get_if<RpcError>(&begun)) {
    *refused = true;
    ReplyError(request, *error);
    return nullptr;
  }
  return std::make_shared<const InputRound>(std::move(std::get<InputRound>(begun)));
}

Json Session::FilterCallResult(const CallIdentity& call, Json result) const {
  if (call.tool == nullptr) return result;
  // Rule 4 of input_round.h: an extension task's work asking parks its task.
  if (IsInputRequired(result) && call.modern && !call.task_id.empty()) {
    return TaskInputQuestion(call.tool_name, std::move(result));
  }
  // Rule 3: only a modern call that is no task's work can be asked.
  if (IsInputRequired(result) && (!call.modern || !call.input || !call.task_id.empty())) {
    std::string why = "this call cannot be asked anything";
    if (!call.task_id.empty()) {
      why = "it asked during a task's work, where nobody waits to answer";
    } else if (call.input && call.input->server_asks) {
      why = "it kept asking after " + std::to_string(kMaxAskRounds) + " rounds of answers";
    }
    return InputUnavailable(call.tool_name, result, why);
  }
  return ForOutputSchema(call.tool->spec(), std::move(result));
}

std::string Session::EncodeCallResult(const CallIdentity& call, const Json& result) {
  const WireForm wire = call.modern ? ModernWireForm(tasks_ != nullptr) : LegacyWireOf(call.peer);
  if (!call.modern || !call.input || !IsInputRequired(result)) {
    if (call.answer == AnswerAs::kToolResult) {
      return EncodeResultAs(wire, call.request_id, result, stamp_);
    }
    std::variant<Json, RpcError> answered =
        SurfaceAnswer(wire, call.answer, result, call.answer_uri, call.answer_mime);
    if (const RpcError* error = std::get_if<RpcError>(&answered)) {
      return EncodeRpcError(call.request_id, *error);
    }
    return EncodeResultAs(wire, call.request_id, std::get<Json>(answered), stamp_);
  }
  const InputClock clock{&options_.state_keys, wall_clock_ms_(), RandomHex(16)};
  std::variant<Json, RpcError> finished =
      FinishInputRound(*call.input, call.tool_name, result, clock);
  if (const RpcError* error = std::get_if<RpcError>(&finished)) {
    return EncodeRpcError(call.request_id, *error);
  }
  return EncodeResultAs(wire, call.request_id, std::get<Json>(finished), stamp_);
}

}  // namespace keel
