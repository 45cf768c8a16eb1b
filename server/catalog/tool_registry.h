// ToolRegistry: the tools keel serves, in registration order (the tools/list order).
// Filled at start-up. keel wrap replaces the list when the upstream's tools change
// (ReplaceAll, on the loop thread). Find may be called from any thread (the task store's
// recovery looks tools up); Register, ReplaceAll and tools() on one thread (the loop, once
// serving).
// Invariant: a Tool* once handed out stays valid until the registry is destroyed: a tool
// that leaves the list is kept, unlisted, since a call admitted before may still run it.
// Invariants: names are unique and match ^[a-zA-Z0-9_-]{1,64}$; every input schema is an
// object schema that the validator understands (checked at Register, not at call time).
#pragma once

#include <functional>
#include <memory>
#include <shared_mutex>
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

  // Whether a listed tool and a fresh one with its name are the same tool (the listed one
  // then stays, and the fresh one is dropped).
  using SameFn = std::function<bool(const Tool& listed, const Tool& fresh)>;
  // `fresh` becomes the whole list, in its order. Returns why each fresh tool that was not
  // registered was refused (as Register does).
  std::vector<std::string> ReplaceAll(std::vector<std::unique_ptr<Tool>> fresh, const SameFn& same);

  // The MCP Tool of `spec` as tools/list describes it, with its task support; whether the
  // era lists that is decided on the way to the wire (ToWire, protocol/mcp_era.h).
  static ToolDescription Describe(const ToolSpec& spec);

 private:
  // Why `spec` cannot be registered; empty when it can (the name is not checked for
  // duplicates here).
  static std::string Refusal(const ToolSpec& spec);

  // Guards by_name_ (Find from any thread); the rest is one thread's. Held by pointer so
  // that a ToolSet can still be moved while it is built (a moved-from registry is not used).
  std::unique_ptr<std::shared_mutex> mu_ = std::make_unique<std::shared_mutex>();
  std::vector<std::unique_ptr<Tool>> tools_;
  std::unordered_map<std::string, Tool*> by_name_;
  std::vector<std::unique_ptr<Tool>> retired_;  // left the list; may still run (invariant)
};

}  // namespace keel
