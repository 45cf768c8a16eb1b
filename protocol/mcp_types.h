// Typed MCP requests and notifications: what keel reads of each method's params, decoded
// once at the edge so that handlers work on fields instead of raw JSON. Pure functions;
// reentrant; never throw.
//
// These are the shapes 2025-06-18 and 2025-11-25 share; what differs between eras (which
// methods exist, whether params.task counts) is decided in mcp_era.h, the one place that
// maps the wire form to these types and back. Results are in mcp_results.h.
//
// Decoding (the Decode* functions):
//  1. Each returns the typed request, or the exact JSON-RPC error keel answers for that
//     malformed request (mcp_error.h); `params` is what the envelope decoder left: an
//     object, or null when the request had none.
//  2. Checks run in the order keel has always made them, and the first failing one
//     answers. tools/call needs the registry between its checks (an unknown tool is
//     reported before bad arguments): DecodeCallToolRequest asks `known_tool`.
//  3. Only what keel keeps is kept: _meta shrinks to the keys in request_meta.h.
// Encoding (to_json, found by nlohmann's ADL, so `Json(request)` works) writes the wire
// form back; decoding what it wrote gives the same request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/logging_level.h"
#include "protocol/mcp_error.h"

namespace keel {

using Json = nlohmann::json;

struct InitializeRequest {
  std::string protocol_version;  // non-empty; negotiated by NegotiateWireForm (mcp_era.h)
  Json capabilities;             // as sent (null when absent): keel reads none of it yet
  Json client_info;              // as sent (null when absent)
  bool operator==(const InitializeRequest&) const = default;
};

struct PingRequest {
  bool operator==(const PingRequest&) const = default;
};

// server/discover (MCP 2026-07-28): no params beyond the envelope (mcp_envelope.h).
struct DiscoverRequest {
  bool operator==(const DiscoverRequest&) const = default;
};

struct ListToolsRequest {
  size_t offset = 0;  // the decoded cursor: 0 for the first page
  bool operator==(const ListToolsRequest&) const = default;
};

// params.task of a task-augmented tools/call (MCP 2025-11-25 TaskMetadata).
struct TaskMetadata {
  std::optional<int64_t> ttl_ms;  // requested ttl, saturated at INT64_MAX; nullopt: none
  bool operator==(const TaskMetadata&) const = default;
};

struct CallToolRequest {
  std::string name;
  Json arguments = Json::object();  // always an object
  Json meta;            // the kept _meta keys (request_meta.h), or null when none was sent
  Json progress_token;  // _meta.progressToken: a string, a number, or null (none)
  // params.task, present and not null; its shape is checked by DecodeTaskMetadata once the
  // tool is known to take tasks. Always empty in an era without tasks (mcp_era.h).
  std::optional<Json> task;
  // MCP 2026-07-28 multi round-trip requests: the answers to what an InputRequiredResult
  // asked (params.inputResponses: an object, or null when absent) and the state it handed
  // out (params.requestState). Always empty in a legacy era (mcp_era.h).
  Json input_responses;
  std::optional<std::string> request_state;
  bool operator==(const CallToolRequest&) const = default;
};

struct SetLevelRequest {
  LoggingLevel level = LoggingLevel::kInfo;
  bool operator==(const SetLevelRequest&) const = default;
};

// tasks/get, tasks/result and tasks/cancel name one task.
struct GetTaskRequest {
  std::string task_id;  // non-empty
  bool operator==(const GetTaskRequest&) const = default;
};
struct TaskResultRequest {
  std::string task_id;  // non-empty
  bool operator==(const TaskResultRequest&) const = default;
};
struct CancelTaskRequest {
  std::string task_id;  // non-empty
  bool operator==(const CancelTaskRequest&) const = default;
};

// tasks/update (the 2026-07-28 tasks extension): answers to a task's inputRequests.
struct UpdateTaskRequest {
  std::string task_id;   // non-empty
  Json input_responses;  // an object: inputRequests key -> the client's answer
  bool operator==(const UpdateTaskRequest&) const = default;
};

// subscriptions/listen (MCP 2026-07-28): what the client wants to hear about on this stream.
struct ListenRequest {
  bool tools_list_changed = false;      // notifications.toolsListChanged
  bool prompts_list_changed = false;    // notifications.promptsListChanged
  bool resources_list_changed = false;  // notifications.resourcesListChanged
  // notifications.resourceSubscriptions: the URIs whose updates the client wants.
  std::vector<std::string> resource_subscriptions;
  bool operator==(const ListenRequest&) const = default;
};

struct ListTasksRequest {
  int64_t after = 0;  // the decoded cursor: the last row of the previous page, 0 for the first
  bool operator==(const ListTasksRequest&) const = default;
};

struct CancelledNotification {
  Json request_id;  // as sent: any JSON value (an id keel never issued is simply unknown)
  std::optional<std::string> reason;
  bool operator==(const CancelledNotification&) const = default;
};

Decoded<InitializeRequest> DecodeInitializeRequest(const Json& params);
Decoded<ListToolsRequest> DecodeListToolsRequest(const Json& params);
// Whether a tool of that name exists (checked right after the name is read). Null: any
// name is taken.
using KnownTool = std::function<bool(const std::string& name)>;
// `params` is consumed: the arguments and _meta move into the request.
Decoded<CallToolRequest> DecodeCallToolRequest(Json params, const KnownTool& known_tool);
Decoded<TaskMetadata> DecodeTaskMetadata(const Json& task);
Decoded<SetLevelRequest> DecodeSetLevelRequest(const Json& params);
Decoded<GetTaskRequest> DecodeGetTaskRequest(const Json& params);
Decoded<TaskResultRequest> DecodeTaskResultRequest(const Json& params);
Decoded<CancelTaskRequest> DecodeCancelTaskRequest(const Json& params);
Decoded<ListTasksRequest> DecodeListTasksRequest(const Json& params);
Decoded<UpdateTaskRequest> DecodeUpdateTaskRequest(const Json& params);
// `notifications` is required and an object; keys keel does not serve are ignored (the
// acknowledgement lists only what it honours).
Decoded<ListenRequest> DecodeListenRequest(const Json& params);
// A notification is never answered: a malformed one (no params object, no requestId) is
// nullopt, to be ignored (CAN-3).
std::optional<CancelledNotification> DecodeCancelledNotification(const Json& params);

// to_json: the name nlohmann's ADL looks for.
// NOLINTBEGIN(readability-identifier-naming)
void to_json(Json& json, const InitializeRequest& request);
void to_json(Json& json, const PingRequest& request);
void to_json(Json& json, const DiscoverRequest& request);
void to_json(Json& json, const ListToolsRequest& request);
void to_json(Json& json, const TaskMetadata& task);
void to_json(Json& json, const CallToolRequest& request);
void to_json(Json& json, const SetLevelRequest& request);
void to_json(Json& json, const GetTaskRequest& request);
void to_json(Json& json, const TaskResultRequest& request);
void to_json(Json& json, const CancelTaskRequest& request);
void to_json(Json& json, const ListTasksRequest& request);
void to_json(Json& json, const UpdateTaskRequest& request);
void to_json(Json& json, const ListenRequest& request);
void to_json(Json& json, const CancelledNotification& notification);
// NOLINTEND(readability-identifier-naming)

}  // namespace keel
