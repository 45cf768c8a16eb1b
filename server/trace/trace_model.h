// TraceModel: a --trace-file (OBS-1, trace_log.h) read back into what happened — calls, their
// attempts, and the marks on them (backoffs, timeouts by layer, cancels, replays, breaker
// rejections) — plus every breaker state change per backend. For `keel trace report`
// (trace_report.h); reusable by anything that wants calls rather than records.
//
// Pure: reads JSON lines, returns values; no clock, no I/O beyond the stream.
// Rules:
//  1. Lines that are not trace records (not JSON, too deep, no "event" string or no
//     "attributes" object) are counted in `skipped`, never fatal. Unknown events are ignored.
//  2. Records of a call are grouped by keel.call.id; a call appears once, at its first record
//     (a trace cut at the front still shows the calls' ends). Its attempts are keyed by
//     retry.attempt.
//  3. cancel.received carries only the JSON-RPC request id: it is matched to the latest call
//     with that id started at or before it (ids are reused across sessions and peers, so this
//     is a best guess; unmatched cancels are counted).
//  4. Times are the records' ts_unix_ms; -1 when unknown (missing, negative, not an integer,
//     or past the year 5138). Memory is linear in the file.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace keel {

struct TraceAttempt {
  int number = 0;         // retry.attempt: 1, 2, ...
  int64_t start_ms = -1;  // tool.attempt.start
  int64_t end_ms = -1;    // tool.attempt.end
  double duration_ms = -1;
  std::string outcome;        // "ok", "error" or "cancelled"; empty: no end record
  std::string error_type;     // error.type of a failed attempt
  std::string circuit_state;  // the breaker's state when it admitted the attempt
  bool probe = false;         // admitted as a half-open probe
};

enum class MarkKind {
  kBackoff,          // retry.scheduled: the wait before the next attempt (length_ms)
  kRetrySuppressed,  // retry.suppressed: no retry, and why (detail)
  kTimeout,          // timeout.fired; detail: the layer (attempt, idle, call)
  kCancel,           // cancel.received for this call's request id
  kReplay,           // idempotency.replay: the ledger answered, the tool did not run
  kMismatch,         // idempotency.mismatch: the key came back with other arguments
  kBreakerRejected,  // breaker.rejected: the open breaker answered without the backend
  kWouldHave,        // breaker.would_have or retry.would_have (shadow mode)
};

struct TraceMark {
  MarkKind kind = MarkKind::kBackoff;
  int64_t at_ms = -1;
  double length_ms = 0;  // a backoff's delay
  std::string detail;
};

struct TraceCall {
  std::string call_id;     // keel.call.id
  std::string tool;        // gen_ai.tool.name
  std::string backend;     // keel.backend
  std::string intent;      // keel.intent.id (the call id when it has no idempotency key)
  std::string request_id;  // jsonrpc.request.id
  int64_t start_ms = -1;   // tool.call.start, else the first record seen
  int64_t end_ms = -1;     // tool.call.end; -1 while unfinished
  int64_t last_ms = -1;    // the call's last record
  double duration_ms = -1;
  std::string outcome;  // "ok", "error", "cancelled", "timeout"; empty: unfinished
  std::string reason;   // keel.reason of tool.call.end
  std::vector<TraceAttempt> attempts;
  std::vector<TraceMark> marks;

  bool failing() const { return outcome != "ok"; }
};

struct BreakerChange {
  int64_t at_ms = -1;
  std::string backend;
  std::string previous;  // closed, open, half_open
  std::string state;
  std::string trip;  // keel.circuit.trip
};

struct TraceModel {
  std::vector<TraceCall> calls;                // in the order of their first record
  std::vector<BreakerChange> breaker_changes;  // in file order
  size_t records = 0;                          // trace records read
  size_t skipped = 0;                          // lines that were not trace records
  size_t unmatched_cancels = 0;
  int64_t first_ms = -1;  // the earliest and latest ts_unix_ms in the file
  int64_t last_ms = -1;
};

TraceModel ReadTraceModel(std::istream& lines);

// Nearest-rank percentile (0 < p <= 1) of ascending `sorted`; 0 when empty.
double NearestRankPercentile(const std::vector<double>& sorted, double p);

}  // namespace keel
