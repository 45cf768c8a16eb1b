// AttemptOutcome: one attempt's result classified once, then read by the breaker (CB-1), the
// retry decision (RET-1) and the trace (OBS-1) without parsing the result again.
#include "server/call/attempt_outcome.h"

#include <catch2/catch.hpp>

#include "protocol/tool_result.h"

namespace keel::attempt_outcome_test {
namespace {

Json Failed(const std::string& type) { return ErrorResult("failed", Json{{"type", type}}); }

}  // namespace

TEST_CASE(
    "an attempt's result is classified once: a 503 is a breaker failure and a retryable "
    "failure",
    "[call][attempt]") {
  const AttemptOutcome attempt = ClassifyAttempt(Failed("backend_503"), false, false);
  REQUIRE(attempt.is_error());
  CHECK(attempt.failure->type == "backend_503");
  CHECK(attempt.failure->backend_status == 503);
  CHECK(attempt.failure->failure == FailureClass::kRejectedTransient);
  CHECK(BreakerOutcomeOf(attempt) == BreakerOutcome::kFailure);
}

TEST_CASE("a permanent 5xx is still a backend failure for the breaker, a 4xx the caller's",
          "[call][attempt]") {
  const AttemptOutcome server = ClassifyAttempt(Failed("backend_500"), false, false);
  CHECK(server.failure->failure == FailureClass::kRejectedPermanent);
  CHECK(BreakerOutcomeOf(server) == BreakerOutcome::kFailure);
  const AttemptOutcome client = ClassifyAttempt(Failed("backend_404"), false, false);
  CHECK(client.failure->backend_status == 404);
  CHECK(BreakerOutcomeOf(client) == BreakerOutcome::kIgnored);
  CHECK(BreakerOutcomeOf(ClassifyAttempt(Failed("invalid_arguments"), false, false)) ==
        BreakerOutcome::kIgnored);
}

TEST_CASE("a 429 or rate_limited throttles the breaker without counting as a failure",
          "[call][attempt]") {
  CHECK(BreakerOutcomeOf(ClassifyAttempt(Failed("backend_429"), false, false)) ==
        BreakerOutcome::kThrottled);
  CHECK(BreakerOutcomeOf(ClassifyAttempt(Failed("rate_limited"), false, false)) ==
        BreakerOutcome::kThrottled);
}

TEST_CASE("only backend_ followed by a status names a backend status", "[call][attempt]") {
  for (const char* type :
       {"backend_5xx", "backend_", "backend_5003", "my_backend_503", "transport_unavailable"}) {
    INFO(type);
    CHECK_FALSE(ClassifyAttempt(Failed(type), false, false).failure->backend_status.has_value());
  }
}

TEST_CASE(
    "a tool that threw is a breaker failure, one stopped by a cancel tells the breaker "
    "nothing",
    "[call][attempt]") {
  const AttemptOutcome threw =
      ClassifyAttempt(ErrorResult("boom", Json{{"type", "internal_error"}}), true, false);
  CHECK(threw.is_error());
  CHECK(BreakerOutcomeOf(threw) == BreakerOutcome::kFailure);
  const AttemptOutcome stopped = ClassifyAttempt(TextResult("cancelled"), false, true);
  CHECK_FALSE(stopped.is_error());
  CHECK(BreakerOutcomeOf(stopped) == BreakerOutcome::kIgnored);
  CHECK(BreakerOutcomeOf(ClassifyAttempt(TextResult("ok"), false, false)) ==
        BreakerOutcome::kSuccess);
}

TEST_CASE("a replay and the backend operation are read from the result once", "[call][attempt]") {
  Json replayed = StructuredResult("done", Json{{"operation_id", "op-1"}});
  replayed["_meta"] = Json{{"dev.keel/replayed", true}};
  const AttemptOutcome replay = ClassifyAttempt(replayed, false, false);
  CHECK(replay.replayed);
  CHECK(replay.operation_id == Json("op-1"));

  // The error's operation wins over the content's.
  Json failed = ErrorResult("lost", Json{{"type", "lost_response"}, {"operation_id", "op-2"}});
  failed["structuredContent"]["operation_id"] = "op-3";
  const AttemptOutcome lost = ClassifyAttempt(failed, false, false);
  CHECK_FALSE(lost.replayed);
  CHECK(lost.operation_id == Json("op-2"));
  CHECK_FALSE(ClassifyAttempt(TextResult("ok"), false, false).operation_id.has_value());
}

}  // namespace keel::attempt_outcome_test
