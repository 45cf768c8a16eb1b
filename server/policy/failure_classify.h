// Failure classification (RET-1): from what an attempt returned (an MCP CallToolResult) to
// the failure class the retry decision needs. Pure; no I/O.
//
// The convention every tool follows (built-in, simulated backend, command tools): a failed
// attempt returns isError: true with structuredContent.error = {"type": T, ...}. Optional
// members: "failure_class" (one of not_sent, rejected_transient, rejected_permanent,
// ambiguous) overrides the class the type implies; "retry_after_ms" (a non-negative integer)
// is the backend's retry-after hint.
//
//   type                                                   class
//   not_sent, ledger_busy                                  not_sent
//   transport_unavailable, backend_429, backend_503,
//   rate_limited, idempotency_in_progress                  rejected_transient
//   attempt_timeout, lost_response, ambiguous              ambiguous
//   anything else (invalid_arguments, policy_denied,
//   approval_required, kill_switch, backend_4xx, ...),
//   or isError without a structured error                  rejected_permanent
//
// A result without isError: true is a success: Classify returns nullopt.
// An unknown "failure_class" string is ignored (the type decides).
// A type "backend_<status>" (a command's {"error": {"status": N}}, the demo backends) names
// the backend's HTTP status: backend_status, so nobody reads it back from the string.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "server/policy/policy_types.h"

namespace keel {

struct AttemptFailure {
  FailureClass failure = FailureClass::kRejectedPermanent;
  std::string type;                       // error.type, or "tool_error" when absent
  std::optional<int64_t> retry_after_ms;  // error.retry_after_ms when a non-negative integer
  std::optional<int> backend_status;      // N of a type "backend_N" (digits only, N < 1000)
};

std::optional<AttemptFailure> ClassifyResult(const nlohmann::json& result);

}  // namespace keel
