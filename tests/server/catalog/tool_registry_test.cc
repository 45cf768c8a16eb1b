// ToolRegistry: only tools that every host accepts get in — names matching
// ^[a-zA-Z0-9_-]{1,64}$ (one bad name hides all tools in Claude Desktop), unique, with an
// object input schema the validator understands. Order is registration order.
#include "server/catalog/tool_registry.h"

#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/stub_tool.h"

namespace keel::tool_registry_test {
namespace {

std::unique_ptr<Tool> Stub(std::string name, Json schema = Json{{"type", "object"}}) {
  ToolSpec spec = StubSpec(std::move(name), std::move(schema));
  spec.description = "stub";
  return MakeStubTool(std::move(spec));
}

TEST_CASE("tool names outside ^[a-zA-Z0-9_-]{1,64}$ are refused") {
  ToolRegistry registry;
  CHECK(registry.Register(Stub("get_state-2")).empty());
  CHECK(registry.Register(Stub(std::string(64, 'a'))).empty());
  CHECK_FALSE(registry.Register(Stub(std::string(65, 'a'))).empty());
  CHECK_FALSE(registry.Register(Stub("")).empty());
  CHECK_FALSE(registry.Register(Stub("has.dot")).empty());
  CHECK_FALSE(registry.Register(Stub("has space")).empty());
  CHECK(registry.tools().size() == 2);
}

TEST_CASE("a second tool with the same name is refused") {
  ToolRegistry registry;
  CHECK(registry.Register(Stub("twice")).empty());
  CHECK(registry.Register(Stub("twice")).find("twice") != std::string::npos);
}

TEST_CASE("an input schema must be an object schema the validator understands") {
  ToolRegistry registry;
  CHECK_FALSE(registry.Register(Stub("no_type", Json::object())).empty());
  CHECK_FALSE(registry.Register(Stub("array_type", Json{{"type", "array"}})).empty());
  CHECK_FALSE(
      registry
          .Register(Stub("bad_bound",
                         Json{{"type", "object"},
                              {"properties", {{"n", {{"type", "integer"}, {"minimum", "zero"}}}}}}))
          .empty());
  CHECK(registry.tools().empty());
}

TEST_CASE("tools are found by name and described in registration order") {
  ToolRegistry registry;
  registry.Register(Stub("b"));
  registry.Register(Stub("a"));
  REQUIRE(registry.Find("a") != nullptr);
  CHECK(registry.Find("c") == nullptr);
  CHECK(registry.tools()[0]->spec().name == "b");
  const Json described = ToolRegistry::Describe(registry.tools()[1]->spec());
  CHECK(described["name"] == "a");
  CHECK(described["inputSchema"]["type"] == "object");
  CHECK_FALSE(described.contains("annotations"));
}

}  // namespace
}  // namespace keel::tool_registry_test

namespace keel::tool_registry_test {
namespace {

TEST_CASE("an error that does not match the outputSchema moves to _meta for SDK clients",
          "[tools]") {
  ToolSpec spec;
  spec.output_schema =
      Json::parse(R"({"type":"object","properties":{"op":{"type":"string"}},"required":["op"]})");
  const Json error = ErrorResult("no such job", Json{{"type", "backend_404"}, {"status", 404}});
  const Json sent = ForOutputSchema(spec, error);
  CHECK_FALSE(sent.contains("structuredContent"));
  CHECK(sent.at("_meta").at("dev.keel/error") == Json{{"type", "backend_404"}, {"status", 404}});
  CHECK(sent.at("isError") == true);
  CHECK(sent.at("content") == error.at("content"));
  // A result that matches, a success, and a tool without an outputSchema are unchanged.
  const Json matching = ErrorResult("x", Json());
  Json with_op = matching;
  with_op["structuredContent"] = Json{{"op", "op_1"}};
  CHECK(ForOutputSchema(spec, with_op) == with_op);
  const Json ok = StructuredResult("ok", Json{{"other", 1}});
  CHECK(ForOutputSchema(spec, ok) == ok);
  CHECK(ForOutputSchema(ToolSpec(), error) == error);
}

}  // namespace
namespace {

std::vector<std::string> Names(const ToolRegistry& registry) {
  std::vector<std::string> names;
  for (const auto& tool : registry.tools()) names.push_back(tool->spec().name);
  return names;
}

std::vector<std::unique_ptr<Tool>> Fresh(std::initializer_list<const char*> names) {
  std::vector<std::unique_ptr<Tool>> tools;
  for (const char* name : names) tools.push_back(Stub(name));
  return tools;
}

const auto kAlwaysSame = [](const Tool&, const Tool&) { return true; };
const auto kNeverSame = [](const Tool&, const Tool&) { return false; };

}  // namespace

TEST_CASE(
    "ReplaceAll makes the fresh list the whole list in its order: an unchanged tool stays the "
    "same Tool, a changed one is the fresh Tool",
    "[WRAP-1]") {
  ToolRegistry registry;
  REQUIRE(registry.Register(Stub("a")).empty());
  REQUIRE(registry.Register(Stub("b")).empty());
  Tool* const a = registry.Find("a");
  CHECK(registry.ReplaceAll(Fresh({"c", "a"}), kAlwaysSame).empty());
  CHECK(Names(registry) == std::vector<std::string>{"c", "a"});
  CHECK(registry.Find("a") == a);
  CHECK(registry.Find("b") == nullptr);
  CHECK(registry.Find("c") != nullptr);

  CHECK(registry.ReplaceAll(Fresh({"c", "a"}), kNeverSame).empty());
  CHECK(registry.Find("a") != a);
}

TEST_CASE("a tool that leaves the list stays alive: a call admitted before may still run it",
          "[WRAP-1]") {
  ToolRegistry registry;
  REQUIRE(registry.Register(Stub("gone")).empty());
  Tool* const gone = registry.Find("gone");
  CHECK(registry.ReplaceAll(Fresh({}), kAlwaysSame).empty());
  CHECK(registry.tools().empty());
  CHECK(registry.Find("gone") == nullptr);
  CHECK(gone->spec().name == "gone");  // still a live object (ASan would say otherwise)
}

TEST_CASE("ReplaceAll refuses what Register refuses, and keeps the rest", "[WRAP-1]") {
  ToolRegistry registry;
  std::vector<std::unique_ptr<Tool>> fresh = Fresh({"ok", "ok", "bad name"});
  fresh.push_back(Stub("no_object", Json{{"type", "string"}}));
  const std::vector<std::string> refused = registry.ReplaceAll(std::move(fresh), kAlwaysSame);
  CHECK(refused.size() == 3);
  CHECK(Names(registry) == std::vector<std::string>{"ok"});
}

}  // namespace keel::tool_registry_test
