// FnTool: a tool defined by its spec and a function; enough for the small test and
// conformance-fixture tools. Call() runs `fn`, so it is as reentrant as `fn` is.
#pragma once

#include <functional>
#include <utility>

#include "server/catalog/tool.h"

namespace keel {

class FnTool final : public Tool {
 public:
  using Fn = std::function<Json(ToolContext&)>;
  FnTool(ToolSpec spec, Fn fn) : spec_(std::move(spec)), fn_(std::move(fn)) {}
  const ToolSpec& spec() const override { return spec_; }
  Json Call(ToolContext& ctx) override { return fn_(ctx); }

 private:
  ToolSpec spec_;
  Fn fn_;
};

}  // namespace keel
