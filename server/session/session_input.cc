// The Session's side of multi round-trip requests (MCP 2026-07-28, MRTR-1): a modern call
// that needs the user's answer before it can run is answered with an InputRequiredResult,
// and its retry carries the answer. Today one question is asked this way: the approval of
// an approval-required tool (server/input/approval_input.h).
#include "protocol/schema_validator.h"
#include "server/input/approval_input.h"
#include "server/runtime/random_hex.h"
#include "server/session/session.h"

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
  if (ValidateCheckedSchema(spec.input_schema, call.arguments)) return true;
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
      ReplyError(request.id, step.error);
      return false;
  }
  return false;
}

}  // namespace keel
