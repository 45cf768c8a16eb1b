#include "server/input/approval_input.h"

#include <variant>

#include "ledger/fingerprint.h"
#include "ledger/sha256.h"
#include "protocol/json_rpc.h"
#include "protocol/tool_result.h"
#include "server/call/admission.h"

namespace keel {
namespace {

constexpr std::string_view kMethod = "tools/call";
constexpr std::string_view kInputKey = "approval";
// The arguments quoted in the question, at most this long.
constexpr size_t kMaxQuotedArguments = 1000;

std::string Question(const ToolSpec& spec, const Json& arguments) {
  std::string quoted = DumpCompact(arguments);
  if (quoted.size() > kMaxQuotedArguments) quoted = quoted.substr(0, kMaxQuotedArguments) + "...";
  return "Approve running '" + spec.name + "' (" + std::string(EffectClassName(spec.effect)) +
         ", backend " + spec.backend_or_name() + ") with these arguments? " + quoted +
         " Nothing runs unless you accept.";
}

ApprovalStep Ask(const ToolSpec& spec, const Json& arguments, int64_t round_number,
                 const ApprovalRound& round) {
  StateClaims claims;
  claims.method = std::string(kMethod);
  claims.name = spec.name;
  claims.args_digest = ArgumentsDigest(arguments);
  claims.round = round_number;
  claims.expires_ms = round.now_ms + kApprovalStateTtlMs;
  claims.nonce = round.nonce;
  ApprovalStep step;
  step.kind = ApprovalStep::Kind::kAsk;
  step.result = {
      {"resultType", "input_required"},
      {"inputRequests",
       {{std::string(kInputKey),
         {{"method", "elicitation/create"},
          {"params",
           {{"mode", "form"},
            {"message", Question(spec, arguments)},
            {"requestedSchema", {{"type", "object"}, {"properties", Json::object()}}}}}}}}},
      {"requestState", SealState(claims, *round.keys)}};
  return step;
}

ApprovalStep Refuse(std::string what) {
  ApprovalStep step;
  step.kind = ApprovalStep::Kind::kRefused;
  step.error = InvalidParams(what);
  return step;
}

}  // namespace

bool WantsApprovalInput(const ToolSpec& spec, const Json& arguments,
                        const Json& client_capabilities) {
  if (HasApproval(spec, arguments) || !client_capabilities.is_object()) return false;
  const auto elicitation = client_capabilities.find("elicitation");
  if (elicitation == client_capabilities.end() || !elicitation->is_object()) return false;
  return elicitation->empty() || elicitation->contains("form");
}

ApprovalStep ApprovalByElicitation(const ToolSpec& spec, const Json& arguments,
                                   const Json& input_responses,
                                   const std::optional<std::string>& request_state,
                                   const ApprovalRound& round) {
  if (!request_state) return Ask(spec, arguments, 1, round);
  std::variant<StateClaims, std::string> opened =
      OpenState(*request_state, *round.keys, round.now_ms);
  if (const std::string* why = std::get_if<std::string>(&opened)) {
    return Refuse("requestState is refused (" + *why + "): retry the call without it");
  }
  const StateClaims& claims = std::get<StateClaims>(opened);
  if (!StateMatches(claims, kMethod, spec.name, ArgumentsDigest(arguments))) {
    return Refuse("requestState was given for another call (tool or arguments differ)");
  }
  const Json* answer = nullptr;
  if (input_responses.is_object()) {
    const auto found = input_responses.find(kInputKey);
    if (found != input_responses.end()) answer = &*found;
  }
  if (answer == nullptr) return Ask(spec, arguments, claims.round + 1, round);  // ask again
  const auto found = answer->is_object() ? answer->find("action") : answer->end();
  const std::string action =
      found != answer->end() && found->is_string() ? found->get<std::string>() : std::string();
  if (action != "accept" && action != "decline" && action != "cancel") {
    return Refuse(
        "inputResponses.approval must be an ElicitResult "
        "({\"action\": \"accept\" | \"decline\" | \"cancel\"})");
  }
  ApprovalStep step;
  if (action == "accept") {
    step.kind = ApprovalStep::Kind::kApproved;
    step.approval_id = "elicited-" + claims.nonce;
    return step;
  }
  step.kind = ApprovalStep::Kind::kDeclined;
  step.result =
      ErrorResult("Not approved: the user did not accept running '" + spec.name + "' (" + action +
                      "). Nothing ran.",
                  Json{{"type", "approval_declined"}, {"tool", spec.name}, {"action", action}});
  return step;
}

}  // namespace keel
