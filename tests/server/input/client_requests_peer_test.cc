// ClientRequests and peers: a round of questions goes to the exchange of the call that asks,
// as requests, and only the peer it was sent to may answer it (invariant 2); the cancel of a
// question keel stops waiting for follows it to that exchange (invariant 4).
#include <memory>

#include <catch2/catch.hpp>

#include "fakes/recording_sink.h"
#include "fakes/test_router.h"
#include "server/input/client_requests.h"

namespace keel::client_requests_peer_test {
namespace {

const Json kOneQuestion = {
    {"name", {{"method", "elicitation/create"}, {"params", {{"message", "Name?"}}}}}};

struct Fixture {
  Fixture() {
    router.Add(1, asked);
    router.Add(2, other);
    requests.set_router(&router);
  }
  RecordingSink fallback;
  RecordingSink asked;
  RecordingSink other;
  TestRouter router;
  ClientRequests requests{fallback};
  std::shared_ptr<ClientAnswers> box = std::make_shared<ClientAnswers>();
};

TEST_CASE("a question goes to its call's exchange as a request, answered by its peer only",
          "[MRTR-1][peers]") {
  Fixture f;
  f.requests.Ask(kOneQuestion, f.box, 1, 100);
  REQUIRE(f.asked.messages().size() == 1);
  CHECK(f.asked.requests() == 1);
  CHECK(f.other.messages().empty());
  CHECK(f.fallback.messages().empty());
  const Json id = f.asked.messages()[0]["id"];
  CHECK_FALSE(f.requests.OnResponse(id, {{"action", "accept"}}, Json(), 200));
  CHECK_FALSE(f.requests.OnResponse(id, {{"action", "accept"}}, Json()));  // kNoPeer
  CHECK(f.requests.pending() == 1);
  CHECK(f.requests.OnResponse(id, {{"action", "decline"}}, Json(), 100));
  const ClientAnswers::Outcome outcome =
      f.box->Wait(CancellationToken(), std::chrono::steady_clock::now());
  REQUIRE(outcome.end == ClientAnswers::End::kAnswered);
  CHECK(outcome.answers == Json{{"name", {{"action", "decline"}}}});
}

TEST_CASE("an abandoned question is cancelled on the exchange it went to", "[MRTR-1][peers]") {
  Fixture f;
  f.requests.Ask(kOneQuestion, f.box, 1, 100);
  f.requests.Abandon(f.box.get());
  REQUIRE(f.asked.WithMethod("notifications/cancelled").size() == 1);
  CHECK(f.other.messages().empty());
  CHECK(f.fallback.messages().empty());
}

}  // namespace
}  // namespace keel::client_requests_peer_test
