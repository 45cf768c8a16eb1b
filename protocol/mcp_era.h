// The protocol era: the MCP revision a request speaks, and the ONE place where it changes
// how the wire form maps to typed requests (mcp_types.h) and typed results (mcp_results.h)
// back to the wire. Handlers take typed requests and return typed results; they never ask
// which era they serve. Pure functions; reentrant; never throw.
//
// Legacy eras are chosen once per connection by initialize (NegotiateWireForm):
//  1. 2025-11-25 with a task store: tasks/get, tasks/result, tasks/list and tasks/cancel
//     exist; params.task of tools/call is kept; capabilities.tasks is offered; tools/list
//     shows each tool's execution.taskSupport.
//  2. 2025-06-18, or 2025-11-25 without a task store: none of that. tasks/* are unknown
//     methods (-32601), params.task is dropped unread, no tasks capability, no execution
//     member.
//  3. Before initialize (the default WireForm): the methods of 2, so that tasks/* is
//     -32601 while the session answers NotInitialized() to what needs initialize first.
//  An unknown requested version negotiates the latest (MCP lifecycle), as mcp_version.h.
//
// The modern era, 2026-07-28 (ModernWireForm; reference/mcp-2026-07-28.md §1-2), is a
// request's own, never stored: a request whose _meta carries the envelope
// (mcp_envelope.h) is served by it whatever the connection negotiated.
//  4. Methods: server/discover, tools/list and tools/call (with inputResponses and
//     requestState: multi round-trip requests; a legacy era leaves both unread).
//     initialize, ping, logging/setLevel, tasks/result and tasks/list answer -32601 (the
//     method is looked up before params are read). With a task store, the tasks extension
//     (io.modelcontextprotocol/tasks, SEP-2663) is offered in capabilities.extensions and
//     tasks/get, tasks/update and tasks/cancel exist (whether the request declared the
//     extension is the session's check: -32021). params.task is always dropped unread (the
//     server decides what becomes a task) and no tool lists execution.taskSupport.
//  6. Resources, prompts and completion (mcp_surface_types.h) exist in every era:
//     resources/list, resources/templates/list, resources/read, prompts/list, prompts/get
//     and completion/complete; resources/subscribe and resources/unsubscribe only in a
//     legacy era (2026-07-28 subscribes on subscriptions/listen). A modern resources/read
//     or prompts/get may carry inputResponses and requestState; a legacy one leaves them
//     unread. A resource that does not exist is -32602 with data.uri in 2026-07-28 and
//     -32002 in a legacy era (ResourceNotFound). Whether the server has any of it is the
//     server's to say (capabilities); which methods exist is not.
//  5. Results (FinishResult): resultType "complete" on every result unless it has its own
//     ("task", "input_required"), and the server's Implementation in
//     _meta["io.modelcontextprotocol/serverInfo"]; tools/list and server/discover carry
//     ttlMs and cacheScope; capabilities never offer the legacy tasks.
//  Legacy results carry none of 5.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "protocol/mcp_error.h"
#include "protocol/mcp_results.h"
#include "protocol/mcp_surface_types.h"
#include "protocol/mcp_types.h"

namespace keel {

using Json = nlohmann::json;

enum class McpEra { kUnnegotiated, kMcp20250618, kMcp20251125, kMcp20260728 };

// How one connection's requests and results look on the wire.
struct WireForm {
  McpEra era = McpEra::kUnnegotiated;
  std::string_view version;  // the negotiated protocolVersion (static storage); empty before
  bool tasks = false;        // durable tasks offered (rule 1)
  bool operator==(const WireForm&) const = default;
};

// initialize: the version answered for `requested_version` and what comes with it.
// `task_store`: keel runs with a task store (tasks can only be offered then).
WireForm NegotiateWireForm(std::string_view requested_version, bool task_store);
// The wire form of a request with a valid modern envelope (rules 4-5). `task_store`: the
// tasks extension is offered.
WireForm ModernWireForm(bool task_store);
inline bool IsModern(const WireForm& wire) { return wire.era == McpEra::kMcp20260728; }

enum class McpMethod {
  kInitialize,
  kPing,
  kDiscover,
  kListTools,
  kCallTool,
  kSetLevel,
  kGetTask,
  kTaskResult,
  kListTasks,
  kCancelTask,
  kUpdateTask,
  kListen,
  kListResources,
  kListResourceTemplates,
  kReadResource,
  kSubscribe,
  kUnsubscribe,
  kListPrompts,
  kGetPrompt,
  kComplete,
};
// The request method `name` names in `wire`'s era; nullopt: MethodNotFound(name).
std::optional<McpMethod> MethodOf(const WireForm& wire, std::string_view name);

enum class McpNotification { kCancelled, kInitialized };
// The notification `name` names; nullopt: one keel ignores.
std::optional<McpNotification> NotificationOf(const WireForm& wire, std::string_view name);

using McpRequest =
    std::variant<InitializeRequest, PingRequest, DiscoverRequest, ListToolsRequest, CallToolRequest,
                 SetLevelRequest, GetTaskRequest, TaskResultRequest, ListTasksRequest,
                 CancelTaskRequest, UpdateTaskRequest, ListenRequest, ListResourcesRequest,
                 ListResourceTemplatesRequest, ReadResourceRequest, SubscribeRequest,
                 ListPromptsRequest, GetPromptRequest, CompleteRequest>;
// The typed request for `method`'s params (consumed), or the error that answers it
// (mcp_types.h rule 1). `known_tool` is DecodeCallToolRequest's.
Decoded<McpRequest> DecodeRequest(const WireForm& wire, McpMethod method, Json params,
                                  const KnownTool& known_tool = nullptr);

// resources/read of a URI keel does not serve (rule 6).
RpcError ResourceNotFound(const WireForm& wire, const std::string& uri);

// The initialize answer in `wire`'s era: its version and capabilities.
InitializeResult InitializeResultFor(const WireForm& wire, Implementation server_info,
                                     std::string instructions);
// The server/discover answer (rule 5): every version keel speaks and the capabilities of
// `wire`'s era.
DiscoverResult DiscoverResultFor(const WireForm& wire, std::string instructions, CacheHints cache);
// A result as `wire`'s era writes it (what the era lacks is dropped: rules 2, 4, 5).
Json ToWire(const WireForm& wire, const InitializeResult& result);
Json ToWire(const WireForm& wire, const DiscoverResult& result);
Json ToWire(const WireForm& wire, ListToolsResult result);
Json ToWire(const WireForm& wire, const ListTasksResult& result);
// Any result object on its way out (rule 5; unchanged in a legacy era): resultType
// "complete" unless the result already has one, and `server_info` in its _meta.
Json FinishResult(const WireForm& wire, Json result, const Implementation& server_info);

// What rule 5 adds to a modern result, encoded once per server (a modern echo pays for
// rebuilding and serializing the server's identity otherwise: about a third more CPU).
class ResultStamp {
 public:
  explicit ResultStamp(Implementation server_info);
  const Implementation& server_info() const { return server_info_; }
  // `"_meta":{...serverInfo...},"resultType":"complete"`.
  std::string_view members() const { return members_; }

 private:
  Implementation server_info_;
  std::string members_;
};
// The response line for `result` to request `id` as `wire`'s era writes it: the same bytes'
// meaning as EncodeResult(id, FinishResult(wire, result, ...)), with the stamp spliced in as
// text when the result has neither _meta nor resultType (nearly always).
std::string EncodeResultAs(const WireForm& wire, const Json& id, const Json& result,
                           const ResultStamp& stamp);

}  // namespace keel
