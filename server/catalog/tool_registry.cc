#include "server/catalog/tool_registry.h"

#include "protocol/schema_validator.h"

namespace keel {

std::string ToolRegistry::Register(std::unique_ptr<Tool> tool) {
  const ToolSpec& spec = tool->spec();
  if (!IsValidToolName(spec.name)) {
    return "tool name '" + spec.name + "' must match ^[a-zA-Z0-9_-]{1,64}$";
  }
  if (by_name_.count(spec.name) != 0) return "tool '" + spec.name + "' is registered twice";
  if (!spec.validate_arguments) {
    by_name_.emplace(spec.name, tool.get());
    tools_.push_back(std::move(tool));
    return std::string();
  }
  const auto type = spec.input_schema.find("type");
  if (!spec.input_schema.is_object() || type == spec.input_schema.end() || *type != "object") {
    return "tool '" + spec.name + "': inputSchema needs \"type\": \"object\"";
  }
  if (auto problem = CheckSchemaWellFormed(spec.input_schema)) {
    return "tool '" + spec.name + "': " + *problem;
  }
  by_name_.emplace(spec.name, tool.get());
  tools_.push_back(std::move(tool));
  return std::string();
}

Tool* ToolRegistry::Find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : it->second;
}

ToolDescription ToolRegistry::Describe(const ToolSpec& spec) {
  ToolDescription tool;
  tool.name = spec.name;
  tool.title = spec.title;
  tool.description = spec.description;
  tool.input_schema = spec.input_schema;
  tool.output_schema = spec.output_schema;
  tool.annotations = spec.annotations;
  tool.task_support = std::string(TaskSupportName(spec.task_support));
  return tool;
}

}  // namespace keel
