// InputRound: a tool's own questions through multi round-trip requests (MCP 2026-07-28,
// MRTR-1). A tool whose spec says it may ask (ToolSpec::asks_for_input) answers
// AskForInput (protocol/tool_result.h) when it needs input to go on; it reads the answers of
// the earlier rounds with ToolContext::InputResponse. This file is how a request's era puts
// that on the wire; the tool never knows which era asked.
//
//  1. A modern call (2026-07-28) of such a tool begins a round (BeginInputRound): no
//     requestState is round 1 with the request's inputResponses as its answers (the answer
//     alone suffices, spec: MRTR); a requestState keel sealed for this tool and these
//     arguments brings back the earlier rounds' answers and the tool's own state, and the
//     request's inputResponses are added over them. A state keel did not seal, expired, or
//     sealed for another call, and an inputResponses value that is not an object, are -32602;
//     nothing runs.
//  2. The tool asks (FinishInputRound): the question goes out as an InputRequiredResult with
//     a new requestState sealing every answer so far, the tool's own state and the next
//     round number; unless an input request needs a capability the request's
//     clientCapabilities do not declare (elicitation/create: elicitation, form mode unless
//     the request says url; sampling/createMessage: sampling, sampling.tools when it passes
//     tools; roots/list: roots): then -32021 with data.requiredCapabilities, nothing asked. A
//     question that is not an object of {method, params} objects, or asks nothing, is the
//     tool's fault: an isError result (type tool_error).
//  3. A legacy call (server_asks) sends the questions to the client as 2025-11-25
//     server-to-client requests (client_requests.h; the call's worker waits for them and
//     runs the tool again with the answers), when the capabilities the client declared at
//     initialize cover them. Otherwise, and for a task's work (no one waits to answer), the
//     call ends with InputUnavailable: an isError result of type input_unavailable naming the
//     questions.
//  4. The work of a task of the 2026-07-28 tasks extension may ask (TaskInputQuestion): its
//     question, when well formed, parks the task (server/tasks/task_manager.h, invariant
//     9); one that is not is the tool's fault, as in rule 2.
// Pure: the caller supplies the keys, the wall clock and the nonce.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "protocol/client_capabilities.h"
#include "protocol/mcp_error.h"
#include "server/input/request_state.h"

namespace keel {

using Json = nlohmann::json;

// How long a question may wait for its answer.
inline constexpr int64_t kInputStateTtlMs = 10 * 60 * 1000;
// Rounds of questions one legacy call may send the client (rule 3).
inline constexpr int kMaxAskRounds = 16;
// The answers a state carries, at most this many bytes as JSON: more is refused (-32602).
inline constexpr size_t kMaxCarriedAnswerBytes = 64 * 1024;

struct InputRound {
  Json client_capabilities;  // the request's (null for {})
  std::string args_digest;   // ArgumentsDigest of the call's arguments
  int64_t round = 1;         // this call's round: 1 before any question was answered
  Json answers;              // an object: every answer so far, by the tool's keys
  std::string tool_state;    // the tool's own requestState of the last round; empty: none
  // A legacy call: keel sends the questions to the client itself, as requests
  // (client_requests.h), and runs the tool again with the answers; client_capabilities are
  // then the ones the client declared at initialize.
  bool server_asks = false;
};

struct InputClock {
  const StateKeys* keys = nullptr;
  int64_t now_ms = 0;  // wall clock
  std::string nonce;   // names a new round's state (random hex)
};

// Rule 1. `input_responses`: params.inputResponses (null when absent, else an object).
std::variant<InputRound, RpcError> BeginInputRound(const std::string& tool, const Json& arguments,
                                                   const Json& client_capabilities,
                                                   const Json& input_responses,
                                                   const std::optional<std::string>& request_state,
                                                   const InputClock& clock);

// Rule 2: `asked` is the tool's AskForInput result; the InputRequiredResult to send, or the
// -32021 error.
std::variant<Json, RpcError> FinishInputRound(const InputRound& round, const std::string& tool,
                                              Json asked, const InputClock& clock);

// Rule 4: `asked` (an AskForInput result) as it is, or the tool_error isError result.
Json TaskInputQuestion(const std::string& tool, Json asked);

// Rule 3: `why` ends the sentence "Tool '<tool>' needs input from the client (<keys>), but
// ...". `missing`: the capabilities the client lacks (added as missingCapabilities when not
// empty).
Json InputUnavailable(const std::string& tool, const Json& asked, const std::string& why,
                      const Json& missing = Json());

}  // namespace keel
