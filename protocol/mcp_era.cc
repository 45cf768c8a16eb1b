#include "protocol/mcp_era.h"

#include <cstdint>
#include <utility>

#include "protocol/json_rpc.h"
#include "protocol/mcp_envelope.h"
#include "protocol/mcp_version.h"

namespace keel {
namespace {

// Where a method exists.
enum class Eras : uint8_t {
  kLegacy,       // every legacy era
  kLegacyTasks,  // a legacy era with tasks (rule 1)
  kModern,       // 2026-07-28 only (rule 4)
  kModernTasks,  // 2026-07-28 with the tasks extension (rule 4)
  kTasks,        // any era with tasks: legacy (rule 1) or the extension (rule 4)
  kBoth,         // every era
};

struct MethodName {
  std::string_view name;
  McpMethod method;
  Eras eras;
};

// Every request method keel serves.
constexpr MethodName kMethods[] = {
    {"initialize", McpMethod::kInitialize, Eras::kLegacy},
    {"ping", McpMethod::kPing, Eras::kLegacy},
    {"server/discover", McpMethod::kDiscover, Eras::kModern},
    {"tools/list", McpMethod::kListTools, Eras::kBoth},
    {"tools/call", McpMethod::kCallTool, Eras::kBoth},
    {"logging/setLevel", McpMethod::kSetLevel, Eras::kLegacy},
    {"tasks/get", McpMethod::kGetTask, Eras::kTasks},
    {"tasks/result", McpMethod::kTaskResult, Eras::kLegacyTasks},
    {"tasks/list", McpMethod::kListTasks, Eras::kLegacyTasks},
    {"tasks/cancel", McpMethod::kCancelTask, Eras::kTasks},
    {"tasks/update", McpMethod::kUpdateTask, Eras::kModernTasks},
    {"subscriptions/listen", McpMethod::kListen, Eras::kModern},
    {"resources/list", McpMethod::kListResources, Eras::kBoth},
    {"resources/templates/list", McpMethod::kListResourceTemplates, Eras::kBoth},
    {"resources/read", McpMethod::kReadResource, Eras::kBoth},
    {"resources/subscribe", McpMethod::kSubscribe, Eras::kLegacy},
    {"resources/unsubscribe", McpMethod::kUnsubscribe, Eras::kLegacy},
    {"prompts/list", McpMethod::kListPrompts, Eras::kBoth},
    {"prompts/get", McpMethod::kGetPrompt, Eras::kBoth},
    {"completion/complete", McpMethod::kComplete, Eras::kBoth},
};

bool ExistsIn(Eras eras, const WireForm& wire) {
  switch (eras) {
    case Eras::kLegacy:
      return !IsModern(wire);
    case Eras::kLegacyTasks:
      return !IsModern(wire) && wire.tasks;
    case Eras::kModern:
      return IsModern(wire);
    case Eras::kModernTasks:
      return IsModern(wire) && wire.tasks;
    case Eras::kTasks:
      return wire.tasks;
    case Eras::kBoth:
      return true;
  }
  return false;
}

template <typename T>
Decoded<McpRequest> Widen(Decoded<T> decoded) {
  if (!decoded.ok()) return decoded.error();
  return McpRequest(std::move(decoded.value()));
}

Decoded<McpRequest> DecodeCallTool(const WireForm& wire, Json params, const KnownTool& known_tool) {
  if (!IsModern(wire) && params.is_object()) {  // unread, as before 2026-07-28
    params.erase("inputResponses");
    params.erase("requestState");
  }
  Decoded<CallToolRequest> decoded = DecodeCallToolRequest(std::move(params), known_tool);
  // Rule 2: without tasks, params.task is not part of the request; rule 4: the server alone
  // decides whether a modern call becomes a task, so a legacy params.task is ignored.
  if (decoded.ok() && (!wire.tasks || IsModern(wire))) decoded.value().task.reset();
  return Widen(std::move(decoded));
}

// Rule 6: a legacy era leaves the multi round-trip members unread.
Json WithoutRetry(const WireForm& wire, Json params) {
  if (!IsModern(wire) && params.is_object()) {
    params.erase("inputResponses");
    params.erase("requestState");
  }
  return params;
}

}  // namespace

RpcError ResourceNotFound(const WireForm& wire, const std::string& uri) {
  // MCP 2025-11-25 names -32002; 2026-07-28 makes it -32602 (SEP-2164).
  const int code = IsModern(wire) ? -32602 : -32002;
  return RpcError{code, "Resource not found: " + QuoteForError(uri), Json{{"uri", uri}}};
}

WireForm NegotiateWireForm(std::string_view requested_version, bool task_store) {
  WireForm wire;
  wire.version = NegotiateProtocolVersion(requested_version);
  wire.era = wire.version == "2025-06-18" ? McpEra::kMcp20250618 : McpEra::kMcp20251125;
  wire.tasks = task_store && wire.era == McpEra::kMcp20251125;
  return wire;
}

WireForm ModernWireForm(bool task_store) {
  WireForm wire;
  wire.era = McpEra::kMcp20260728;
  wire.version = kModernProtocolVersion;
  wire.tasks = task_store;  // the tasks extension (rule 4)
  return wire;
}

std::optional<McpMethod> MethodOf(const WireForm& wire, std::string_view name) {
  for (const MethodName& entry : kMethods) {
    if (entry.name == name) {
      if (!ExistsIn(entry.eras, wire)) return std::nullopt;
      return entry.method;
    }
  }
  return std::nullopt;
}

std::optional<McpNotification> NotificationOf(const WireForm&, std::string_view name) {
  if (name == "notifications/cancelled") return McpNotification::kCancelled;
  if (name == "notifications/initialized") return McpNotification::kInitialized;
  return std::nullopt;
}

Decoded<McpRequest> DecodeRequest(const WireForm& wire, McpMethod method, Json params,
                                  const KnownTool& known_tool) {
  switch (method) {
    case McpMethod::kInitialize:
      return Widen(DecodeInitializeRequest(params));
    case McpMethod::kPing:
      return McpRequest(PingRequest{});
    case McpMethod::kDiscover:
      return McpRequest(DiscoverRequest{});
    case McpMethod::kListTools:
      return Widen(DecodeListToolsRequest(params));
    case McpMethod::kCallTool:
      return DecodeCallTool(wire, std::move(params), known_tool);
    case McpMethod::kSetLevel:
      return Widen(DecodeSetLevelRequest(params));
    case McpMethod::kGetTask:
      return Widen(DecodeGetTaskRequest(params));
    case McpMethod::kTaskResult:
      return Widen(DecodeTaskResultRequest(params));
    case McpMethod::kListTasks:
      return Widen(DecodeListTasksRequest(params));
    case McpMethod::kCancelTask:
      return Widen(DecodeCancelTaskRequest(params));
    case McpMethod::kUpdateTask:
      return Widen(DecodeUpdateTaskRequest(params));
    case McpMethod::kListen:
      return Widen(DecodeListenRequest(params));
    case McpMethod::kListResources:
      return Widen(DecodeListResourcesRequest(params));
    case McpMethod::kListResourceTemplates:
      return Widen(DecodeListResourceTemplatesRequest(params));
    case McpMethod::kReadResource:
      return Widen(DecodeReadResourceRequest(WithoutRetry(wire, std::move(params))));
    case McpMethod::kSubscribe:
      return Widen(DecodeSubscribeRequest(params, true));
    case McpMethod::kUnsubscribe:
      return Widen(DecodeSubscribeRequest(params, false));
    case McpMethod::kListPrompts:
      return Widen(DecodeListPromptsRequest(params));
    case McpMethod::kGetPrompt:
      return Widen(DecodeGetPromptRequest(WithoutRetry(wire, std::move(params))));
    case McpMethod::kComplete:
      return Widen(DecodeCompleteRequest(params));
  }
  return MethodNotFound("");  // unreachable: every method is handled above
}

InitializeResult InitializeResultFor(const WireForm& wire, Implementation server_info,
                                     std::string instructions) {
  InitializeResult result;
  result.protocol_version = std::string(wire.version);
  result.capabilities.tasks = wire.tasks;
  result.server_info = std::move(server_info);
  result.instructions = std::move(instructions);
  return result;
}

DiscoverResult DiscoverResultFor(const WireForm& wire, std::string instructions, CacheHints cache) {
  DiscoverResult result;
  for (std::string_view version : kAllProtocolVersions) {
    result.supported_versions.emplace_back(version);
  }
  result.capabilities.tasks = wire.tasks && !IsModern(wire);           // rule 5
  result.capabilities.tasks_extension = wire.tasks && IsModern(wire);  // rule 4
  // subscriptions/listen with toolsListChanged: sent when a reload changes the tools' policy.
  result.capabilities.tools_list_changed = IsModern(wire);
  result.instructions = std::move(instructions);
  result.cache = std::move(cache);
  return result;
}

Json ToWire(const WireForm&, const InitializeResult& result) { return result; }

Json ToWire(const WireForm&, const DiscoverResult& result) { return result; }

Json ToWire(const WireForm& wire, ListToolsResult result) {
  // Rules 2 and 4: execution.taskSupport is listed only where legacy tasks are offered.
  if (!wire.tasks || IsModern(wire)) {
    for (ToolDescription& tool : result.tools) tool.task_support.clear();
  }
  if (!IsModern(wire)) result.cache.reset();  // rule 5: hints are modern only
  return result;
}

ResultStamp::ResultStamp(Implementation server_info) : server_info_(std::move(server_info)) {
  const Json meta = {{std::string(kMetaServerInfo), server_info_}};
  members_ = R"("_meta":)" + DumpCompact(meta) + R"(,"resultType":"complete")";
}

std::string EncodeResultAs(const WireForm& wire, const Json& id, const Json& result,
                           const ResultStamp& stamp) {
  if (!IsModern(wire) || !result.is_object()) return EncodeResult(id, result);
  if (!result.contains("_meta") && !result.contains("resultType")) {
    return EncodeResult(id, result, stamp.members());
  }
  return EncodeResult(id, FinishResult(wire, result, stamp.server_info()));
}

Json FinishResult(const WireForm& wire, Json result, const Implementation& server_info) {
  if (!IsModern(wire) || !result.is_object()) return result;
  if (!result.contains("resultType")) result["resultType"] = "complete";
  Json& meta = result["_meta"];
  if (!meta.is_object()) meta = Json::object();
  meta[std::string(kMetaServerInfo)] = server_info;
  return result;
}

Json ToWire(const WireForm&, const ListTasksResult& result) { return result; }

}  // namespace keel
