// The MRTR conformance fixtures ask what the official suite's input-required-result-*
// scenarios expect (@modelcontextprotocol/conformance 0.2.0-alpha.12) and read the answers
// keel hands them (ToolContext::InputResponse); the sealing of requestState and the -32021
// for a question the client cannot take are input_round.h's, tested there.
#include "server/tools/conformance_mrtr_tools.h"

#include <map>
#include <memory>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "protocol/tool_result.h"
#include "server/catalog/tool_registry.h"
#include "server/input/input_round.h"

namespace keel::conformance_mrtr_tools_test {
namespace {

const Json kAllCapabilities = {
    {"elicitation", Json::object()}, {"sampling", Json::object()}, {"roots", Json::object()}};

class MrtrFixtures {
 public:
  MrtrFixtures() {
    for (auto& tool : MakeConformanceMrtrTools()) {
      const std::string name = tool->spec().name;
      by_name_.emplace(name, std::move(tool));
    }
  }
  // Calls `name` with `answers` (by key) and `tool_state`, as a modern call of a client with
  // `capabilities`.
  Json Call(const std::string& name, Json answers = Json::object(),
            const std::string& tool_state = std::string(),
            const Json& capabilities = kAllCapabilities) {
    auto round = std::make_shared<InputRound>();
    round->client_capabilities = capabilities;
    round->answers = std::move(answers);
    round->tool_state = tool_state;
    CallIdentity identity;
    identity.tool_name = name;
    identity.modern = true;
    identity.input = std::move(round);
    ToolContext ctx(Json::object(), CancellationToken(), nullptr);
    ctx.set_identity(std::move(identity));
    return by_name_.at(name)->Call(ctx);
  }
  std::map<std::string, std::unique_ptr<Tool>>& all() { return by_name_; }

 private:
  std::map<std::string, std::unique_ptr<Tool>> by_name_;
};

Json Accept(const Json& content) { return Json{{"action", "accept"}, {"content", content}}; }

std::string TextOf(const Json& result) {
  return result.at("content").at(0).at("text").get<std::string>();
}

}  // namespace

TEST_CASE("every MRTR fixture registers, asks for input and takes no arguments") {
  MrtrFixtures fixtures;
  CHECK(fixtures.all().size() == 8);
  ToolRegistry registry;
  for (auto& [name, tool] : fixtures.all()) {
    INFO(name);
    CHECK(tool->spec().asks_for_input);
    CHECK_FALSE(tool->spec().description.empty());
    CHECK(registry.Register(std::move(tool)).empty());
  }
}

TEST_CASE("the elicitation fixture asks user_name with the suite's form, then greets the name") {
  MrtrFixtures fixtures;
  const Json asked = fixtures.Call("test_input_required_result_elicitation");
  REQUIRE(IsInputRequired(asked));
  const Json question = asked["inputRequests"]["user_name"];
  CHECK(question["method"] == "elicitation/create");
  CHECK(question["params"]["message"] == "What is your name?");
  CHECK(question["params"]["requestedSchema"] ==
        Json::parse(R"({"type":"object","properties":{"name":{"type":"string"}},
                        "required":["name"]})"));
  const Json done = fixtures.Call("test_input_required_result_elicitation",
                                  {{"user_name", Accept({{"name", "Alice"}})},
                                   {"unknown_extra_key", Accept({{"foo", "bar"}})}});
  CHECK(TextOf(done) == "Hello, Alice!");
}

TEST_CASE("an accepted answer without a string name is asked again and a declined one fails") {
  MrtrFixtures fixtures;
  const Json again = fixtures.Call("test_input_required_result_elicitation",
                                   {{"user_name", Accept({{"name", 12345}})}});
  CHECK(IsInputRequired(again));
  CHECK(again["inputRequests"].contains("user_name"));
  const Json declined = fixtures.Call("test_input_required_result_elicitation",
                                      {{"user_name", {{"action", "decline"}}}});
  CHECK(declined["isError"] == true);
  CHECK(declined["structuredContent"]["error"]["type"] == "input_declined");
  // A wrong key only: the question again, not an error.
  CHECK(IsInputRequired(fixtures.Call("test_input_required_result_elicitation",
                                      {{"wrong_key", Accept({{"data", "wrong"}})}})));
}

TEST_CASE("the sampling and roots fixtures ask one question each and say what was answered") {
  MrtrFixtures fixtures;
  const Json sampling = fixtures.Call("test_input_required_result_sampling");
  CHECK(sampling["inputRequests"]["capital_question"]["params"]["maxTokens"] == 100);
  const Json sampled = Json::parse(R"({"role":"assistant","model":"m","stopReason":"endTurn",
      "content":{"type":"text","text":"The capital of France is Paris."}})");
  CHECK(TextOf(fixtures.Call("test_input_required_result_sampling",
                             {{"capital_question", sampled}})) ==
        "Sampled answer: The capital of France is Paris.");
  CHECK(fixtures.Call("test_input_required_result_list_roots")["inputRequests"]["client_roots"] ==
        Json::parse(R"({"method":"roots/list","params":{}})"));
  const Json roots = Json::parse(R"({"roots":[{"uri":"file:///test/root","name":"Test Root"}]})");
  CHECK(TextOf(fixtures.Call("test_input_required_result_list_roots", {{"client_roots", roots}})) ==
        "Client roots: file:///test/root (Test Root)");
}

TEST_CASE("the request_state fixture says state-ok only when its own state came back") {
  MrtrFixtures fixtures;
  const Json asked = fixtures.Call("test_input_required_result_request_state");
  REQUIRE(IsInputRequired(asked));
  const std::string state = asked["requestState"].get<std::string>();
  CHECK(asked["inputRequests"]["confirm"]["params"]["message"] == "Please confirm");
  const Json answers = {{"confirm", Accept({{"ok", true}})}};
  CHECK(TextOf(fixtures.Call("test_input_required_result_request_state", answers, state))
            .rfind("state-ok", 0) == 0);
  CHECK(
      TextOf(fixtures.Call("test_input_required_result_request_state", answers)).find("state-ok") ==
      std::string::npos);
}

TEST_CASE("the multiple_inputs fixture asks what is still missing and completes with all three") {
  MrtrFixtures fixtures;
  const Json first = fixtures.Call("test_input_required_result_multiple_inputs");
  REQUIRE(IsInputRequired(first));
  CHECK(first["inputRequests"].size() == 3);
  CHECK(first["inputRequests"]["greeting"]["params"]["maxTokens"] == 50);
  CHECK(first["inputRequests"]["greeting"]["params"]["messages"][0]["content"]["text"] ==
        "Generate a greeting");
  Json answers = {{"user_name", Accept({{"name", "Alice"}})}};
  const Json partial = fixtures.Call("test_input_required_result_multiple_inputs", answers);
  CHECK(partial["inputRequests"].size() == 2);
  answers["greeting"] = Json::parse(R"({"role":"assistant","content":{"type":"text",
                                         "text":"Hello there!"},"model":"m"})");
  answers["client_roots"] = Json::parse(R"({"roots":[{"uri":"file:///r"}]})");
  CHECK(TextOf(fixtures.Call("test_input_required_result_multiple_inputs", answers)) ==
        "name: Alice; greeting: Hello there!; roots: file:///r");
}

TEST_CASE("the multi_round fixture asks step1, then step2, then completes") {
  MrtrFixtures fixtures;
  const Json round1 = fixtures.Call("test_input_required_result_multi_round");
  CHECK(round1["inputRequests"]["step1"]["params"]["message"] == "Step 1: What is your name?");
  Json answers = {{"step1", Accept({{"name", "Alice"}})}};
  const Json round2 = fixtures.Call("test_input_required_result_multi_round", answers);
  CHECK(round2["inputRequests"]["step2"]["params"]["message"] ==
        "Step 2: What is your favorite color?");
  CHECK(round2["requestState"] != round1["requestState"]);
  answers["step2"] = Accept({{"color", "blue"}});
  CHECK(TextOf(fixtures.Call("test_input_required_result_multi_round", answers)) ==
        "Alice likes blue");
}

TEST_CASE("the capabilities fixture asks only what the request's clientCapabilities declare") {
  MrtrFixtures fixtures;
  const Json sampling_only = fixtures.Call("test_input_required_result_capabilities",
                                           Json::object(), "", {{"sampling", Json::object()}});
  REQUIRE(IsInputRequired(sampling_only));
  CHECK(sampling_only["inputRequests"].size() == 1);
  CHECK(sampling_only["inputRequests"]["capital_question"]["method"] == "sampling/createMessage");
  // Declaring nothing: all three are asked, and keel answers -32021 naming what is missing.
  CHECK(fixtures
            .Call("test_input_required_result_capabilities", Json::object(), "",
                  Json::object())["inputRequests"]
            .size() == 3);
}

}  // namespace keel::conformance_mrtr_tools_test
