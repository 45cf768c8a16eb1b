// FnTool: a tool defined by its spec and a function; enough for the small test and
// conformance-fixture tools. Call() runs `fn`, so it is as reentrant as `fn` is; Reconcile()
// runs `reconcile` when given one, else says nothing is known (Tool's default).
#pragma once

#include <functional>
#include <utility>

#include "server/catalog/tool.h"

namespace keel {

class FnTool final : public Tool {
 public:
  using Fn = std::function<Json(ToolContext&)>;
  using ReconcileFn = std::function<Reconciled(const Json& arguments, const Json& meta)>;
  FnTool(ToolSpec spec, Fn fn, ReconcileFn reconcile = nullptr)
      : spec_(std::move(spec)), fn_(std::move(fn)), reconcile_(std::move(reconcile)) {}
  const ToolSpec& spec() const override { return spec_; }
  Json Call(ToolContext& ctx) override { return fn_(ctx); }
  Reconciled Reconcile(const Json& arguments, const Json& meta) override {
    return reconcile_ ? reconcile_(arguments, meta) : Tool::Reconcile(arguments, meta);
  }

 private:
  ToolSpec spec_;
  Fn fn_;
  ReconcileFn reconcile_;
};

}  // namespace keel
