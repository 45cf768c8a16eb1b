#include "server/tools/conformance_mrtr_tools.h"

#include <string>
#include <utility>
#include <variant>

#include "protocol/tool_result.h"
#include "server/tools/fn_tool.h"
#include "server/tools/input_questions.h"

namespace keel {
namespace {

constexpr const char* kMrtrNoArguments = R"({"type":"object","properties":{}})";

std::unique_ptr<Tool> MrtrFixture(std::string name, std::string description, FnTool::Fn fn) {
  ToolSpec spec;
  spec.name = std::move(name);
  spec.description = "Conformance fixture (MRTR): " + std::move(description);
  spec.input_schema = Json::parse(kMrtrNoArguments);
  spec.asks_for_input = true;
  return std::make_unique<FnTool>(std::move(spec), std::move(fn));
}

// The user's string `property` from the answer to `key`; or what the tool answers instead:
// `question` (asked again when an accepted answer lacks the property, with `tool_state`) or,
// when the user declined, an isError result.
std::variant<std::string, Json> AskedString(const ToolContext& ctx, const std::string& key,
                                            const Json& question, const std::string& property,
                                            const std::string& tool_state = std::string()) {
  const Json* answer = ctx.InputResponse(key);
  if (answer == nullptr) return AskForInput(Json{{key, question}}, tool_state);
  std::string refused;
  if (std::optional<std::string> value = AcceptedString(*answer, property, &refused)) {
    return *std::move(value);
  }
  if (refused.rfind("accepted", 0) == 0) return AskForInput(Json{{key, question}}, tool_state);
  return ErrorResult("The user did not give the input (" + refused + "); nothing was done.",
                     Json{{"type", "input_declined"}, {"action", refused}});
}

Json ElicitName(ToolContext& ctx) {
  auto name = AskedString(ctx, "user_name", ElicitString("What is your name?", "name"), "name");
  if (Json* instead = std::get_if<Json>(&name)) return std::move(*instead);
  return TextResult("Hello, " + std::get<std::string>(name) + "!");
}

Json SampleCapital(ToolContext& ctx) {
  const Json* answer = ctx.InputResponse("capital_question");
  if (answer == nullptr) {
    return AskForInput(
        Json{{"capital_question", SamplingQuestion("What is the capital of France?", 100)}});
  }
  const std::string text = SampledText(*answer);
  return TextResult(text.empty() ? "The client's model gave no text." : "Sampled answer: " + text);
}

Json ListRoots(ToolContext& ctx) {
  const Json* answer = ctx.InputResponse("client_roots");
  if (answer == nullptr) return AskForInput(Json{{"client_roots", RootsQuestion()}});
  return TextResult("Client roots: " + RootsText(*answer));
}

Json ConfirmQuestion() {
  return ElicitForm("Please confirm", Json{{"type", "object"},
                                           {"properties", {{"ok", {{"type", "boolean"}}}}},
                                           {"required", Json::array({"ok"})}});
}

// The confirm round of request_state and tampered_state: the boolean `ok` of an accepted
// answer, or what the tool answers instead.
std::variant<bool, Json> Confirmed(const ToolContext& ctx, const std::string& tool_state) {
  const Json* answer = ctx.InputResponse("confirm");
  if (answer == nullptr) return AskForInput(Json{{"confirm", ConfirmQuestion()}}, tool_state);
  const std::string action = answer->value("action", std::string());
  const Json content = answer->value("content", Json::object());
  if (action == "accept" && content.is_object() && content.contains("ok") &&
      content["ok"].is_boolean()) {
    return content["ok"].get<bool>();
  }
  if (action == "accept") return AskForInput(Json{{"confirm", ConfirmQuestion()}}, tool_state);
  return ErrorResult("The user did not confirm (" + (action.empty() ? "no action" : action) +
                         "); nothing was done.",
                     Json{{"type", "input_declined"}, {"action", action}});
}

constexpr const char* kAwaitingConfirmation = "awaiting-confirmation";

Json ConfirmWithState(ToolContext& ctx) {
  auto ok = Confirmed(ctx, kAwaitingConfirmation);
  if (Json* instead = std::get_if<Json>(&ok)) return std::move(*instead);
  const std::string confirmed = std::get<bool>(ok) ? "confirmed" : "not confirmed";
  if (ctx.tool_state() == kAwaitingConfirmation) {
    return TextResult("state-ok: the requestState came back intact; " + confirmed);
  }
  return TextResult("The answer came without a requestState; " + confirmed);
}

Json ConfirmTamperProof(ToolContext& ctx) {
  auto ok = Confirmed(ctx, "tamper-proof");
  if (Json* instead = std::get_if<Json>(&ok)) return std::move(*instead);
  return TextResult(std::string("The requestState was intact; ") +
                    (std::get<bool>(ok) ? "confirmed" : "not confirmed"));
}

Json MultipleQuestions() {
  return Json{{"user_name", ElicitString("What is your name?", "name")},
              {"greeting", SamplingQuestion("Generate a greeting", 50)},
              {"client_roots", RootsQuestion()}};
}

Json MultipleInputs(ToolContext& ctx) {
  const Json questions = MultipleQuestions();
  Json missing = Json::object();
  for (const auto& [key, question] : questions.items()) {
    if (ctx.InputResponse(key) == nullptr) missing[key] = question;
  }
  if (!missing.empty()) return AskForInput(std::move(missing), "multiple-inputs");
  auto name = AskedString(ctx, "user_name", questions["user_name"], "name", "multiple-inputs");
  if (Json* instead = std::get_if<Json>(&name)) return std::move(*instead);
  return TextResult("name: " + std::get<std::string>(name) +
                    "; greeting: " + SampledText(*ctx.InputResponse("greeting")) +
                    "; roots: " + RootsText(*ctx.InputResponse("client_roots")));
}

Json MultiRound(ToolContext& ctx) {
  auto name = AskedString(ctx, "step1", ElicitString("Step 1: What is your name?", "name"), "name",
                          "round-1");
  if (Json* instead = std::get_if<Json>(&name)) return std::move(*instead);
  auto color =
      AskedString(ctx, "step2", ElicitString("Step 2: What is your favorite color?", "color"),
                  "color", "round-2");
  if (Json* instead = std::get_if<Json>(&color)) return std::move(*instead);
  return TextResult(std::get<std::string>(name) + " likes " + std::get<std::string>(color));
}

Json AskWhatClientCan(ToolContext& ctx) {
  const Json questions =
      Json{{"user_name", ElicitString("What is your name?", "name")},
           {"capital_question", SamplingQuestion("What is the capital of France?", 100)},
           {"client_roots", RootsQuestion()}};
  Json asked = Json::object();
  std::string said;
  for (const auto& [key, question] : questions.items()) {
    const Json* answer = ctx.InputResponse(key);
    if (answer != nullptr) {
      said += (said.empty() ? "" : "; ") + key + " answered";
    } else if (ctx.CanAsk(question)) {
      asked[key] = question;
    }
  }
  // Asking what the client cannot answer ends the call with -32021, naming what it lacks.
  if (asked.empty() && said.empty()) return AskForInput(questions);
  if (!asked.empty()) return AskForInput(std::move(asked));
  return TextResult("Asked only what the client declared: " + said);
}

}  // namespace

std::vector<std::unique_ptr<Tool>> MakeConformanceMrtrTools() {
  std::vector<std::unique_ptr<Tool>> tools;
  tools.push_back(MrtrFixture("test_input_required_result_elicitation",
                              "asks the user's name (elicitation), then greets them.", ElicitName));
  tools.push_back(MrtrFixture("test_input_required_result_sampling",
                              "asks the client's model the capital of France (sampling).",
                              SampleCapital));
  tools.push_back(MrtrFixture("test_input_required_result_list_roots",
                              "asks the client's roots (roots/list).", ListRoots));
  tools.push_back(MrtrFixture("test_input_required_result_request_state",
                              "asks a confirmation with a requestState it checks on the retry.",
                              ConfirmWithState));
  tools.push_back(MrtrFixture("test_input_required_result_multiple_inputs",
                              "asks a name, a sampled greeting and the roots in one round.",
                              MultipleInputs));
  tools.push_back(MrtrFixture("test_input_required_result_multi_round",
                              "asks a name, then a color, in two rounds.", MultiRound));
  tools.push_back(MrtrFixture("test_input_required_result_tampered_state",
                              "asks a confirmation; a tampered requestState is refused.",
                              ConfirmTamperProof));
  tools.push_back(MrtrFixture("test_input_required_result_capabilities",
                              "asks only what the request's clientCapabilities declare.",
                              AskWhatClientCan));
  return tools;
}

}  // namespace keel
