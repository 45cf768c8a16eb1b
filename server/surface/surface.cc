#include "server/surface/surface.h"

#include <utility>

#include "server/tools/command_tool.h"

namespace keel {

Surface::Surface(ForwardedSurface forwarded)
    : forwarded_(std::make_unique<ForwardedSurface>(std::move(forwarded))) {}

Surface::Surface(std::vector<ResourceEntry> resources, std::vector<ResourceTemplateEntry> templates,
                 std::vector<PromptEntry> prompts, std::shared_ptr<LedgerService> ledger)
    : resources_(std::move(resources), std::move(templates), ledger),
      prompts_(std::move(prompts), &resources_) {
  std::vector<std::pair<std::string, const CompletionSpec*>> all = resources_.Completions();
  for (auto& completion : prompts_.Completions()) all.push_back(std::move(completion));
  for (const auto& [label, spec] : all) {
    if (!spec->command) continue;
    ToolSpec tool;
    tool.name = "complete:" + label;
    tool.description = "completes " + label;
    tool.input_schema = {
        {"type", "object"},
        {"properties", {{"argument", {{"type", "string"}}}, {"value", {{"type", "string"}}}}},
        {"required", {"argument", "value"}}};
    tool.effect = EffectClass::kRead;
    completion_tools_[spec] =
        std::make_unique<CommandTool>(std::move(tool), *spec->command, ledger);
  }
}

Tool* Surface::CompletionTool(const CompletionSpec* spec) const {
  const auto it = completion_tools_.find(spec);
  return it != completion_tools_.end() ? it->second.get() : nullptr;
}

}  // namespace keel
