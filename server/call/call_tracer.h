// CallTracer: the trace records (OBS-1) of one call or task's work — tool.call.start when it
// is admitted, per attempt tool.attempt.start / tool.attempt.end (with timeout.fired,
// idempotency.mismatch and idempotency.replay as the attempt shows them), the breaker's and
// the retry executor's decisions, and timeout.fired / tool.call.end when it settles. One call
// span per call (a child of the client's _meta.traceparent span, when it sent one), one child
// span per attempt; every record carries the call's attributes.
//
// Threads: Start and End run on the loop; the attempt, breaker and retry records on the
// call's worker. A tracer is immutable once started and TraceLog::Emit is thread-safe, so it
// is shared by shared_ptr between the two sides.
// Invariants: End is called once per started tracer (the coordinator settles once); attempt
// records are never written for a call that was not started.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "server/call/attempt_outcome.h"
#include "server/call/call_identity.h"
#include "server/call/settlement.h"
#include "server/policy/circuit_breaker.h"
#include "server/policy/retry_executor.h"
#include "server/runtime/clock.h"
#include "server/trace/trace_log.h"

namespace keel {

class CallTracer {
 public:
  // What the call start record says besides the call's identity.
  struct StartInfo {
    std::string protocol_version;
    std::optional<std::string> policy_version;  // the policy in force, when there is one
    bool with_arguments = false;                // --trace-arguments
    TimePoint now;                              // the loop's clock
    std::string session_id;  // mcp.session.id (OTLP only, RequestSpans); empty: none
  };

  // Writes tool.call.start for `call` (its tool, key and ids) and returns the call's tracer.
  // `log` must outlive it.
  static std::shared_ptr<const CallTracer> Start(TraceLog& log, const CallIdentity& call,
                                                 const Json& meta, const Json& arguments,
                                                 const StartInfo& info);

  // tool.attempt.start; returns the attempt's span, for AttemptEnd. `permit`: the breaker's
  // admission of the attempt, when it has one.
  std::string AttemptStart(const AttemptInfo& info, const BreakerPermit* permit) const;
  void AttemptEnd(const std::string& span, const AttemptInfo& info, const AttemptOutcome& outcome,
                  double elapsed_ms) const;
  // breaker.rejected, breaker.would_have or breaker.state (`now`: the breaker after it).
  void Breaker(const char* event, const AttemptInfo& info, const BreakerPermit& permit,
               const BreakerSnapshot& now) const;
  // retry.scheduled, retry.suppressed or retry.would_have.
  void Retry(const RetryEvent& event) const;
  // The call settled (loop clock `now`): timeout.fired for a timeout, then tool.call.end.
  void End(CallState state, const std::string& reason, TimePoint now) const;

 private:
  CallTracer(TraceLog& log, bool write) : log_(log), write_(write) {}
  // A record on the call's span; one on a child span of it.
  TraceEvent CallRecord(std::string name, const char* severity) const;
  TraceEvent ChildRecord(std::string name, const char* severity, std::string span) const;
  TraceEvent AttemptRecord(const char* name, const char* severity, const std::string& span,
                           const AttemptInfo& info) const;

  TraceLog& log_;
  bool write_;  // the tool's effect is a write: its attempts name their backend operation
  std::string trace_id_;
  std::string call_span_;
  std::string parent_span_;  // the client's span from _meta.traceparent, or empty
  Json attributes_;          // shared by every record of the call
  TimePoint start_;
};

}  // namespace keel
