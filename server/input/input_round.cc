#include "server/input/input_round.h"

#include "protocol/client_capabilities.h"
#include "protocol/error_codes.h"
#include "protocol/json_rpc.h"
#include "protocol/request_meta.h"
#include "protocol/tool_result.h"

namespace keel {
namespace {

constexpr std::string_view kCallMethod = "tools/call";

// A well-formed question: a non-empty object of {method (one of the three), params?}.
bool WellFormed(const Json& input_requests) {
  if (!input_requests.is_object() || input_requests.empty()) return false;
  for (const auto& [key, request] : input_requests.items()) {
    if (key.empty() || !request.is_object()) return false;
    const auto method = request.find("method");
    if (method == request.end() || !method->is_string()) return false;
    if (*method != "elicitation/create" && *method != "sampling/createMessage" &&
        *method != "roots/list") {
      return false;
    }
    const auto params = request.find("params");
    if (params != request.end() && !params->is_object()) return false;
  }
  return true;
}

std::string Keys(const Json& input_requests) {
  std::string keys;
  if (!input_requests.is_object()) return keys;
  for (const auto& [key, request] : input_requests.items()) {
    if (!keys.empty()) keys += ", ";
    keys += key;
  }
  return keys;
}

}  // namespace

std::variant<InputRound, RpcError> BeginInputRound(const std::string& tool, const Json& arguments,
                                                   const Json& client_capabilities,
                                                   const Json& input_responses,
                                                   const std::optional<std::string>& request_state,
                                                   const InputClock& clock) {
  InputRound round;
  round.client_capabilities = client_capabilities;
  round.args_digest = ArgumentsDigest(arguments);
  round.answers = Json::object();
  if (request_state) {
    std::variant<StateClaims, std::string> opened =
        OpenState(*request_state, *clock.keys, clock.now_ms);
    if (const std::string* why = std::get_if<std::string>(&opened)) {
      return InvalidParams("requestState refused: " + *why);
    }
    const StateClaims& claims = std::get<StateClaims>(opened);
    if (!StateMatches(claims, kCallMethod, tool, round.args_digest)) {
      return InvalidParams("requestState refused: it was given for another call");
    }
    if (claims.answers.is_object()) round.answers = claims.answers;
    round.round = claims.round + 1;
    round.tool_state = claims.tool_state;
  }
  if (input_responses.is_object()) {
    for (const auto& [key, answer] : input_responses.items()) {
      if (!answer.is_object()) {
        return InvalidParams("inputResponses." + QuoteForError(key) +
                             " must be an object (an ElicitResult, CreateMessageResult or "
                             "ListRootsResult)");
      }
      round.answers[key] = answer;
    }
    if (!request_state && !input_responses.empty()) round.round = 2;
  }
  return round;
}

Json TaskInputQuestion(const std::string& tool, Json asked) {
  if (WellFormed(asked["inputRequests"])) return asked;
  return ErrorResult("Tool '" + tool +
                         "' asked for input in a form keel cannot send (inputRequests must "
                         "map keys to elicitation/create, sampling/createMessage or "
                         "roots/list requests)",
                     Json{{"type", "tool_error"}});
}

std::variant<Json, RpcError> FinishInputRound(const InputRound& round, const std::string& tool,
                                              Json asked, const InputClock& clock) {
  const Json& requests = asked["inputRequests"];
  if (!WellFormed(requests)) {
    return ErrorResult("Tool '" + tool +
                           "' asked for input in a form keel cannot send (inputRequests must "
                           "map keys to elicitation/create, sampling/createMessage or "
                           "roots/list requests)",
                       Json{{"type", "tool_error"}});
  }
  Json missing = MissingCapabilities(requests, round.client_capabilities);
  if (!missing.empty()) {
    return RpcError{kMissingRequiredClientCapability,
                    "Missing required client capability: tool '" + tool + "' needs " +
                        DumpCompact(missing) + " to ask for " + Keys(requests),
                    Json{{"requiredCapabilities", std::move(missing)}}};
  }
  if (DumpCompact(round.answers).size() > kMaxCarriedAnswerBytes) {
    return InvalidParams("inputResponses: the answers of this call exceed " +
                         std::to_string(kMaxCarriedAnswerBytes) + " bytes");
  }
  StateClaims claims;
  claims.method = std::string(kCallMethod);
  claims.name = tool;
  claims.args_digest = round.args_digest;
  claims.round = round.round;
  claims.expires_ms = clock.now_ms + kInputStateTtlMs;
  claims.nonce = clock.nonce;
  if (!round.answers.empty()) claims.answers = round.answers;
  if (const auto state = asked.find("requestState"); state != asked.end() && state->is_string()) {
    claims.tool_state = state->get<std::string>();
  }
  Json result = {{"resultType", "input_required"},
                 {"inputRequests", requests},
                 {"requestState", SealState(claims, *clock.keys)}};
  return result;
}

Json InputUnavailable(const std::string& tool, const Json& asked, const std::string& why,
                      const Json& missing) {
  const Json requests = asked.is_object() ? asked.value("inputRequests", Json()) : Json();
  Json error = {{"type", "input_unavailable"}, {"inputRequests", requests}};
  if (missing.is_object() && !missing.empty()) error["missingCapabilities"] = missing;
  return ErrorResult("Tool '" + tool + "' needs input from the client (" + Keys(requests) +
                         "), but " + why + "; nothing was done.",
                     error);
}

}  // namespace keel
