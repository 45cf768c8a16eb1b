// Stub tools for tests: an FnTool (server/tools/fn_tool.h) from a spec, answering
// TextResult("ok") unless given a function, and reconciling as the caller says (by default:
// nothing is known). StubSpec() is the smallest valid spec: a name, an object input schema,
// the read effect. Header-only; each stub is as thread-safe as the functions it is given.
#pragma once

#include <memory>
#include <string>
#include <utility>

#include "protocol/tool_result.h"
#include "server/catalog/tool.h"
#include "server/tools/fn_tool.h"

namespace keel {

inline ToolSpec StubSpec(std::string name, Json input_schema = Json{{"type", "object"}}) {
  ToolSpec spec;
  spec.name = std::move(name);
  spec.input_schema = std::move(input_schema);
  return spec;
}

inline std::unique_ptr<Tool> MakeStubTool(ToolSpec spec, FnTool::Fn fn = nullptr,
                                          FnTool::ReconcileFn reconcile = nullptr) {
  if (!fn) fn = [](ToolContext&) { return TextResult("ok"); };
  return std::make_unique<FnTool>(std::move(spec), std::move(fn), std::move(reconcile));
}

}  // namespace keel
