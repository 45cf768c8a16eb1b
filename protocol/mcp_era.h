// The protocol era: the MCP revision a request speaks, and the ONE place where it changes
// how the wire form maps to typed requests (mcp_types.h) and typed results (mcp_results.h)
// back to the wire. Handlers take typed requests and return typed results; they never ask
// which era they serve. Pure functions; reentrant; never throw.
//
// Today's eras are legacy ones, chosen once per connection by initialize
// (NegotiateWireForm):
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
// What 2026-07-28 (stateless, per-request _meta; reference/mcp-2026-07-28.md §1-2) will add
// here, and only here:
//  - WireFormOf(params._meta): a request whose _meta carries
//    io.modelcontextprotocol/protocolVersion or .../clientCapabilities is modern whatever
//    the connection negotiated. Its WireForm comes from that _meta, per request: a
//    missing required key is -32602, an unsupported version -32022 with data
//    {supported, requested}. No handshake: a modern WireForm is never stored.
//  - McpEra::kMcp20260728 in MethodOf: server/discover and subscriptions/listen are new;
//    initialize, ping, logging/setLevel, resources/(un)subscribe, tasks/result and
//    tasks/list answer -32601 (dispatch on the method before looking at params).
//  - DecodeRequest: the per-request facts travel on the typed request (client
//    capabilities, client info, io.modelcontextprotocol/logLevel instead of
//    logging/setLevel; request_meta.h keeps their keys); the tasks extension
//    (io.modelcontextprotocol/tasks) replaces params.task.
//  - ToWire: resultType "complete" on every result; _meta
//    io.modelcontextprotocol/serverInfo; ttlMs and cacheScope on tools/list (and discover);
//    no execution.taskSupport; a flat CreateTaskResult with resultType "task".
#pragma once

#include <optional>
#include <string_view>
#include <variant>

#include <nlohmann/json.hpp>

#include "protocol/mcp_error.h"
#include "protocol/mcp_results.h"
#include "protocol/mcp_types.h"

namespace keel {

using Json = nlohmann::json;

enum class McpEra { kUnnegotiated, kMcp20250618, kMcp20251125 };

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

enum class McpMethod {
  kInitialize,
  kPing,
  kListTools,
  kCallTool,
  kSetLevel,
  kGetTask,
  kTaskResult,
  kListTasks,
  kCancelTask,
};
// The request method `name` names in `wire`'s era; nullopt: MethodNotFound(name).
std::optional<McpMethod> MethodOf(const WireForm& wire, std::string_view name);

enum class McpNotification { kCancelled, kInitialized };
// The notification `name` names; nullopt: one keel ignores.
std::optional<McpNotification> NotificationOf(const WireForm& wire, std::string_view name);

using McpRequest =
    std::variant<InitializeRequest, PingRequest, ListToolsRequest, CallToolRequest, SetLevelRequest,
                 GetTaskRequest, TaskResultRequest, ListTasksRequest, CancelTaskRequest>;
// The typed request for `method`'s params (consumed), or the error that answers it
// (mcp_types.h rule 1). `known_tool` is DecodeCallToolRequest's.
Decoded<McpRequest> DecodeRequest(const WireForm& wire, McpMethod method, Json params,
                                  const KnownTool& known_tool = nullptr);

// The initialize answer in `wire`'s era: its version and capabilities.
InitializeResult InitializeResultFor(const WireForm& wire, Implementation server_info,
                                     std::string instructions);
// A result as `wire`'s era writes it.
Json ToWire(const WireForm& wire, const InitializeResult& result);
Json ToWire(const WireForm& wire, ListToolsResult result);
Json ToWire(const WireForm& wire, const ListTasksResult& result);

}  // namespace keel
