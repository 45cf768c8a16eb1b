// The legacy conformance fixtures ask what the official suite's 2025-11-25 scenarios
// (tools-call-sampling, tools-call-elicitation, elicitation-sep1034-defaults,
// elicitation-sep1330-enums) check in the request keel sends, and say what was answered. How
// a question travels (a server-to-client request, or MRTR) is keel's, tested elsewhere.
#include "server/tools/conformance_legacy_tools.h"

#include <map>
#include <memory>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "protocol/tool_result.h"
#include "server/catalog/tool_registry.h"
#include "server/input/input_round.h"

namespace keel::conformance_legacy_tools_test {
namespace {

// Calls `tool` with `arguments` and the answers so far, as keel runs a legacy call again with
// the client's answers.
Json CallLegacy(Tool& tool, Json arguments, Json answers = Json::object()) {
  auto round = std::make_shared<InputRound>();
  round->client_capabilities = {{"sampling", Json::object()}, {"elicitation", Json::object()}};
  round->answers = std::move(answers);
  round->server_asks = true;
  CallIdentity identity;
  identity.tool_name = tool.spec().name;
  identity.input = std::move(round);
  ToolContext ctx(std::move(arguments), CancellationToken(), nullptr);
  ctx.set_identity(std::move(identity));
  return tool.Call(ctx);
}

std::map<std::string, std::unique_ptr<Tool>> LegacyFixtures() {
  std::map<std::string, std::unique_ptr<Tool>> tools;
  for (auto& tool : MakeConformanceLegacyTools()) {
    const std::string name = tool->spec().name;
    tools.emplace(name, std::move(tool));
  }
  return tools;
}

// The one question of an AskForInput result.
Json OnlyQuestion(const Json& asked) {
  REQUIRE(IsInputRequired(asked));
  REQUIRE(asked["inputRequests"].size() == 1);
  return asked["inputRequests"].begin().value();
}

}  // namespace

TEST_CASE("every legacy fixture registers with a well-formed schema and asks for input") {
  auto tools = LegacyFixtures();
  CHECK(tools.size() == 4);
  ToolRegistry registry;
  for (auto& [name, tool] : tools) {
    INFO(name);
    CHECK(tool->spec().asks_for_input);
    CHECK(registry.Register(std::move(tool)).empty());
  }
}

TEST_CASE("test_sampling sends the prompt as one user message with maxTokens 100") {
  auto tools = LegacyFixtures();
  Tool& tool = *tools.at("test_sampling");
  const Json question = OnlyQuestion(CallLegacy(tool, {{"prompt", "Test prompt"}}));
  CHECK(question == Json::parse(R"({"method":"sampling/createMessage","params":{
      "messages":[{"role":"user","content":{"type":"text","text":"Test prompt"}}],
      "maxTokens":100}})"));
  const Json answer = Json::parse(R"({"role":"assistant","model":"test-model",
      "content":{"type":"text","text":"This is a test response"},"stopReason":"endTurn"})");
  const Json done = CallLegacy(tool, {{"prompt", "Test prompt"}}, {{"sampling", answer}});
  CHECK(done["content"][0]["text"] == "LLM response: This is a test response");
}

TEST_CASE("test_elicitation asks username and email with the message, and says the answer") {
  auto tools = LegacyFixtures();
  Tool& tool = *tools.at("test_elicitation");
  const Json question = OnlyQuestion(CallLegacy(tool, {{"message", "Please provide"}}));
  CHECK(question["method"] == "elicitation/create");
  CHECK(question["params"]["message"] == "Please provide");
  const Json& form = question["params"]["requestedSchema"];
  CHECK(form["properties"]["username"]["description"] == "User's response");
  CHECK(form["properties"]["email"]["description"] == "User's email address");
  CHECK(form["required"] == Json::array({"username", "email"}));
  const Json answer = {{"action", "accept"}, {"content", {{"username", "u"}, {"email", "e"}}}};
  CHECK(CallLegacy(tool, {{"message", "m"}}, {{"form", answer}})["content"][0]["text"] ==
        R"(User response: action=accept, content={"email":"e","username":"u"})");
}

TEST_CASE("the SEP-1034 form gives every primitive a default and the SEP-1330 form all enums") {
  auto tools = LegacyFixtures();
  const Json defaults =
      OnlyQuestion(CallLegacy(*tools.at("test_elicitation_sep1034_defaults"), Json::object()));
  const Json& props = defaults["params"]["requestedSchema"]["properties"];
  CHECK(props["name"]["default"] == "John Doe");
  CHECK(props["age"] == Json::parse(R"({"type":"integer","default":30})"));
  CHECK(props["score"]["default"] == 95.5);
  CHECK(props["status"]["default"] == "active");
  CHECK(props["verified"]["default"] == true);
  const Json enums =
      OnlyQuestion(CallLegacy(*tools.at("test_elicitation_sep1330_enums"), Json::object()));
  const Json& fields = enums["params"]["requestedSchema"]["properties"];
  CHECK(fields["titledSingle"]["oneOf"][0] == Json::parse(R"({"const":"value1",
                                                              "title":"First Option"})"));
  CHECK(fields["legacyEnum"]["enumNames"].size() == fields["legacyEnum"]["enum"].size());
  CHECK(fields["untitledMulti"]["items"]["enum"].size() == 3);
  CHECK(fields["titledMulti"]["items"]["anyOf"].size() == 3);
  const Json answer = {{"action", "decline"}};
  CHECK(CallLegacy(*tools.at("test_elicitation_sep1330_enums"), Json::object(),
                   {{"form", answer}})["content"][0]["text"] ==
        "Elicitation completed: action=decline, content={}");
}

}  // namespace keel::conformance_legacy_tools_test
