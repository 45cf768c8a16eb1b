// Admission: the checks a tools/call passes before keel takes it on — as a call, or as the
// creation of a durable task — in one order, with one set of answers:
//   1. the arguments match the tool's inputSchema                 invalid_arguments
//   2. a tool that needs an approval has one (OPS-3)               approval_required
//   3. a task: the idempotency key is valid (a call's tool reports its own key problem)
//   4. the server is not shutting down
//   5. a call of a runs_on_loop tool is admitted here: it takes no worker slot
//   6. a task: fewer than --max-tasks tasks are live               too_many_tasks
//   7. fewer than --max-inflight calls are queued or running       server_busy
// An admitted call comes out with its CallIdentity (tool, key; the coordinator adds the ids)
// and, for a call that goes to the pool, its effective policy.
//
// A refusal holds its text and structured error once; the caller sends it the way its
// request is answered: a call gets an isError result (a JSON-RPC error when the server is
// shutting down), a task creation a JSON-RPC error whose data is the structured error.
//
// Thread: the loop (the checks it is handed read the loop's state). Pure otherwise.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "server/call/call_identity.h"
#include "server/catalog/tool.h"
#include "server/policy/policy.h"

namespace keel {

using Json = nlohmann::json;

// OPS-3: whether a call of `spec` carries the approval it needs (always true when the tool
// needs none), and the answer when it does not: never retried, nothing ran.
bool HasApproval(const ToolSpec& spec, const Json& arguments);
std::string ApprovalRequiredText(const ToolSpec& spec);
Json ApprovalRequiredError(const ToolSpec& spec);

enum class AdmitAs { kCall, kTask };

struct Refusal {
  enum class Reason {
    kInvalidArguments,
    kApprovalRequired,
    kInvalidKey,
    kShuttingDown,
    kTooManyTasks,
    kServerBusy,
  };
  Reason reason;
  int code = 0;            // the JSON-RPC error code, when it is sent as an error
  std::string text;        // the error's message, or the result's text
  Json error;              // the structured error (result's structuredContent.error, or error data)
  bool as_result = false;  // a call answers it with an isError result, not a JSON-RPC error
};

// What admission reads of the server, at the moment of the check.
struct AdmissionState {
  bool shutting_down = false;
  size_t max_inflight = 0;  // quoted in server_busy
  size_t max_tasks = 0;     // quoted in too_many_tasks
  // Asked last, only when everything else passed: it may collect finished calls first.
  std::function<bool()> at_capacity;
  std::function<bool()> tasks_at_limit;  // asked for a task only
  const Policy* policy = nullptr;        // the policy in force
  bool shadow = false;                   // --shadow (OPS-1)
};

struct AdmittedCall {
  CallIdentity identity;
  // A call that goes to the pool: its effective policy. (A runs_on_loop call needs none; a
  // task's work takes the policy in force when it starts.)
  ToolPolicy policy;
};

std::variant<Refusal, AdmittedCall> Admit(AdmitAs as, Tool& tool, const Json& arguments,
                                          const Json& meta, const AdmissionState& state);

}  // namespace keel
