// ClientRequests and ClientAnswers (MRTR-1, legacy clients): a tool's round of questions as
// server-to-client requests, each way a round can end forced by calling the loop side in that
// order; the worker's wait ended by an answer, a cancel or its deadline. No sleeps: a wait
// that must end is ended before it starts, or by a deadline already past.
#include "server/input/client_requests.h"

#include <memory>

#include <catch2/catch.hpp>

#include "fakes/recording_sink.h"

namespace keel::client_requests_test {
namespace {

const Json kTwoQuestions = {
    {"name", {{"method", "elicitation/create"}, {"params", {{"message", "Name?"}}}}},
    {"roots", {{"method", "roots/list"}, {"params", Json::object()}}}};

ClientAnswers::Outcome Ended(ClientAnswers& box) {
  // Already finished: Wait returns at once, whatever the deadline.
  return box.Wait(CancellationToken(), std::chrono::steady_clock::now());
}

struct Fixture {
  RecordingSink sink;
  ClientRequests requests{sink};
  std::shared_ptr<ClientAnswers> box = std::make_shared<ClientAnswers>();
  Json IdOf(const std::string& method) const {
    for (const Json& m : sink.WithMethod(method)) return m["id"];
    return Json();
  }
};

}  // namespace

TEST_CASE(
    "each question goes out as a request with an id keel owns, and the answers come "
    "back by key",
    "[MRTR-1]") {
  Fixture f;
  f.requests.Ask(kTwoQuestions, f.box);
  REQUIRE(f.sink.messages().size() == 2);
  const Json name_id = f.IdOf("elicitation/create");
  const Json roots_id = f.IdOf("roots/list");
  CHECK(name_id.is_string());
  CHECK(name_id != roots_id);
  CHECK(f.sink.WithMethod("elicitation/create")[0]["params"]["message"] == "Name?");
  CHECK(f.sink.lines()[0].rfind(R"({"jsonrpc":"2.0","id":")", 0) == 0);
  CHECK(f.requests.OnResponse(roots_id, {{"roots", Json::array()}}, Json()));
  CHECK(f.requests.pending() == 1);
  CHECK(f.requests.OnResponse(name_id, {{"action", "decline"}}, Json()));
  const ClientAnswers::Outcome outcome = Ended(*f.box);
  REQUIRE(outcome.end == ClientAnswers::End::kAnswered);
  CHECK(outcome.answers ==
        Json{{"name", {{"action", "decline"}}}, {"roots", {{"roots", Json::array()}}}});
  CHECK(f.requests.pending() == 0);
}

TEST_CASE(
    "an error for one question ends the round with it, and the other answer is "
    "not ours any more",
    "[MRTR-1]") {
  Fixture f;
  f.requests.Ask(kTwoQuestions, f.box);
  const Json error = {{"code", -1}, {"message", "no"}};
  CHECK(f.requests.OnResponse(f.IdOf("roots/list"), Json(), error));
  const ClientAnswers::Outcome outcome = Ended(*f.box);
  REQUIRE(outcome.end == ClientAnswers::End::kError);
  CHECK(outcome.error == Json{{"key", "roots"}, {"method", "roots/list"}, {"error", error}});
  CHECK_FALSE(f.requests.OnResponse(f.IdOf("elicitation/create"), Json::object(), Json()));
}

TEST_CASE("an abandoned round drops late answers, and ids keel never sent are not ours",
          "[MRTR-1][CAN-2]") {
  Fixture f;
  f.requests.Ask(kTwoQuestions, f.box);
  f.requests.Abandon(f.box.get());
  CHECK(Ended(*f.box).end == ClientAnswers::End::kAbandoned);
  CHECK(f.requests.pending() == 0);
  CHECK_FALSE(f.requests.OnResponse(f.IdOf("roots/list"), Json::object(), Json()));
  CHECK_FALSE(f.requests.OnResponse("keel-999", Json::object(), Json()));
  CHECK_FALSE(f.requests.OnResponse(1, Json::object(), Json()));
}

TEST_CASE("a round that would pass the limit of waiting questions fails without sending",
          "[MRTR-1]") {
  Fixture f;
  Json many = Json::object();
  for (size_t i = 0; i <= ClientRequests::kMaxPending; ++i) {
    many["q" + std::to_string(i)] = {{"method", "roots/list"}};
  }
  f.requests.Ask(many, f.box);
  CHECK(Ended(*f.box).end == ClientAnswers::End::kError);
  CHECK(f.sink.messages().empty());
}

TEST_CASE("the first end of a round wins", "[MRTR-1]") {
  ClientAnswers box;
  box.Finish(ClientAnswers::End::kAnswered, Json{{"k", 1}}, Json());
  box.Finish(ClientAnswers::End::kAbandoned, Json(), Json("late"));
  CHECK(Ended(box).answers == Json{{"k", 1}});
}

TEST_CASE("a worker's wait ends at a cancel, or at its deadline", "[MRTR-1][CAN-2]") {
  CancellationToken token;
  token.Cancel();
  ClientAnswers cancelled;
  CHECK(cancelled.Wait(token, std::chrono::steady_clock::now() + std::chrono::hours(1)).end ==
        ClientAnswers::End::kCancelled);
  ClientAnswers late;
  CHECK(late.Wait(CancellationToken(), std::chrono::steady_clock::now()).end ==
        ClientAnswers::End::kTimedOut);
}

}  // namespace keel::client_requests_test
