// ApprovalInput: OPS-3 through multi round-trip requests (MCP 2026-07-28, MRTR-2). A modern
// tools/call of a tool that needs an approval, sent without approval_id by a client that
// declares elicitation in form mode, asks the user instead of failing with
// approval_required. Legacy clients, and modern ones without elicitation, keep the
// approval_required answer of admission (server/call/admission.h).
//
// Rounds:
//  1. No answer yet (no inputResponses.approval, or no requestState: an approval is only
//     taken for a question keel asked): an InputRequiredResult whose inputRequests.approval
//     is an elicitation/create naming what would run (the tool, its effect and backend, the
//     arguments), and a requestState sealed for this tool and these arguments
//     (request_state.h). Asked again on every such retry, with a new state each round.
//  2. The retry carries the user's ElicitResult in inputResponses.approval with that state:
//       accept          the call runs with approval_id "elicited-<the state's nonce>", which
//                       scopes its idempotency key exactly as an approval_id argument does;
//       decline, cancel the call ends with an isError result of type approval_declined, and
//                       nothing ran.
//  3. Refused with -32602 (nothing ran, nothing asked): a requestState keel did not seal,
//     expired, or sealed for another tool or other arguments; an answer that is not an
//     ElicitResult ({action: accept|decline|cancel}). Other inputResponses keys are ignored.
// Pure: the caller supplies the keys, the wall clock and the nonce of a new round.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "protocol/mcp_error.h"
#include "server/catalog/tool.h"
#include "server/input/request_state.h"

namespace keel {

using Json = nlohmann::json;

// How long a question may wait for its answer.
inline constexpr int64_t kApprovalStateTtlMs = 10 * 60 * 1000;

// Whether this call goes through ApprovalByElicitation: the tool needs an approval, the
// arguments carry no approval_id, and `client_capabilities` (the request's own) declare
// elicitation in form mode ({} or with "form").
bool WantsApprovalInput(const ToolSpec& spec, const Json& arguments,
                        const Json& client_capabilities);

struct ApprovalStep {
  enum class Kind { kAsk, kApproved, kDeclined, kRefused };
  Kind kind = Kind::kAsk;
  Json result;              // kAsk: the InputRequiredResult; kDeclined: the isError result
  std::string approval_id;  // kApproved
  RpcError error;           // kRefused
};

struct ApprovalRound {
  const StateKeys* keys = nullptr;
  int64_t now_ms = 0;  // wall clock
  std::string nonce;   // names a new round's state (random hex)
};

// `input_responses`: params.inputResponses (null when absent); `request_state`: params
// .requestState.
ApprovalStep ApprovalByElicitation(const ToolSpec& spec, const Json& arguments,
                                   const Json& input_responses,
                                   const std::optional<std::string>& request_state,
                                   const ApprovalRound& round);

}  // namespace keel
