// The server-stateless diagnostics and the x-mcp-header fixture: what each asks or does, and
// test_trigger_tool_change firing the hook the server connects (list_changed_hook.h).
#include "server/tools/conformance_diagnostic_tools.h"

#include <map>
#include <memory>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "protocol/tool_result.h"
#include "server/catalog/tool_registry.h"

namespace keel::conformance_diagnostic_tools_test {
namespace {

std::map<std::string, std::unique_ptr<Tool>> Diagnostics(
    std::shared_ptr<ListChangedHook> hook, std::shared_ptr<ListChangedHook> prompts = nullptr) {
  std::map<std::string, std::unique_ptr<Tool>> tools;
  for (auto& tool : MakeConformanceDiagnosticTools(std::move(hook), std::move(prompts))) {
    const std::string name = tool->spec().name;
    tools.emplace(name, std::move(tool));
  }
  return tools;
}

Json Run(Tool& tool, Json arguments = Json::object()) {
  ToolContext ctx(std::move(arguments), CancellationToken(), nullptr);
  return tool.Call(ctx);
}

}  // namespace

TEST_CASE("every diagnostic fixture registers, the x-mcp-header annotation included") {
  auto tools = Diagnostics(nullptr);
  CHECK(tools.size() == 6);
  CHECK(
      tools.at("test_custom_header")->spec().input_schema["properties"]["region"]["x-mcp-header"] ==
      "Region");
  ToolRegistry registry;
  for (auto& [name, tool] : tools) {
    INFO(name);
    CHECK(registry.Register(std::move(tool)).empty());
  }
}

TEST_CASE("test_missing_capability asks sampling and test_streaming_elicitation asks a form") {
  auto tools = Diagnostics(nullptr);
  const Json sampling = Run(*tools.at("test_missing_capability"));
  REQUIRE(IsInputRequired(sampling));
  CHECK(sampling["inputRequests"]["hello"]["method"] == "sampling/createMessage");
  const Json form = Run(*tools.at("test_streaming_elicitation"));
  REQUIRE(IsInputRequired(form));
  CHECK(form["inputRequests"]["user_name"]["method"] == "elicitation/create");
}

TEST_CASE("test_logging_tool logs at info and answers") {
  auto tools = Diagnostics(nullptr);
  std::vector<std::string> logged;
  ToolContext ctx(Json::object(), CancellationToken(), nullptr);
  ctx.set_log([&](LoggingLevel level, std::string message) {
    CHECK(level == LoggingLevel::kInfo);
    logged.push_back(std::move(message));
  });
  CHECK_FALSE(tools.at("test_logging_tool")->Call(ctx).value("isError", false));
  CHECK(logged.size() == 1);
}

TEST_CASE("test_trigger_tool_change fires the connected hook, and says so when none is") {
  auto hook = std::make_shared<ListChangedHook>();
  auto tools = Diagnostics(hook);
  Tool& trigger = *tools.at("test_trigger_tool_change");
  CHECK(Run(trigger)["content"][0]["text"].get<std::string>().rfind("Nobody", 0) == 0);
  int fired = 0;
  hook->Connect([&] { ++fired; });
  Run(trigger);
  Run(trigger);
  CHECK(fired == 2);
  hook->Connect(nullptr);
  Run(trigger);
  CHECK(fired == 2);
}

TEST_CASE("test_custom_header says the region it got") {
  auto tools = Diagnostics(nullptr);
  CHECK(Run(*tools.at("test_custom_header"), {{"region", "Hello"}})["content"][0]["text"] ==
        "Region: Hello");
}

TEST_CASE("test_trigger_prompt_change fires the prompt hook, not the tool one") {
  auto tools_hook = std::make_shared<ListChangedHook>();
  auto prompts_hook = std::make_shared<ListChangedHook>();
  auto tools = Diagnostics(tools_hook, prompts_hook);
  int tools_fired = 0;
  int prompts_fired = 0;
  tools_hook->Connect([&] { ++tools_fired; });
  prompts_hook->Connect([&] { ++prompts_fired; });
  Run(*tools.at("test_trigger_prompt_change"));
  CHECK(prompts_fired == 1);
  CHECK(tools_fired == 0);
}

}  // namespace keel::conformance_diagnostic_tools_test
