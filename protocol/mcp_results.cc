#include "protocol/mcp_results.h"

#include "protocol/cursor.h"
#include "protocol/mcp_version.h"

namespace keel {

void to_json(Json& json, const Implementation& implementation) {
  json = {{"name", implementation.name}, {"version", implementation.version}};
  if (!implementation.title.empty()) json["title"] = implementation.title;
}

void to_json(Json& json, const ServerCapabilities& capabilities) {
  json = {{"tools", {{"listChanged", capabilities.tools_list_changed}}}};
  if (capabilities.logging) json["logging"] = Json::object();
  if (capabilities.tasks) {
    json["tasks"] = {{"list", Json::object()},
                     {"cancel", Json::object()},
                     {"requests", {{"tools", {{"call", Json::object()}}}}}};
  }
  if (capabilities.tasks_extension) {
    json["extensions"] = {{std::string(kTasksExtension), Json::object()}};
  }
  if (capabilities.resources) {
    json["resources"] = {{"subscribe", capabilities.resources_subscribe},
                         {"listChanged", capabilities.resources_list_changed}};
  }
  if (capabilities.prompts) {
    json["prompts"] = {{"listChanged", capabilities.prompts_list_changed}};
  }
  if (capabilities.completions) json["completions"] = Json::object();
}

// The hints' members, added to an object result.
void to_json(Json& json, const CacheHints& hints) {
  json = {{"ttlMs", hints.ttl_ms}, {"cacheScope", hints.scope}};
}

void to_json(Json& json, const DiscoverResult& result) {
  json = {{"supportedVersions", result.supported_versions},
          {"capabilities", result.capabilities},
          {"ttlMs", result.cache.ttl_ms},
          {"cacheScope", result.cache.scope}};
  if (!result.instructions.empty()) json["instructions"] = result.instructions;
}

void to_json(Json& json, const InitializeResult& result) {
  json = {{"protocolVersion", result.protocol_version},
          {"capabilities", result.capabilities},
          {"serverInfo", result.server_info}};
  if (!result.instructions.empty()) json["instructions"] = result.instructions;
}

void to_json(Json& json, const ToolDescription& tool) {
  json = {{"name", tool.name}};
  if (!tool.title.empty()) json["title"] = tool.title;
  json["description"] = tool.description;
  json["inputSchema"] = tool.input_schema;
  if (!tool.output_schema.is_null()) json["outputSchema"] = tool.output_schema;
  if (!tool.annotations.is_null()) json["annotations"] = tool.annotations;
  if (!tool.task_support.empty()) json["execution"] = {{"taskSupport", tool.task_support}};
}

void to_json(Json& json, const ListToolsResult& result) {
  Json tools = Json::array();
  for (const ToolDescription& tool : result.tools) tools.push_back(tool);
  json = {{"tools", std::move(tools)}};
  if (result.next_offset) json["nextCursor"] = EncodeCursor("tools", *result.next_offset);
  if (result.cache) json.update(Json(*result.cache));
}

void to_json(Json& json, const ListTasksResult& result) {
  json = {{"tasks", result.tasks}};
  if (result.next_after) {
    json["nextCursor"] = EncodeCursor("tasks", static_cast<size_t>(*result.next_after));
  }
}

}  // namespace keel
