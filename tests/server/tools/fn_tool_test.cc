// FnTool: a tool made of a spec and functions. Call runs the call function with the call's
// context; Reconcile runs the reconcile function with the arguments and _meta it is given,
// and without one says nothing is known, as a Tool does by default.
#include "server/tools/fn_tool.h"

#include <catch2/catch.hpp>

#include "fakes/stub_tool.h"
#include "server/runtime/cancellation.h"

namespace keel::fn_tool_test {
namespace {

TEST_CASE("an FnTool answers a call with what its function returns for the call's arguments",
          "[fn_tool]") {
  FnTool tool(StubSpec("twice"), [](ToolContext& ctx) {
    return TextResult(std::to_string(2 * ctx.arguments().at("n").get<int>()));
  });
  ToolContext ctx(Json{{"n", 21}}, CancellationToken(), nullptr);
  CHECK(tool.Call(ctx) == TextResult("42"));
  CHECK(tool.spec().name == "twice");
}

TEST_CASE("an FnTool without a reconcile function knows nothing of a call after a restart",
          "[fn_tool]") {
  FnTool tool(StubSpec("job"), [](ToolContext&) { return TextResult("ran"); });
  CHECK(tool.Reconcile(Json{{"n", 1}}, Json()).outcome == Reconciled::Outcome::kUnknown);
}

TEST_CASE("an FnTool reconciles a call with its function, given the call's arguments and _meta",
          "[fn_tool]") {
  Json seen_arguments, seen_meta;
  FnTool tool(
      StubSpec("job"), [](ToolContext&) { return TextResult("ran"); },
      [&](const Json& arguments, const Json& meta) {
        seen_arguments = arguments;
        seen_meta = meta;
        return Reconciled{Reconciled::Outcome::kHappened, TextResult("done before")};
      });
  const Reconciled found =
      tool.Reconcile(Json{{"n", 1}}, Json{{"dev.keel/idempotency-key", "k-1"}});
  CHECK(found.outcome == Reconciled::Outcome::kHappened);
  CHECK(found.result == TextResult("done before"));
  CHECK(seen_arguments == Json{{"n", 1}});
  CHECK(seen_meta == Json{{"dev.keel/idempotency-key", "k-1"}});
}

TEST_CASE("a stub tool answers ok unless given a function", "[fn_tool]") {
  const std::unique_ptr<Tool> stub = MakeStubTool(StubSpec("stub"));
  ToolContext ctx(Json::object(), CancellationToken(), nullptr);
  CHECK(stub->Call(ctx) == TextResult("ok"));
  CHECK(stub->spec().input_schema == Json{{"type", "object"}});
  CHECK(stub->spec().effect == EffectClass::kRead);
}

}  // namespace
}  // namespace keel::fn_tool_test
