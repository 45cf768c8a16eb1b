#include "server/tools/asking_tools.h"

#include <string>

#include "protocol/json_rpc.h"
#include "protocol/tool_result.h"
#include "server/tools/fn_tool.h"
#include "server/tools/input_questions.h"

namespace keel {
namespace {

ToolSpec AskingSpec(std::string name, std::string description) {
  ToolSpec spec;
  spec.name = std::move(name);
  spec.description = std::move(description);
  spec.input_schema = Json::parse(R"({"type":"object","additionalProperties":false})");
  spec.asks_for_input = true;
  return spec;
}

Json Declined(const std::string& tool, const std::string& why) {
  const bool invalid = why.rfind("accepted", 0) == 0;
  return ErrorResult(tool + ": " +
                         (invalid ? "the answer does not fit the question (" + why + ")"
                                  : "the user did not give the input (" + why + ")") +
                         "; nothing was done",
                     Json{{"type", invalid ? "input_invalid" : "input_declined"},
                          {"action", invalid ? "accept" : why}});
}

Json AskName(ToolContext& ctx) {
  const Json* answer = ctx.InputResponse("user_name");
  if (answer == nullptr) {
    return AskForInput(Json{{"user_name", ElicitString("What is your name?", "name")}});
  }
  std::string declined;
  const std::optional<std::string> name = AcceptedString(*answer, "name", &declined);
  if (!name) return Declined("ask_name", declined);
  return TextResult("Hello, " + *name + "!");
}

Json AskTwoRounds(ToolContext& ctx) {
  const Json* step1 = ctx.InputResponse("step1");
  if (step1 == nullptr) {
    return AskForInput(Json{{"step1", ElicitString("Step 1: What is your name?", "name")}},
                       "asked-step1");
  }
  std::string declined;
  const std::optional<std::string> name = AcceptedString(*step1, "name", &declined);
  if (!name) return Declined("ask_two_rounds", declined);
  const Json* step2 = ctx.InputResponse("step2");
  if (step2 == nullptr) {
    return AskForInput(
        Json{{"step2", ElicitString("Step 2: What is your favorite color?", "color")}},
        "asked-step2 after " + ctx.tool_state());
  }
  const std::optional<std::string> color = AcceptedString(*step2, "color", &declined);
  if (!color) return Declined("ask_two_rounds", declined);
  return TextResult(*name + " likes " + *color + " (" + ctx.tool_state() + ")");
}

// The three questions of ask_everything, by key.
Json EverythingQuestions() {
  return Json{{"user_name", ElicitString("What is your name?", "name")},
              {"capital", SamplingQuestion("What is the capital of France?", 100)},
              {"client_roots", RootsQuestion()}};
}

// What the answer to `key` said, or "(not asked)".
std::string Said(const ToolContext& ctx, const std::string& key) {
  const Json* answer = ctx.InputResponse(key);
  if (answer == nullptr) return "(not asked)";
  if (key == "user_name") {
    std::string declined;
    return AcceptedString(*answer, "name", &declined).value_or("(" + declined + ")");
  }
  if (key == "capital") {
    const Json content = answer->value("content", Json::object());
    return content.is_object() ? content.value("text", std::string()) : std::string();
  }
  const Json roots = answer->value("roots", Json::array());
  return std::to_string(roots.is_array() ? roots.size() : 0) + " root(s)";
}

Json AskEverything(ToolContext& ctx) {
  // Asks, in one round, what is not answered yet and the client can answer; when it can
  // answer none of the three, asks them all (and the client learns what it lacks: -32021).
  const Json questions = EverythingQuestions();
  Json asked = Json::object();
  bool any_answered = false;
  for (const auto& [key, question] : questions.items()) {
    if (ctx.InputResponse(key) != nullptr) {
      any_answered = true;
    } else if (ctx.CanAsk(question)) {
      asked[key] = question;
    }
  }
  if (asked.empty() && !any_answered) return AskForInput(questions);
  if (!asked.empty()) return AskForInput(std::move(asked));
  return TextResult("name: " + Said(ctx, "user_name") + "; capital: " + Said(ctx, "capital") +
                    "; roots: " + Said(ctx, "client_roots"));
}

}  // namespace

void AddAskingTools(std::vector<std::unique_ptr<Tool>>& tools) {
  tools.push_back(std::make_unique<FnTool>(
      AskingSpec("ask_name", "Test tool: asks the user's name (elicitation), then greets them."),
      AskName));
  tools.push_back(std::make_unique<FnTool>(
      AskingSpec("ask_two_rounds",
                 "Test tool: asks a name, then a color, in two rounds of input requests."),
      AskTwoRounds));
  tools.push_back(std::make_unique<FnTool>(
      AskingSpec("ask_everything",
                 "Test tool: asks a name (elicitation), the capital of France (sampling) and "
                 "the client's roots at once."),
      AskEverything));
}

}  // namespace keel
