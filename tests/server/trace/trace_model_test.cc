// `keel trace report` reads a --trace-file into calls and attempts (ADO-4): a hand-written
// trace with a retried call, a timed-out one, a cancelled one and a breaker that opened.
#include "server/trace/trace_model.h"

#include <sstream>
#include <string>

#include <catch2/catch.hpp>

namespace keel::trace_model_test {
namespace {

std::string Record(const std::string& event, int64_t ms, const std::string& call,
                   const std::string& extra = "") {
  return R"({"event":")" + event + R"(","ts_unix_ms":)" + std::to_string(ms) +
         R"(,"attributes":{"keel.call.id":")" + call + R"(","gen_ai.tool.name":"t_)" + call +
         R"(","keel.backend":"b","jsonrpc.request.id":")" + call + "\"" + extra + "}}\n";
}

// cancel.received names only the request id (session.cc).
std::string Cancel(int64_t ms, const std::string& request_id) {
  return R"({"event":"cancel.received","ts_unix_ms":)" + std::to_string(ms) +
         R"(,"attributes":{"jsonrpc.request.id":")" + request_id + "\"}}\n";
}

TraceModel Read(const std::string& text) {
  std::istringstream in(text);
  return ReadTraceModel(in);
}

}  // namespace

TEST_CASE("the trace model groups a retried call's attempts and its backoff", "[trace][ADO-4]") {
  const TraceModel model = Read(
      Record("tool.call.start", 1000, "c1") +
      Record("tool.attempt.start", 1001, "c1", R"(,"retry.attempt":1)") +
      Record("tool.attempt.end", 1004, "c1",
             R"(,"retry.attempt":1,"outcome":"error","error.type":"backend_503","duration_ms":3)") +
      Record("retry.scheduled", 1004, "c1", R"(,"keel.retry.delay_ms":20)") +
      Record("tool.attempt.start", 1024, "c1",
             R"(,"retry.attempt":2,"keel.circuit.state":"closed")") +
      Record("tool.attempt.end", 1030, "c1", R"(,"retry.attempt":2,"outcome":"ok")") +
      Record("tool.call.end", 1031, "c1", R"(,"outcome":"ok","duration_ms":31)") +
      "not json\n{\"event\":1}\n");
  REQUIRE(model.calls.size() == 1);
  CHECK(model.records == 7);
  CHECK(model.skipped == 2);
  CHECK(model.first_ms == 1000);
  CHECK(model.last_ms == 1031);
  const TraceCall& call = model.calls[0];
  CHECK(call.tool == "t_c1");
  CHECK(call.intent == "c1");  // no keel.intent.id: the call is its own intent
  CHECK(call.outcome == "ok");
  CHECK_FALSE(call.failing());
  CHECK(call.duration_ms == 31);
  REQUIRE(call.attempts.size() == 2);
  CHECK(call.attempts[0].outcome == "error");
  CHECK(call.attempts[0].error_type == "backend_503");
  CHECK(call.attempts[0].start_ms == 1001);
  CHECK(call.attempts[0].end_ms == 1004);
  CHECK(call.attempts[1].circuit_state == "closed");
  REQUIRE(call.marks.size() == 1);
  CHECK(call.marks[0].kind == MarkKind::kBackoff);
  CHECK(call.marks[0].length_ms == 20);
}

TEST_CASE("the trace model keeps timeouts by layer, cancels by request id and breaker changes",
          "[trace][ADO-4]") {
  const TraceModel model =
      Read(Record("tool.call.start", 10, "slow") + Record("tool.call.start", 11, "7") +
           Record("timeout.fired", 40, "slow", R"(,"keel.timeout.layer":"attempt")") +
           Record("tool.call.end", 50, "slow", R"(,"outcome":"timeout")") +
           Record("tool.call.end", 60, "7", R"(,"outcome":"cancelled")") + Cancel(60, "7") +
           Record("breaker.state", 70, "slow",
                  R"(,"keel.circuit.state":"open","keel.circuit.previous_state":"closed")") +
           Record("breaker.rejected", 80, "slow", R"(,"keel.circuit.state":"open")") +
           Cancel(90, "nobody"));
  REQUIRE(model.calls.size() == 2);
  const TraceCall& slow = model.calls[0];
  CHECK(slow.outcome == "timeout");
  CHECK(slow.failing());
  REQUIRE(slow.marks.size() == 2);
  CHECK(slow.marks[0].kind == MarkKind::kTimeout);
  CHECK(slow.marks[0].detail == "attempt");
  CHECK(slow.marks[1].kind == MarkKind::kBreakerRejected);
  const TraceCall& cancelled = model.calls[1];
  REQUIRE(cancelled.marks.size() == 1);
  CHECK(cancelled.marks[0].kind == MarkKind::kCancel);
  CHECK(cancelled.marks[0].at_ms == 60);
  CHECK(model.unmatched_cancels == 1);
  REQUIRE(model.breaker_changes.size() == 1);
  CHECK(model.breaker_changes[0].backend == "b");
  CHECK(model.breaker_changes[0].previous == "closed");
  CHECK(model.breaker_changes[0].state == "open");
}

TEST_CASE("the trace model survives hostile records without crashing", "[trace][ADO-4]") {
  std::string text = R"({"event":"tool.attempt.start","attributes":{"keel.call.id":"x",)"
                     R"("retry.attempt":1e300,"keel.circuit.probe":"yes"}})"
                     "\n";
  text += R"({"event":"tool.call.end","ts_unix_ms":"soon","attributes":{"keel.call.id":{}}})"
          "\n";
  text += std::string(5000, '[') + "\n";
  for (int i = 0; i < 3000; ++i) {
    text += R"({"event":"tool.attempt.start","attributes":{"keel.call.id":"x","retry.attempt":)" +
            std::to_string(i) + "}}\n";
  }
  const TraceModel model = Read(text);
  REQUIRE(model.calls.size() == 1);
  CHECK(model.calls[0].attempts.size() <= 1000);
  CHECK(model.skipped == 1);
  CHECK(model.first_ms == -1);
}

TEST_CASE("nearest-rank percentiles", "[trace][ADO-4]") {
  CHECK(NearestRankPercentile({}, 0.5) == 0);
  CHECK(NearestRankPercentile({1, 2, 3, 4}, 0.5) == 2);
  CHECK(NearestRankPercentile({1, 2, 3, 4}, 0.99) == 4);
}

}  // namespace keel::trace_model_test
