// `keel trace summary` (OBS-2) over a hand-written trace.
#include "server/trace/trace_summary.h"

#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

namespace keel::trace_summary_test {
namespace {

using Json = nlohmann::json;

std::string Record(const std::string& event, const std::string& call, const std::string& tool,
                   const std::string& extra = "") {
  return R"({"event":")" + event + R"(","attributes":{"keel.call.id":")" + call +
         R"(","gen_ai.tool.name":")" + tool + "\"" + extra + "}}\n";
}

}  // namespace

TEST_CASE(
    "the trace summary counts calls, intents, retries, timeouts, breaker rejects, backend "
    "operations and durations per tool and outcome",
    "[trace][OBS-2]") {
  std::stringstream trace;
  // Two calls of one intent (a retry by the client under the same key), one with two attempts.
  // The first attempt was lost after the backend accepted operation op-1; the retry under the
  // same key got op-1 back: one backend operation for the intent. A third call was rejected
  // by the open breaker.
  trace << Record("tool.attempt.start", "c1", "charge")
        << Record("tool.attempt.end", "c1", "charge", R"(,"keel.backend.operation.id":"op-1")")
        << Record("tool.attempt.start", "c1", "charge")
        << Record("tool.attempt.end", "c1", "charge", R"(,"keel.backend.operation.id":"op-1")")
        << Record("tool.call.end", "c1", "charge",
                  R"(,"keel.intent.id":"charge/k","outcome":"ok","duration_ms":10)")
        << Record("tool.attempt.start", "c2", "charge")
        << Record("breaker.rejected", "c2", "charge")
        << Record("tool.call.end", "c2", "charge",
                  R"(,"keel.intent.id":"charge/k","outcome":"ok","duration_ms":30)")
        << Record("tool.attempt.start", "c3", "sleep") << Record("timeout.fired", "c3", "sleep")
        << Record("tool.call.end", "c3", "sleep",
                  R"(,"keel.intent.id":"c3","outcome":"timeout","duration_ms":200)")
        << "not json\n";
  const std::string summary = SummarizeTrace(trace);
  CAPTURE(summary);
  std::istringstream rows(summary);
  std::string header1, header2, charge, sleep, skipped;
  std::getline(rows, header1);
  std::getline(rows, header2);
  std::getline(rows, charge);
  std::getline(rows, sleep);
  std::getline(rows, skipped);
  std::istringstream c(charge);
  std::string tool, backend, outcome;
  size_t calls, intents, retries, timeouts, rejects, ops;
  double p50, p95, per_intent;
  c >> tool >> backend >> outcome >> calls >> intents >> retries >> timeouts >> rejects >> p50 >>
      p95 >> ops >> per_intent;
  CHECK(tool == "charge");
  CHECK(outcome == "ok");
  CHECK(calls == 2);
  CHECK(intents == 1);
  CHECK(retries == 1);
  CHECK(timeouts == 0);
  CHECK(rejects == 1);
  CHECK(p50 == 10.0);
  CHECK(p95 == 30.0);
  CHECK(ops == 1);
  CHECK(per_intent == 2.0);
  CHECK(sleep.rfind("sleep", 0) == 0);
  CHECK(sleep.find("timeout") != std::string::npos);
  CHECK(skipped.find("1 line(s) were not trace records") != std::string::npos);
}

TEST_CASE("a trace line nested deeper than 128 levels is skipped, not summarized", "[trace]") {
  std::stringstream trace;
  trace << Record("tool.call.end", "c1", "charge",
                  R"(,"outcome":"ok","x":)" + std::string(100000, '[') + std::string(100000, ']'))
        << Record("tool.call.end", "c2", "charge", R"(,"outcome":"ok")");
  const std::string summary = SummarizeTrace(trace);
  CAPTURE(summary);
  CHECK(summary.find("1 line(s) were not trace records") != std::string::npos);
  CHECK(summary.find("charge") != std::string::npos);
}

TEST_CASE("trace summary --json gives the same figures as one object", "[trace][OBS-2][ADO-3]") {
  std::stringstream trace;
  trace << Record("tool.attempt.start", "c1", "charge")
        << Record("tool.attempt.start", "c1", "charge")
        << Record("tool.call.end", "c1", "charge",
                  R"(,"keel.intent.id":"charge/k","outcome":"ok","duration_ms":10)")
        << "not json\n";
  const Json summary = SummarizeTraceJson(trace);
  CAPTURE(summary.dump());
  CHECK(summary["skipped_lines"] == 1);
  REQUIRE(summary["groups"].size() == 1);
  const Json& group = summary["groups"][0];
  CHECK(group["tool"] == "charge");
  CHECK(group["backend"] == "-");
  CHECK(group["outcome"] == "ok");
  CHECK(group["calls"] == 1);
  CHECK(group["intents"] == 1);
  CHECK(group["retries"] == 1);
  CHECK(group["timeouts"] == 0);
  CHECK(group["breaker_rejects"] == 0);
  CHECK(group["p50_ms"] == 10.0);
  CHECK(group["p95_ms"] == 10.0);
  CHECK(group["backend_operations"] == 0);
  CHECK(group["calls_per_intent"] == 1.0);
}

TEST_CASE("trace summary reads otlp span lines as the records they were made of",
          "[trace][OBS-2][ADO-3]") {
  const std::string attrs = R"({"key":"keel.call.id","value":{"stringValue":"k-1"}},)"
                            R"({"key":"gen_ai.tool.name","value":{"stringValue":"charge"}})";
  const auto line = [](const std::string& spans) {
    return R"({"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[{"scope":{"name":"keel"},"spans":[)" +
           spans + "]}]}]}\n";
  };
  std::stringstream trace;
  trace
      << line(R"({"kind":1,"name":"keel.attempt","attributes":[)" + attrs + "]}")
      << line(R"({"kind":1,"name":"keel.attempt","attributes":[)" + attrs + "]}")
      << line(
             R"({"kind":2,"name":"tools/call charge","events":[{"name":"keel.breaker.rejected"}],"attributes":[)" +
             attrs +
             R"(,{"key":"keel.outcome","value":{"stringValue":"ok"}},{"key":"keel.duration_ms","value":{"intValue":"12"}}]})");
  const Json summary = SummarizeTraceJson(trace);
  CAPTURE(summary.dump());
  REQUIRE(summary["groups"].size() == 1);
  CHECK(summary["groups"][0]["tool"] == "charge");
  CHECK(summary["groups"][0]["outcome"] == "ok");
  CHECK(summary["groups"][0]["retries"] == 1);
  CHECK(summary["groups"][0]["breaker_rejects"] == 1);
  CHECK(summary["groups"][0]["p50_ms"] == 12.0);
  CHECK(summary["skipped_lines"] == 0);
}

}  // namespace keel::trace_summary_test
