// An approval asked through elicitation (MRTR-2, OPS-3): who is asked, what the question
// says, and each answer a retry can bring, forced by calling the steps in order. No
// threads, no clock but the one passed in.
#include "server/input/approval_input.h"

#include <variant>

#include <catch2/catch.hpp>

namespace keel::approval_input_test {
namespace {

const StateKeys kKeys{std::string(32, 'k'), std::string()};
const Json kElicitation = {{"elicitation", Json::object()}};

ToolSpec Charge() {
  ToolSpec spec;
  spec.name = "charge_account";
  spec.effect = EffectClass::kUnsafeWrite;
  spec.backend = "payments";
  spec.approval_required = true;
  return spec;
}

const Json kArguments = {{"account", "a1"}, {"cents", 500}, {"idempotencyKey", "k1"}};

ApprovalRound Round(const char* nonce, int64_t now_ms = 0) {
  return ApprovalRound{&kKeys, now_ms, nonce};
}

ApprovalStep Step(const Json& answers, const std::optional<std::string>& state,
                  const Json& arguments = kArguments, const char* nonce = "n2") {
  return ApprovalByElicitation(Charge(), arguments, answers, state, Round(nonce));
}

// Round 1: the question and its state.
ApprovalStep Ask() {
  ApprovalStep step = Step(Json(), std::nullopt, kArguments, "n1");
  REQUIRE(step.kind == ApprovalStep::Kind::kAsk);
  return step;
}

Json Answer(const char* action) {
  return Json{{"approval", {{"action", action}, {"content", Json::object()}}}};
}

}  // namespace

TEST_CASE("only a client declaring form elicitation is asked, and only without approval_id",
          "[MRTR-2]") {
  CHECK(WantsApprovalInput(Charge(), kArguments, kElicitation));
  CHECK(WantsApprovalInput(Charge(), kArguments, {{"elicitation", {{"form", Json::object()}}}}));
  CHECK_FALSE(
      WantsApprovalInput(Charge(), kArguments, {{"elicitation", {{"url", Json::object()}}}}));
  CHECK_FALSE(WantsApprovalInput(Charge(), kArguments, Json::object()));
  CHECK_FALSE(WantsApprovalInput(Charge(), kArguments, Json()));
  Json approved = kArguments;
  approved["approval_id"] = "ap-1";
  CHECK_FALSE(WantsApprovalInput(Charge(), approved, kElicitation));
  ToolSpec no_approval = Charge();
  no_approval.approval_required = false;
  CHECK_FALSE(WantsApprovalInput(no_approval, kArguments, kElicitation));
}

TEST_CASE("the question names the tool, its effect, backend and arguments, with a sealed state",
          "[MRTR-2]") {
  const ApprovalStep step = Ask();
  CHECK(step.result["resultType"] == "input_required");
  const Json& request = step.result["inputRequests"]["approval"];
  CHECK(request["method"] == "elicitation/create");
  CHECK(request["params"]["mode"] == "form");
  CHECK(request["params"]["requestedSchema"]["type"] == "object");
  const std::string message = request["params"]["message"].get<std::string>();
  for (const char* part : {"charge_account", "unsafe_write", "payments", "\"cents\":500"}) {
    CHECK(message.find(part) != std::string::npos);
  }
  const auto opened = OpenState(step.result["requestState"].get<std::string>(), kKeys, 0);
  REQUIRE(std::holds_alternative<StateClaims>(opened));
  CHECK(std::get<StateClaims>(opened).round == 1);
  CHECK_FALSE(step.result.contains("ttlMs"));
}

TEST_CASE("accepted, the call runs with an approval id named by the question's state",
          "[MRTR-2][OPS-3]") {
  const std::string state = Ask().result["requestState"].get<std::string>();
  const ApprovalStep step = Step(Answer("accept"), state);
  REQUIRE(step.kind == ApprovalStep::Kind::kApproved);
  CHECK(step.approval_id == "elicited-n1");
  // The same retry again (a new JSON-RPC id, the same state) is the same approval.
  CHECK(Step(Answer("accept"), state).approval_id == "elicited-n1");
}

TEST_CASE("declined or cancelled, the call ends with approval_declined and nothing runs",
          "[MRTR-2]") {
  const std::string state = Ask().result["requestState"].get<std::string>();
  for (const char* action : {"decline", "cancel"}) {
    const ApprovalStep step = Step(Answer(action), state);
    REQUIRE(step.kind == ApprovalStep::Kind::kDeclined);
    CHECK(step.result["isError"] == true);
    CHECK(step.result["structuredContent"]["error"]["type"] == "approval_declined");
    CHECK(step.result["structuredContent"]["error"]["action"] == action);
  }
}

TEST_CASE("a retry without the answer is asked again, in a new round with a new state",
          "[MRTR-1][MRTR-2]") {
  const std::string first = Ask().result["requestState"].get<std::string>();
  for (const Json& answers : {Json(), Json::object(), Json{{"other", 1}}}) {
    const ApprovalStep again = Step(answers, first);
    REQUIRE(again.kind == ApprovalStep::Kind::kAsk);
    const std::string second = again.result["requestState"].get<std::string>();
    CHECK(second != first);
    CHECK(std::get<StateClaims>(OpenState(second, kKeys, 0)).round == 2);
  }
  // An answer without the state keel handed out is not taken: the question is asked.
  CHECK(Step(Answer("accept"), std::nullopt).kind == ApprovalStep::Kind::kAsk);
}

TEST_CASE("a forged, expired or misplaced state, or an answer that is no ElicitResult, is -32602",
          "[MRTR-1][MRTR-2]") {
  const std::string state = Ask().result["requestState"].get<std::string>();
  CHECK(Step(Answer("accept"), state + "-TAMPERED").kind == ApprovalStep::Kind::kRefused);
  Json other = kArguments;
  other["cents"] = 600;
  const ApprovalStep moved = Step(Answer("accept"), state, other);
  REQUIRE(moved.kind == ApprovalStep::Kind::kRefused);
  CHECK(moved.error.code == -32602);
  const ApprovalStep late = ApprovalByElicitation(Charge(), kArguments, Answer("accept"), state,
                                                  Round("n2", kApprovalStateTtlMs));
  CHECK(late.kind == ApprovalStep::Kind::kRefused);
  for (const Json& bad : {Json{{"approval", 12345}}, Json{{"approval", {{"action", "maybe"}}}},
                          Json{{"approval", Json::object()}}}) {
    CHECK(Step(bad, state).kind == ApprovalStep::Kind::kRefused);
  }
}

}  // namespace keel::approval_input_test
