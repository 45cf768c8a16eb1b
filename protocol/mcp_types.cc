#include "protocol/mcp_types.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "protocol/cursor.h"
#include "protocol/error_codes.h"
#include "protocol/request_meta.h"

namespace keel {
namespace {

// params[key] when params is an object that has it and it is not null, else nullptr.
const Json* Member(const Json& params, std::string_view key) {
  if (!params.is_object()) return nullptr;
  const auto it = params.find(key);
  if (it == params.end() || it->is_null()) return nullptr;
  return &*it;
}

// A client's non-negative JSON integer as int64, saturated: unsigned values from 2^63 up do
// not fit, and get<int64_t>() would wrap them negative.
int64_t SaturatedInt64(const Json& value) {
  if (value.is_number_unsigned()) {
    return static_cast<int64_t>(
        std::min<uint64_t>(value.get<uint64_t>(), std::numeric_limits<int64_t>::max()));
  }
  return value.get<int64_t>();
}

bool IsWholeNonNegative(const Json& value) {
  return value.is_number_unsigned() || (value.is_number_integer() && value.get<int64_t>() >= 0);
}

// The taskId of tasks/get, tasks/result and tasks/cancel.
template <typename Request>
Decoded<Request> DecodeTaskId(const Json& params) {
  const Json* task_id = Member(params, "taskId");
  if (task_id == nullptr || !task_id->is_string() ||
      task_id->get_ref<const std::string&>().empty()) {
    return InvalidParams("taskId (a non-empty string) is required");
  }
  return Request{task_id->get<std::string>()};
}

// A cursor member for `list`, when the request has one (a page after the first).
Json CursorParams(std::string_view list, size_t offset) {
  if (offset == 0) return Json::object();
  return Json{{"cursor", EncodeCursor(list, offset)}};
}

}  // namespace

Decoded<InitializeRequest> DecodeInitializeRequest(const Json& params) {
  const Json* version = Member(params, "protocolVersion");
  if (version == nullptr || !version->is_string() ||
      version->get_ref<const std::string&>().empty()) {
    return InvalidParams("initialize needs params.protocolVersion (a string)");
  }
  InitializeRequest request;
  request.protocol_version = version->get<std::string>();
  if (const Json* capabilities = Member(params, "capabilities")) {
    request.capabilities = *capabilities;
  }
  if (const Json* client_info = Member(params, "clientInfo")) request.client_info = *client_info;
  return request;
}

Decoded<ListToolsRequest> DecodeListToolsRequest(const Json& params) {
  const Json* cursor = Member(params, "cursor");
  if (cursor == nullptr) return ListToolsRequest{};
  std::optional<size_t> offset;
  if (cursor->is_string()) offset = DecodeCursor("tools", cursor->get_ref<const std::string&>());
  if (!offset) return InvalidToolsCursor();
  return ListToolsRequest{*offset};
}

Decoded<CallToolRequest> DecodeCallToolRequest(Json params, const KnownTool& known_tool) {
  const auto name = params.is_object() ? params.find("name") : params.end();
  if (!params.is_object() || name == params.end() || !name->is_string()) {
    return InvalidParams("tools/call needs a string name");
  }
  CallToolRequest request;
  request.name = std::move(name->get_ref<std::string&>());
  if (known_tool && !known_tool(request.name)) return UnknownTool(request.name);
  if (const auto args = params.find("arguments"); args != params.end() && !args->is_null()) {
    if (!args->is_object()) return InvalidParams("arguments must be an object");
    request.arguments = std::move(*args);
  }
  // Only the _meta keys keel reads are kept; the rest is freed here, before the call is
  // queued, stored as a task, or run.
  if (const auto meta = params.find("_meta"); meta != params.end()) {
    request.meta = std::move(*meta);
    if (auto problem = KeepUsedMeta(request.meta)) return InvalidParams(*problem);
    if (request.meta.is_object()) {
      const auto token = request.meta.find("progressToken");
      if (token != request.meta.end()) request.progress_token = *token;
    }
  }
  if (const auto task = params.find("task"); task != params.end() && !task->is_null()) {
    request.task = std::move(*task);
  }
  if (const auto answers = params.find("inputResponses");
      answers != params.end() && !answers->is_null()) {
    if (!answers->is_object()) return InvalidParams("inputResponses must be an object");
    request.input_responses = std::move(*answers);
  }
  if (const auto state = params.find("requestState"); state != params.end()) {
    if (!state->is_string()) return InvalidParams("requestState must be a string");
    request.request_state = std::move(state->get_ref<std::string&>());
  }
  return request;
}

Decoded<TaskMetadata> DecodeTaskMetadata(const Json& task) {
  if (!task.is_object()) return InvalidParams("task must be an object ({\"ttl\"?: ms})");
  TaskMetadata metadata;
  if (const Json* ttl = Member(task, "ttl")) {
    if (!IsWholeNonNegative(*ttl)) {
      return InvalidParams("task.ttl must be a non-negative integer (milliseconds) or null");
    }
    metadata.ttl_ms = SaturatedInt64(*ttl);
  }
  return metadata;
}

Decoded<SetLevelRequest> DecodeSetLevelRequest(const Json& params) {
  std::optional<LoggingLevel> level;
  if (const Json* name = Member(params, "level"); name != nullptr && name->is_string()) {
    level = ParseLoggingLevel(name->get_ref<const std::string&>());
  }
  if (!level) {
    return InvalidParams(
        "level must be one of debug, info, notice, warning, error, critical, alert, emergency");
  }
  return SetLevelRequest{*level};
}

Decoded<GetTaskRequest> DecodeGetTaskRequest(const Json& params) {
  return DecodeTaskId<GetTaskRequest>(params);
}

Decoded<TaskResultRequest> DecodeTaskResultRequest(const Json& params) {
  return DecodeTaskId<TaskResultRequest>(params);
}

Decoded<CancelTaskRequest> DecodeCancelTaskRequest(const Json& params) {
  return DecodeTaskId<CancelTaskRequest>(params);
}

Decoded<UpdateTaskRequest> DecodeUpdateTaskRequest(const Json& params) {
  const Decoded<GetTaskRequest> task = DecodeTaskId<GetTaskRequest>(params);
  if (!task.ok()) return task.error();
  const Json* responses = Member(params, "inputResponses");
  if (responses == nullptr || !responses->is_object()) {
    return InvalidParams("inputResponses (an object: inputRequests key -> answer) is required");
  }
  return UpdateTaskRequest{task.value().task_id, *responses};
}

Decoded<ListenRequest> DecodeListenRequest(const Json& params) {
  const Json* notifications = Member(params, "notifications");
  if (notifications == nullptr || !notifications->is_object()) {
    return InvalidParams("notifications (an object: which notifications to send) is required");
  }
  ListenRequest request;
  const auto tools = notifications->find("toolsListChanged");
  request.tools_list_changed =
      tools != notifications->end() && tools->is_boolean() && tools->get<bool>();
  const auto flag = [&](const char* name) {
    const auto it = notifications->find(name);
    return it != notifications->end() && it->is_boolean() && it->get<bool>();
  };
  request.prompts_list_changed = flag("promptsListChanged");
  request.resources_list_changed = flag("resourcesListChanged");
  if (const auto uris = notifications->find("resourceSubscriptions");
      uris != notifications->end() && !uris->is_null()) {
    if (!uris->is_array()) {
      return InvalidParams("notifications.resourceSubscriptions must be an array of URIs");
    }
    for (const Json& uri : *uris) {
      if (!uri.is_string()) {
        return InvalidParams("notifications.resourceSubscriptions must be an array of URIs");
      }
      request.resource_subscriptions.push_back(uri.get<std::string>());
    }
  }
  return request;
}

Decoded<ListTasksRequest> DecodeListTasksRequest(const Json& params) {
  const Json* cursor = Member(params, "cursor");
  if (cursor == nullptr) return ListTasksRequest{};
  std::optional<size_t> after;
  if (cursor->is_string()) after = DecodeCursor("tasks", cursor->get_ref<const std::string&>());
  // keel's cursors hold a row number; one past int64 is forged and would wrap negative.
  if (!after || *after > static_cast<size_t>(std::numeric_limits<int64_t>::max())) {
    return RpcError{kInvalidParams, "Failed to list tasks: Invalid cursor", Json()};
  }
  return ListTasksRequest{static_cast<int64_t>(*after)};
}

std::optional<CancelledNotification> DecodeCancelledNotification(const Json& params) {
  if (!params.is_object()) return std::nullopt;
  const auto id = params.find("requestId");
  if (id == params.end()) return std::nullopt;
  CancelledNotification notification{*id, std::nullopt};
  if (const Json* reason = Member(params, "reason"); reason != nullptr && reason->is_string()) {
    notification.reason = reason->get<std::string>();
  }
  return notification;
}

void to_json(Json& json, const InitializeRequest& request) {
  json = {{"protocolVersion", request.protocol_version}};
  if (!request.capabilities.is_null()) json["capabilities"] = request.capabilities;
  if (!request.client_info.is_null()) json["clientInfo"] = request.client_info;
}

void to_json(Json& json, const PingRequest&) { json = Json::object(); }

void to_json(Json& json, const DiscoverRequest&) { json = Json::object(); }

void to_json(Json& json, const ListToolsRequest& request) {
  json = CursorParams("tools", request.offset);
}

void to_json(Json& json, const TaskMetadata& task) {
  json = Json::object();
  if (task.ttl_ms) json["ttl"] = *task.ttl_ms;
}

void to_json(Json& json, const CallToolRequest& request) {
  json = {{"name", request.name}, {"arguments", request.arguments}};
  if (!request.meta.is_null()) json["_meta"] = request.meta;
  if (request.task) json["task"] = *request.task;
  if (!request.input_responses.is_null()) json["inputResponses"] = request.input_responses;
  if (request.request_state) json["requestState"] = *request.request_state;
}

void to_json(Json& json, const SetLevelRequest& request) {
  json = {{"level", std::string(LoggingLevelName(request.level))}};
}

void to_json(Json& json, const GetTaskRequest& request) { json = {{"taskId", request.task_id}}; }

void to_json(Json& json, const TaskResultRequest& request) { json = {{"taskId", request.task_id}}; }

void to_json(Json& json, const CancelTaskRequest& request) { json = {{"taskId", request.task_id}}; }

void to_json(Json& json, const ListenRequest& request) {
  json = {{"notifications", {{"toolsListChanged", request.tools_list_changed}}}};
  Json& notifications = json["notifications"];
  if (request.prompts_list_changed) notifications["promptsListChanged"] = true;
  if (request.resources_list_changed) notifications["resourcesListChanged"] = true;
  if (!request.resource_subscriptions.empty()) {
    notifications["resourceSubscriptions"] = request.resource_subscriptions;
  }
}

void to_json(Json& json, const UpdateTaskRequest& request) {
  json = {{"taskId", request.task_id}, {"inputResponses", request.input_responses}};
}

void to_json(Json& json, const ListTasksRequest& request) {
  json = CursorParams("tasks", static_cast<size_t>(request.after));
}

void to_json(Json& json, const CancelledNotification& notification) {
  json = {{"requestId", notification.request_id}};
  if (notification.reason) json["reason"] = *notification.reason;
}

}  // namespace keel
