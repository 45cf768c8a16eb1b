// Typed MCP results keel answers on the loop: initialize, server/discover, tools/list and
// tasks/list (the typed requests are in mcp_types.h). Pure values; to_json is found by nlohmann's
// ADL and never throws.
//
// to_json writes the shape 2025-06-18 and 2025-11-25 share, from the fields as they are.
// What depends on the era (capabilities.tasks, a tool's execution.taskSupport, the caching
// hints, resultType and the server's identity in _meta) is set by mcp_era.h
// (InitializeResultFor, DiscoverResultFor, ToWire, FinishResult), never by a handler.
// A CallToolResult is built by the tools (tool_result.h); a ping or logging/setLevel
// answers {}.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace keel {

using Json = nlohmann::json;

// MCP Implementation: who the server is.
struct Implementation {
  std::string name;
  std::string title;  // empty: not sent
  std::string version;
  bool operator==(const Implementation&) const = default;
};

struct ServerCapabilities {
  bool tools_list_changed = false;  // tools: {listChanged}
  bool logging = true;              // logging: {}
  // tasks: {list, cancel, requests.tools.call}: durable tasks (MCP 2025-11-25 only).
  bool tasks = false;
  // extensions: {"io.modelcontextprotocol/tasks": {}}: the tasks extension (2026-07-28).
  bool tasks_extension = false;
  // resources: {subscribe?, listChanged?} when keel serves resources; prompts: {listChanged?}
  // when it serves prompts; completions: {} when something completes (issue 21).
  bool resources = false;
  bool resources_subscribe = false;
  bool resources_list_changed = false;
  bool prompts = false;
  bool prompts_list_changed = false;
  bool completions = false;
  bool operator==(const ServerCapabilities&) const = default;
};

// MCP 2026-07-28 CacheableResult: how long a client may reuse a result, and with whom.
struct CacheHints {
  int64_t ttl_ms = 0;            // >= 0; 0: stale at once
  std::string scope = "public";  // "public" (no user-specific data) or "private"
  bool operator==(const CacheHints&) const = default;
};

struct InitializeResult {
  std::string protocol_version;
  ServerCapabilities capabilities;
  Implementation server_info;
  std::string instructions;  // empty: not sent
  bool operator==(const InitializeResult&) const = default;
};

// server/discover (MCP 2026-07-28): what a modern client learns before its first call.
struct DiscoverResult {
  std::vector<std::string> supported_versions;
  ServerCapabilities capabilities;
  std::string instructions;  // empty: not sent
  CacheHints cache;
  bool operator==(const DiscoverResult&) const = default;
};

// One tool as tools/list describes it.
struct ToolDescription {
  std::string name;
  std::string title;  // empty: not sent
  std::string description;
  Json input_schema;
  Json output_schema;  // null: not sent
  Json annotations;    // null: not sent
  // execution.taskSupport ("forbidden", "optional" or "required"); empty: no execution
  // member (always empty in an era without tasks: mcp_era.h).
  std::string task_support;
  bool operator==(const ToolDescription&) const = default;
};

struct ListToolsResult {
  std::vector<ToolDescription> tools;
  std::optional<size_t> next_offset;  // set when more tools follow: becomes nextCursor
  std::optional<CacheHints> cache;    // set in an era with caching hints (mcp_era.h)
  bool operator==(const ListToolsResult&) const = default;
};

struct ListTasksResult {
  std::vector<Json> tasks;            // MCP Task objects (server/tasks/task_wire.h)
  std::optional<int64_t> next_after;  // set when more tasks follow: becomes nextCursor
  bool operator==(const ListTasksResult&) const = default;
};

// to_json: the name nlohmann's ADL looks for.
// NOLINTBEGIN(readability-identifier-naming)
void to_json(Json& json, const Implementation& implementation);
void to_json(Json& json, const ServerCapabilities& capabilities);
void to_json(Json& json, const CacheHints& hints);
void to_json(Json& json, const InitializeResult& result);
void to_json(Json& json, const DiscoverResult& result);
void to_json(Json& json, const ToolDescription& tool);
void to_json(Json& json, const ListToolsResult& result);
void to_json(Json& json, const ListTasksResult& result);
// NOLINTEND(readability-identifier-naming)

}  // namespace keel
