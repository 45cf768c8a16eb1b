#include "server/tools/conformance_diagnostic_tools.h"

#include <string>
#include <utility>

#include "protocol/tool_result.h"
#include "server/tools/fn_tool.h"
#include "server/tools/input_questions.h"

namespace keel {
namespace {

std::unique_ptr<Tool> DiagnosticFixture(std::string name, std::string description, FnTool::Fn fn,
                                        const char* schema = R"({"type":"object","properties":{}})",
                                        bool asks = false) {
  ToolSpec spec;
  spec.name = std::move(name);
  spec.description = "Conformance fixture: " + std::move(description);
  spec.input_schema = Json::parse(schema);
  spec.asks_for_input = asks;
  return std::make_unique<FnTool>(std::move(spec), std::move(fn));
}

Json NeedsSampling(ToolContext& ctx) {
  const Json* answer = ctx.InputResponse("hello");
  if (answer == nullptr) return AskForInput(Json{{"hello", SamplingQuestion("Say hello", 20)}});
  return TextResult("Sampled: " + SampledText(*answer));
}

Json ElicitOnStream(ToolContext& ctx) {
  const Json* answer = ctx.InputResponse("user_name");
  if (answer == nullptr) {
    return AskForInput(Json{{"user_name", ElicitString("What is your name?", "name")}});
  }
  std::string refused;
  const std::optional<std::string> name = AcceptedString(*answer, "name", &refused);
  if (!name)
    return ErrorResult("No name given (" + refused + ")", Json{{"type", "input_declined"}});
  return TextResult("Hello, " + *name + "!");
}

constexpr const char* kRegionSchema = R"({"type":"object",
  "properties":{"region":{"type":"string","x-mcp-header":"Region",
                          "description":"Mirrored in the Mcp-Param-Region header over HTTP."}},
  "required":["region"]})";

}  // namespace

std::vector<std::unique_ptr<Tool>> MakeConformanceDiagnosticTools(
    std::shared_ptr<ListChangedHook> tools_changed,
    std::shared_ptr<ListChangedHook> prompts_changed) {
  std::vector<std::unique_ptr<Tool>> tools;
  tools.push_back(DiagnosticFixture(
      "test_missing_capability",
      "needs the client's sampling capability (-32021 without it), then says what was sampled.",
      NeedsSampling, R"({"type":"object","properties":{}})", true));
  tools.push_back(DiagnosticFixture(
      "test_streaming_elicitation",
      "asks the user's name through an InputRequiredResult, never a request on the stream.",
      ElicitOnStream, R"({"type":"object","properties":{}})", true));
  tools.push_back(DiagnosticFixture(
      "test_logging_tool", "sends one info log message (only if the request asked for logs).",
      [](ToolContext& ctx) {
        ctx.Log(LoggingLevel::kInfo, "test_logging_tool ran");
        return TextResult("Logged one info message.");
      }));
  tools.push_back(DiagnosticFixture(
      "test_trigger_tool_change",
      "tells open subscriptions/listen streams that the tool list changed.",
      [hook = std::move(tools_changed)](ToolContext&) {
        const bool told = hook != nullptr && hook->Fire();
        return TextResult(told ? "notifications/tools/list_changed sent to the subscriptions "
                                 "that asked for it."
                               : "Nobody to tell: this keel serves no subscriptions.");
      }));
  tools.push_back(DiagnosticFixture(
      "test_trigger_prompt_change",
      "tells open subscriptions/listen streams that the prompt list changed.",
      [hook = std::move(prompts_changed)](ToolContext&) {
        const bool told = hook != nullptr && hook->Fire();
        return TextResult(told ? "notifications/prompts/list_changed sent to the subscriptions "
                                 "that asked for it."
                               : "Nobody to tell: this keel serves no subscriptions.");
      }));
  tools.push_back(DiagnosticFixture(
      "test_custom_header",
      "takes a region mirrored in the Mcp-Param-Region header (x-mcp-header); says it.",
      [](ToolContext& ctx) {
        return TextResult("Region: " + ctx.arguments().value("region", std::string()));
      },
      kRegionSchema));
  return tools;
}

}  // namespace keel
