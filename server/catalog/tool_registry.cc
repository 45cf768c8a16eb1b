#include "server/catalog/tool_registry.h"

#include "protocol/schema_validator.h"

namespace keel {

std::string ToolRegistry::Refusal(const ToolSpec& spec) {
  if (!IsValidToolName(spec.name)) {
    return "tool name '" + spec.name + "' must match ^[a-zA-Z0-9_-]{1,64}$";
  }
  if (!spec.validate_arguments) return std::string();
  const auto type = spec.input_schema.find("type");
  if (!spec.input_schema.is_object() || type == spec.input_schema.end() || *type != "object") {
    return "tool '" + spec.name + "': inputSchema needs \"type\": \"object\"";
  }
  if (auto problem = CheckSchemaWellFormed(spec.input_schema)) {
    return "tool '" + spec.name + "': " + *problem;
  }
  return std::string();
}

std::string ToolRegistry::Register(std::unique_ptr<Tool> tool) {
  const ToolSpec& spec = tool->spec();
  if (std::string refused = Refusal(spec); !refused.empty()) return refused;
  std::unique_lock<std::shared_mutex> lock(*mu_);
  if (by_name_.count(spec.name) != 0) return "tool '" + spec.name + "' is registered twice";
  by_name_.emplace(spec.name, tool.get());
  tools_.push_back(std::move(tool));
  return std::string();
}

std::vector<std::string> ToolRegistry::ReplaceAll(std::vector<std::unique_ptr<Tool>> fresh,
                                                  const SameFn& same) {
  std::unordered_map<std::string, std::unique_ptr<Tool>> listed;
  for (std::unique_ptr<Tool>& tool : tools_) {
    std::string name = tool->spec().name;
    listed.emplace(std::move(name), std::move(tool));
  }
  std::vector<std::string> refusals;
  std::vector<std::unique_ptr<Tool>> next;
  std::unordered_map<std::string, Tool*> names;
  for (std::unique_ptr<Tool>& tool : fresh) {
    const std::string& name = tool->spec().name;
    if (names.count(name) != 0) {
      refusals.push_back("tool '" + name + "' is registered twice");
      continue;
    }
    if (auto it = listed.find(name); it != listed.end() && it->second && same(*it->second, *tool)) {
      names.emplace(name, it->second.get());
      next.push_back(std::move(it->second));
      continue;
    }
    if (std::string refused = Refusal(tool->spec()); !refused.empty()) {
      refusals.push_back(std::move(refused));
      continue;
    }
    names.emplace(name, tool.get());
    next.push_back(std::move(tool));
  }
  std::unique_lock<std::shared_mutex> lock(*mu_);
  for (auto& [name, tool] : listed) {
    if (tool) retired_.push_back(std::move(tool));
  }
  tools_ = std::move(next);
  by_name_ = std::move(names);
  return refusals;
}

Tool* ToolRegistry::Find(std::string_view name) const {
  std::shared_lock<std::shared_mutex> lock(*mu_);
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
