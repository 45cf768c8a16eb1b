// ToolRegistry: the tools keel serves, in registration order (the tools/list order).
// Filled at start-up, then read-only; loop thread only.
// Invariants: names are unique and match ^[a-zA-Z0-9_-]{1,64}$; every input schema is an
// object schema that the validator understands (checked at Register, not at call time).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "protocol/mcp_results.h"
#include "protocol/tool_name.h"
#include "server/catalog/tool.h"

namespace keel {

class ToolRegistry {
 public:
  // Returns an empty string on success, else why the tool was refused.
  std::string Register(std::unique_ptr<Tool> tool);

  Tool* Find(std::string_view name) const;
  const std::vector<std::unique_ptr<Tool>>& tools() const { return tools_; }

  // The MCP Tool of `spec` as tools/list describes it, with its task support; whether the
  // era lists that is decided on the way to the wire (ToWire, protocol/mcp_era.h).
  static ToolDescription Describe(const ToolSpec& spec);

 private:
  std::vector<std::unique_ptr<Tool>> tools_;
  std::unordered_map<std::string, Tool*> by_name_;
};

}  // namespace keel
