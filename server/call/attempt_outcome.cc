#include "server/call/attempt_outcome.h"

#include "protocol/tool_result.h"

namespace keel {
namespace {

bool Replayed(const Json& result) {
  const auto meta = result.find("_meta");
  if (meta == result.end() || !meta->is_object()) return false;
  const auto flag = meta->find("dev.keel/replayed");
  return flag != meta->end() && flag->is_boolean() && flag->get<bool>();
}

std::optional<Json> OperationId(const Json& result) {
  if (const Json* error = StructuredErrorOf(result)) {
    if (const auto id = error->find("operation_id"); id != error->end()) return *id;
  }
  const auto content = result.find("structuredContent");
  if (content != result.end() && content->is_object()) {
    if (const auto id = content->find("operation_id"); id != content->end()) return *id;
  }
  return std::nullopt;
}

bool ServerError(const AttemptFailure& failure) {
  return failure.backend_status && *failure.backend_status >= 500 && *failure.backend_status <= 599;
}

}  // namespace

AttemptOutcome ClassifyAttempt(Json result, bool threw, bool stopped) {
  AttemptOutcome outcome;
  outcome.result = std::move(result);
  outcome.threw = threw;
  outcome.stopped = stopped;
  if (!outcome.result.is_object()) return outcome;
  outcome.failure = ClassifyResult(outcome.result);
  outcome.replayed = Replayed(outcome.result);
  outcome.operation_id = OperationId(outcome.result);
  return outcome;
}

BreakerOutcome BreakerOutcomeOf(const AttemptOutcome& attempt) {
  if (attempt.stopped) return BreakerOutcome::kIgnored;  // says nothing about the backend
  if (attempt.threw) return BreakerOutcome::kFailure;
  if (!attempt.failure) return BreakerOutcome::kSuccess;
  const AttemptFailure& failure = *attempt.failure;
  if (failure.backend_status == 429 || failure.type == "rate_limited") {
    return BreakerOutcome::kThrottled;
  }
  if (failure.failure != FailureClass::kRejectedPermanent) return BreakerOutcome::kFailure;
  if (ServerError(failure) || failure.type == "internal_error") return BreakerOutcome::kFailure;
  return BreakerOutcome::kIgnored;
}

}  // namespace keel
