// AttemptOutcome: one attempt of a call as keel learns from it. Classified once, right after
// the tool returns (ClassifyAttempt), then read by everyone who judges the attempt: the
// circuit breaker (BreakerOutcomeOf, CB-1), the retry decision (`failure`, RET-1), the last
// good result of a read (CB-2) and the attempt's trace record (OBS-1). None of them parses
// the result's JSON again.
//
// Pure; a value type.
// Invariants: `failure` is ClassifyResult(result) (nullopt: a success); a thrown attempt has
// an internal_error failure; a stopped attempt (it reached a checkpoint after a cancel) has
// none, and its result is dropped by the coordinator.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "server/policy/circuit_breaker.h"
#include "server/policy/failure_classify.h"

namespace keel {

using Json = nlohmann::json;

struct AttemptOutcome {
  Json result;                            // the CallToolResult, bounded (BoundedResult)
  std::optional<AttemptFailure> failure;  // how it failed; nullopt: success
  bool threw = false;                     // the tool raised instead of returning
  bool stopped = false;                   // it reached a checkpoint after a cancel
  bool replayed = false;  // _meta["dev.keel/replayed"]: the ledger answered a stored result
  // The backend operation the result names: error.operation_id, else
  // structuredContent.operation_id; nullopt when neither has one.
  std::optional<Json> operation_id;

  bool is_error() const { return failure.has_value(); }
};

// Classifies what an attempt returned (`threw` and `stopped` as the worker saw them).
AttemptOutcome ClassifyAttempt(Json result, bool threw, bool stopped);

// What the attempt teaches the breaker (CB-1): the backend failed (the tool threw, a 5xx,
// transport, timeout, lost response), throttled (429, rate_limited), or the caller's fault
// or a cancel — neither.
BreakerOutcome BreakerOutcomeOf(const AttemptOutcome& attempt);

}  // namespace keel
