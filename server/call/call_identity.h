// CallIdentity: the facts of one tools/call (or one task's work) that do not change while it
// travels — which tool, under which idempotency key, and how keel, the client and the task
// store name it. Built once, at admission (Admit, admission.h), completed by the coordinator
// with the correlation id (RequestCoordinator::Begin / BeginTask), then carried: in the
// coordinator's entry (its result filter reads the Tool*), in the worker's job, in the trace
// and in the ToolContext, where tools read the key instead of computing it again.
//
// A value type; copies are independent. Thread: whoever holds a copy.
// Invariants: `tool` is non-null for every admitted call and names the tool `tool_name`;
// `idempotency_key` is CallKeyOf(meta, arguments) of the call's request (for a task's work,
// the key stored with the task when it was created, computed the same way).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "protocol/logging_level.h"
#include "server/call/idempotency_key.h"
#include "server/transport/exchange.h"

namespace keel {

using Json = nlohmann::json;

class Tool;
struct InputRound;

// What a call answers (server/surface/surface_answer.h): a tools/call's CallToolResult, or
// the result of resources/read, prompts/get or completion/complete made from the internal
// call that computed it.
enum class AnswerAs { kToolResult, kResource, kPrompt, kCompletion };
// What a call answers and, for a resource read, the URI read and the MIME type of a
// template's content.
struct AnswerTarget {
  AnswerAs as = AnswerAs::kToolResult;
  std::string uri;
  std::string mime_type;
};

struct CallIdentity {
  std::string tool_name;
  Tool* tool = nullptr;  // the registry's; it outlives every call
  // The approval-scoped idempotency key (IDEM-1, OPS-3); empty: none.
  std::string idempotency_key;
  // Why the client's key is invalid; empty: it is valid (or absent). A call with a problem is
  // refused by whoever needs the key (a write tool, a task creation) as invalid_arguments.
  std::string key_problem;
  std::string correlation_id;  // keel's id of the call ("k-7"), the same for all its attempts
  Json request_id;             // the JSON-RPC id of tools/call (may be 0); null for a task's work
  std::string task_id;         // empty unless the work is a task's
  // The exchange the tools/call came on: its answer, progress, log messages and questions go
  // there, and its close cancels the call (CancelExchange). A task's work belongs to no
  // exchange.
  ExchangeId exchange = kNoExchange;
  // Who sent it (Exchange::client), for --max-inflight-per-client; 0: counted for nobody.
  uint64_t client = 0;
  // The peer that sent the tools/call (server/transport/exchange.h): `request_id` is its id,
  // and only its notifications/cancelled reaches the call.
  PeerId peer = kNoPeer;
  // The request spoke MCP 2026-07-28 (protocol/mcp_era.h): its result carries resultType
  // and the server's identity, and its log messages follow `log_level`, its own
  // io.modelcontextprotocol/logLevel (nullopt: none at all). A legacy call's follow the
  // session's level; `log_level` is unused.
  bool modern = false;
  std::optional<LoggingLevel> log_level;
  // A modern call of a tool that may ask for input (ToolSpec::asks_for_input): the answers
  // of its earlier rounds and what sealing the next round needs (server/input/input_round.h).
  // Null for every other call: it cannot be asked anything.
  std::shared_ptr<const InputRound> input;
  // What the call answers, and for a resource read the URI read and the MIME type of a
  // template's content.
  AnswerAs answer = AnswerAs::kToolResult;
  std::string answer_uri;
  std::string answer_mime;
  // A modern call whose request declared the tasks extension, of a tool whose taskSupport is
  // not "forbidden": it may become a task while it runs (--task-after, ToolContext::
  // BecomeTask).
  bool may_become_task = false;
};

// The identity of a call of `tool` with these arguments and request _meta: its name, the
// Tool*, and the key (CallKeyOf). The caller adds the ids.
CallIdentity NewCallIdentity(Tool& tool, const Json& arguments, const Json& meta);

}  // namespace keel
