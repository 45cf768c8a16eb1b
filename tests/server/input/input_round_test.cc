// A tool's own questions (MRTR-1): each round of a multi round-trip request begun
// and finished in order, with the clock and nonce passed in. Pure: no threads, no session.
#include "server/input/input_round.h"

#include <variant>

#include <catch2/catch.hpp>

#include "protocol/tool_result.h"
#include "server/catalog/tool.h"

namespace keel::input_round_test {
namespace {

const StateKeys kKeys{std::string(32, 'k'), std::string()};
const Json kEverything = {
    {"elicitation", Json::object()}, {"sampling", Json::object()}, {"roots", Json::object()}};
const Json kArguments = {{"city", "Paris"}};

const Json kElicit = {
    {"method", "elicitation/create"},
    {"params", {{"message", "Name?"}, {"requestedSchema", {{"type", "object"}}}}}};
const Json kSample = {{"method", "sampling/createMessage"},
                      {"params", {{"messages", Json::array()}, {"maxTokens", 10}}}};
const Json kRoots = {{"method", "roots/list"}, {"params", Json::object()}};

InputClock Clock(const char* nonce, int64_t now_ms = 1000) {
  return InputClock{&kKeys, now_ms, nonce};
}

InputRound Begin(const Json& answers, const std::optional<std::string>& state,
                 const Json& capabilities = kEverything, const char* tool = "ask") {
  auto begun = BeginInputRound(tool, kArguments, capabilities, answers, state, Clock(""));
  REQUIRE(std::holds_alternative<InputRound>(begun));
  return std::get<InputRound>(begun);
}

RpcError Refused(const Json& answers, const std::optional<std::string>& state,
                 const char* tool = "ask") {
  auto begun = BeginInputRound(tool, kArguments, kEverything, answers, state, Clock(""));
  REQUIRE(std::holds_alternative<RpcError>(begun));
  return std::get<RpcError>(begun);
}

Json Finish(const InputRound& round, const Json& questions, const char* nonce,
            const std::string& tool_state = std::string()) {
  auto finished = FinishInputRound(round, "ask", AskForInput(questions, tool_state), Clock(nonce));
  REQUIRE(std::holds_alternative<Json>(finished));
  return std::get<Json>(finished);
}

}  // namespace

TEST_CASE("a call without answers is round 1, and its question goes out with a sealed state",
          "[MRTR-1]") {
  const InputRound first = Begin(Json(), std::nullopt);
  CHECK(first.round == 1);
  CHECK(first.answers == Json::object());
  const Json asked = Finish(first, {{"name", kElicit}}, "n1");
  CHECK(asked["resultType"] == "input_required");
  CHECK(asked["inputRequests"] == Json{{"name", kElicit}});
  CHECK(asked["requestState"].get<std::string>().rfind("v1.", 0) == 0);
  CHECK_FALSE(asked.contains("ttlMs"));
}

TEST_CASE("the next round's state carries every earlier answer and the tool's own state",
          "[MRTR-1]") {
  const Json asked1 = Finish(Begin(Json(), std::nullopt), {{"step1", kElicit}}, "n1", "s1");
  const Json answer1 = {{"action", "accept"}, {"content", {{"name", "Alice"}}}};
  const InputRound second = Begin({{"step1", answer1}}, asked1["requestState"].get<std::string>());
  CHECK(second.round == 2);
  CHECK(second.answers == Json{{"step1", answer1}});
  CHECK(second.tool_state == "s1");
  const Json asked2 = Finish(second, {{"step2", kElicit}}, "n2", "s2");
  CHECK(asked2["requestState"] != asked1["requestState"]);  // a new state every round
  const Json answer2 = {{"action", "accept"}, {"content", {{"color", "blue"}}}};
  const InputRound third = Begin({{"step2", answer2}}, asked2["requestState"].get<std::string>());
  CHECK(third.round == 3);
  CHECK(third.answers == Json{{"step1", answer1}, {"step2", answer2}});
  CHECK(third.tool_state == "s2");
}

TEST_CASE("answers without a state are taken as they are (the answer alone suffices)", "[MRTR-1]") {
  const Json answer = {{"action", "accept"}, {"content", {{"name", "Bob"}}}};
  const InputRound round = Begin({{"name", answer}}, std::nullopt);
  CHECK(round.round == 2);
  CHECK(round.answers == Json{{"name", answer}});
  CHECK(round.tool_state.empty());
}

TEST_CASE(
    "a state keel did not seal, or sealed for another call, and a non-object answer "
    "are refused",
    "[MRTR-1]") {
  const std::string state =
      Finish(Begin(Json(), std::nullopt), {{"name", kElicit}}, "n1")["requestState"]
          .get<std::string>();
  CHECK(Refused(Json(), state + "-TAMPERED").code == -32602);
  CHECK(Refused(Json(), state, "other_tool").message.find("another call") != std::string::npos);
  const RpcError bad = Refused({{"name", 12345}}, std::nullopt);
  CHECK(bad.code == -32602);
  CHECK(bad.message.find("inputResponses.name") != std::string::npos);
  auto expired = BeginInputRound("ask", kArguments, kEverything, Json(), state,
                                 Clock("", 1000 + kInputStateTtlMs));
  CHECK(std::holds_alternative<RpcError>(expired));
}

TEST_CASE("a question the client cannot answer is -32021 naming what it lacks", "[MRTR-1]") {
  const InputRound round = Begin(Json(), std::nullopt, Json{{"sampling", Json::object()}});
  auto finished = FinishInputRound(
      round, "ask", AskForInput({{"a", kElicit}, {"b", kSample}, {"c", kRoots}}), Clock("n"));
  REQUIRE(std::holds_alternative<RpcError>(finished));
  const RpcError& error = std::get<RpcError>(finished);
  CHECK(error.code == -32021);
  CHECK(error.data["requiredCapabilities"] ==
        Json{{"elicitation", Json::object()}, {"roots", Json::object()}});
}

TEST_CASE("which capability each question needs", "[MRTR-1]") {
  const Json form_only = {{"elicitation", Json::object()}};
  const Json url_only = {{"elicitation", {{"url", Json::object()}}}};
  const Json url_elicit = {{"method", "elicitation/create"}, {"params", {{"mode", "url"}}}};
  CHECK(MissingCapabilities({{"q", kElicit}}, form_only).empty());
  CHECK(MissingCapabilities({{"q", kElicit}}, url_only) ==
        Json{{"elicitation", {{"form", Json::object()}}}});
  CHECK(MissingCapabilities({{"q", url_elicit}}, form_only) ==
        Json{{"elicitation", {{"url", Json::object()}}}});
  Json sample_with_tools = kSample;
  sample_with_tools["params"]["tools"] = Json::array();
  CHECK(MissingCapabilities({{"q", sample_with_tools}}, {{"sampling", Json::object()}}) ==
        Json{{"sampling", {{"tools", Json::object()}}}});
  CHECK(MissingCapabilities({{"q", kRoots}}, Json()) == Json{{"roots", Json::object()}});
}

TEST_CASE("a question keel cannot send is the tool's error, not the client's", "[MRTR-1]") {
  const InputRound round = Begin(Json(), std::nullopt);
  for (const Json& questions :
       {Json::object(), Json{{"q", {{"method", "tools/call"}}}}, Json{{"q", 1}}, Json(7)}) {
    auto finished = FinishInputRound(round, "ask", AskForInput(questions), Clock("n"));
    REQUIRE(std::holds_alternative<Json>(finished));
    CHECK(std::get<Json>(finished)["structuredContent"]["error"]["type"] == "tool_error");
  }
}

TEST_CASE("a call that cannot be asked gets input_unavailable naming the questions", "[MRTR-1]") {
  const Json result = InputUnavailable("ask", AskForInput({{"name", kElicit}}), "no way",
                                       Json{{"roots", Json::object()}});
  CHECK(result["isError"] == true);
  CHECK(result["content"][0]["text"] ==
        "Tool 'ask' needs input from the client (name), but no way; nothing was done.");
  CHECK(result["structuredContent"]["error"]["missingCapabilities"] ==
        Json{{"roots", Json::object()}});
  CHECK(result["structuredContent"]["error"]["type"] == "input_unavailable");
  CHECK(result["structuredContent"]["error"]["inputRequests"] == Json{{"name", kElicit}});
}

TEST_CASE("a tool reads its answers and asks only what the client declared", "[MRTR-1]") {
  ToolContext ctx(Json::object(), CancellationToken(), nullptr);
  CHECK(ctx.InputResponse("name") == nullptr);
  CHECK_FALSE(ctx.CanAsk(kElicit));  // a call without an input round cannot be asked
  CallIdentity identity;
  auto round = std::make_shared<InputRound>(
      Begin({{"name", {{"action", "decline"}}}}, std::nullopt, Json{{"sampling", Json::object()}}));
  identity.input = round;
  ctx.set_identity(identity);
  REQUIRE(ctx.InputResponse("name") != nullptr);
  CHECK((*ctx.InputResponse("name"))["action"] == "decline");
  CHECK(ctx.CanAsk(kSample));
  CHECK_FALSE(ctx.CanAsk(kElicit));
  identity.task_id = "t";  // a task's work: nobody waits to answer
  ctx.set_identity(identity);
  CHECK_FALSE(ctx.CanAsk(kSample));
}

}  // namespace keel::input_round_test
