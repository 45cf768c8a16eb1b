#include "server/tools/conformance_legacy_tools.h"

#include <string>
#include <utility>

#include "protocol/tool_result.h"
#include "server/tools/fn_tool.h"
#include "server/tools/input_questions.h"

namespace keel {
namespace {

std::unique_ptr<Tool> LegacyFixture(std::string name, std::string description, FnTool::Fn fn,
                                    const char* schema = R"({"type":"object","properties":{}})") {
  ToolSpec spec;
  spec.name = std::move(name);
  spec.description = "Conformance fixture: " + std::move(description);
  spec.input_schema = Json::parse(schema);
  spec.asks_for_input = true;
  return std::make_unique<FnTool>(std::move(spec), std::move(fn));
}

Json SamplePrompt(ToolContext& ctx) {
  const Json* answer = ctx.InputResponse("sampling");
  if (answer == nullptr) {
    const std::string prompt = ctx.arguments().value("prompt", std::string());
    return AskForInput(Json{{"sampling", SamplingQuestion(prompt, 100)}});
  }
  return TextResult("LLM response: " + SampledText(*answer));
}

// Asks the form `question` under the key "form"; then `prefix` + what the user answered.
Json ElicitAndSay(ToolContext& ctx, const Json& question, const std::string& prefix) {
  const Json* answer = ctx.InputResponse("form");
  if (answer == nullptr) return AskForInput(Json{{"form", question}});
  return TextResult(prefix + ElicitationText(*answer));
}

constexpr const char* kUserInfoForm = R"({"type":"object",
  "properties":{"username":{"type":"string","description":"User's response"},
                "email":{"type":"string","description":"User's email address"}},
  "required":["username","email"]})";

constexpr const char* kDefaultsForm = R"({"type":"object","properties":{
  "name":{"type":"string","default":"John Doe"},
  "age":{"type":"integer","default":30},
  "score":{"type":"number","default":95.5},
  "status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},
  "verified":{"type":"boolean","default":true}}})";

constexpr const char* kEnumsForm = R"({"type":"object","properties":{
  "untitledSingle":{"type":"string","enum":["option1","option2","option3"]},
  "titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},
                                          {"const":"value2","title":"Second Option"},
                                          {"const":"value3","title":"Third Option"}]},
  "legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],
                "enumNames":["Option One","Option Two","Option Three"]},
  "untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},
  "titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},
                                                  {"const":"value2","title":"Second Choice"},
                                                  {"const":"value3","title":"Third Choice"}]}}}})";

}  // namespace

std::vector<std::unique_ptr<Tool>> MakeConformanceLegacyTools() {
  std::vector<std::unique_ptr<Tool>> tools;
  tools.push_back(LegacyFixture(
      "test_sampling", "asks the client's model to answer the prompt (sampling).", SamplePrompt,
      R"({"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]})"));
  tools.push_back(LegacyFixture(
      "test_elicitation", "asks the user for a username and an email (elicitation).",
      [](ToolContext& ctx) {
        const std::string message = ctx.arguments().value("message", std::string());
        return ElicitAndSay(ctx, ElicitForm(message, Json::parse(kUserInfoForm)),
                            "User response: ");
      },
      R"({"type":"object","properties":{"message":{"type":"string"}},"required":["message"]})"));
  tools.push_back(LegacyFixture(
      "test_elicitation_sep1034_defaults",
      "asks a form whose every field has a default value (SEP-1034).", [](ToolContext& ctx) {
        return ElicitAndSay(ctx,
                            ElicitForm("Please review and update the form fields with defaults",
                                       Json::parse(kDefaultsForm)),
                            "Elicitation completed: ");
      }));
  tools.push_back(LegacyFixture(
      "test_elicitation_sep1330_enums", "asks a form with the five enum shapes of SEP-1330.",
      [](ToolContext& ctx) {
        return ElicitAndSay(
            ctx, ElicitForm("Please select options from the enum fields", Json::parse(kEnumsForm)),
            "Elicitation completed: ");
      }));
  return tools;
}

}  // namespace keel
