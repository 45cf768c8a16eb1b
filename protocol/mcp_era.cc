#include "protocol/mcp_era.h"

#include <utility>

#include "protocol/mcp_version.h"

namespace keel {
namespace {

struct MethodName {
  std::string_view name;
  McpMethod method;
  bool needs_tasks;  // exists only where tasks are offered (rule 1)
};

// Every request method keel serves in a legacy era.
constexpr MethodName kMethods[] = {
    {"initialize", McpMethod::kInitialize, false},     {"ping", McpMethod::kPing, false},
    {"tools/list", McpMethod::kListTools, false},      {"tools/call", McpMethod::kCallTool, false},
    {"logging/setLevel", McpMethod::kSetLevel, false}, {"tasks/get", McpMethod::kGetTask, true},
    {"tasks/result", McpMethod::kTaskResult, true},    {"tasks/list", McpMethod::kListTasks, true},
    {"tasks/cancel", McpMethod::kCancelTask, true},
};

template <typename T>
Decoded<McpRequest> Widen(Decoded<T> decoded) {
  if (!decoded.ok()) return decoded.error();
  return McpRequest(std::move(decoded.value()));
}

Decoded<McpRequest> DecodeCallTool(const WireForm& wire, Json params, const KnownTool& known_tool) {
  Decoded<CallToolRequest> decoded = DecodeCallToolRequest(std::move(params), known_tool);
  // Rule 2: without tasks, params.task is not part of the request.
  if (decoded.ok() && !wire.tasks) decoded.value().task.reset();
  return Widen(std::move(decoded));
}

}  // namespace

WireForm NegotiateWireForm(std::string_view requested_version, bool task_store) {
  WireForm wire;
  wire.version = NegotiateProtocolVersion(requested_version);
  wire.era = wire.version == "2025-06-18" ? McpEra::kMcp20250618 : McpEra::kMcp20251125;
  wire.tasks = task_store && wire.era == McpEra::kMcp20251125;
  return wire;
}

std::optional<McpMethod> MethodOf(const WireForm& wire, std::string_view name) {
  for (const MethodName& entry : kMethods) {
    if (entry.name == name) {
      if (entry.needs_tasks && !wire.tasks) return std::nullopt;
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

Json ToWire(const WireForm&, const InitializeResult& result) { return result; }

Json ToWire(const WireForm& wire, ListToolsResult result) {
  // Rule 2: execution.taskSupport is listed only where tasks are offered.
  if (!wire.tasks) {
    for (ToolDescription& tool : result.tools) tool.task_support.clear();
  }
  return result;
}

Json ToWire(const WireForm&, const ListTasksResult& result) { return result; }

}  // namespace keel
