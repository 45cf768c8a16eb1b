// The per-attempt trace through a real Session (OBS-1), checked field by field.
#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <thread>

#include <catch2/catch.hpp>

#include "fakes/temp_dir.h"
#include "server/session/session_harness.h"
#include "server/trace/trace_log.h"

namespace keel::session_trace_test {
namespace {

// A trace file in its own directory, and session options that write to it.
struct TraceFile {
  explicit TraceFile(Json resource = Json{{"service.name", "keel"}}) {
    std::string error;
    log = TraceLog::Open(dir.File("t.jsonl"), std::move(resource), &error);
    INFO(error);
    REQUIRE(log != nullptr);
  }
  SessionOptions Options() const {
    SessionOptions options;
    options.trace = log.get();
    return options;
  }
  std::vector<Json> Records() const {
    std::vector<Json> records;
    std::ifstream in(dir.File("t.jsonl"));
    std::string line;
    while (std::getline(in, line)) records.push_back(Json::parse(line));
    return records;
  }

  TempDir dir;
  std::unique_ptr<TraceLog> log;
};

}  // namespace

TEST_CASE(
    "a traced call writes call start, attempt start and end, and call end, linked as "
    "spans under the client's traceparent",
    "[trace][OBS-1]") {
  TraceFile trace;
  SessionOptions options = trace.Options();
  SessionHarness h(0, options);
  h.Initialize();
  h.Send(h.Call(7, "echo", {{"text", "hi"}},
                {{"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}));
  h.Send(h.Call(8, "fail", {{"message", "no"}}));
  const std::vector<Json> records = trace.Records();
  REQUIRE(records.size() == 9);

  const Json& start = records[0];
  const Json& attempt_start = records[1];
  const Json& attempt_end = records[2];
  const Json& end = records[3];
  CHECK(start["event"] == "tool.call.start");
  CHECK(attempt_start["event"] == "tool.attempt.start");
  CHECK(attempt_end["event"] == "tool.attempt.end");
  CHECK(end["event"] == "tool.call.end");
  for (const Json* r : {&start, &attempt_start, &attempt_end, &end}) {
    CHECK((*r)["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736");
    CHECK((*r)["resource"]["service.name"] == "keel");
    CHECK((*r)["ts"].get<std::string>().back() == 'Z');
    CHECK((*r)["ts_unix_ms"].is_number_integer());
    const Json& a = (*r)["attributes"];
    CHECK(a["gen_ai.tool.name"] == "echo");
    CHECK(a["gen_ai.operation.name"] == "execute_tool");
    CHECK(a["mcp.method.name"] == "tools/call");
    CHECK(a["jsonrpc.request.id"] == "7");
    CHECK(a["mcp.protocol.version"] == "2025-11-25");
    CHECK(a["keel.call.id"].is_string());
    CHECK(a["keel.intent.id"] == a["keel.call.id"]);  // no idempotency key: the call is the intent
    CHECK(a["keel.effect"] == "read");
    CHECK_FALSE(a.contains("gen_ai.tool.call.arguments"));  // not without --trace-arguments
  }
  // One call span under the client's span; the attempt is its child.
  CHECK(start["parent_span_id"] == "00f067aa0ba902b7");
  CHECK(end["span_id"] == start["span_id"]);
  CHECK(attempt_start["parent_span_id"] == start["span_id"]);
  CHECK(attempt_end["span_id"] == attempt_start["span_id"]);
  CHECK(attempt_start["span_id"] != start["span_id"]);
  CHECK(attempt_end["attributes"]["retry.attempt"] == 1);
  CHECK(attempt_end["attributes"]["keel.attempt.id"] ==
        start["attributes"]["keel.call.id"].get<std::string>() + "/1");
  CHECK(attempt_end["attributes"]["outcome"] == "ok");
  CHECK(attempt_end["attributes"]["duration_ms"].is_number());
  CHECK(end["attributes"]["outcome"] == "ok");
  CHECK(end["attributes"]["duration_ms"].is_number_integer());

  // The failing call: a fresh trace id, outcome error with the tool's error type.
  const Json& failed_attempt = records[6];
  const Json& refused = records[7];
  const Json& failed_end = records[8];
  CHECK(failed_attempt["trace_id"] != start["trace_id"]);
  CHECK_FALSE(records[4].contains("parent_span_id"));
  CHECK(failed_attempt["attributes"]["outcome"] == "error");
  CHECK(failed_attempt["attributes"]["error.type"] == "tool_failed");
  CHECK(failed_attempt["severity_text"] == "WARN");
  CHECK(failed_end["attributes"]["outcome"] == "error");
  // A permanent failure is not retried, and the trace says why.
  CHECK(refused["event"] == "retry.suppressed");
  CHECK(refused["attributes"]["keel.retry.reason"] == "permanent_failure");
  CHECK(refused["attributes"]["keel.failure.class"] == "rejected_permanent");
  CHECK(refused["parent_span_id"] == failed_end["span_id"]);
}

TEST_CASE("a modern request's traceparent parents its call's span, traced as 2026-07-28",
          "[trace][OBS-1][ERA-1]") {
  TraceFile trace;
  SessionOptions options = trace.Options();
  SessionHarness h(0, options);  // no initialize: the request is modern
  h.Send(h.Call(7, "echo", {{"text", "hi"}},
                {{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                 {"io.modelcontextprotocol/clientCapabilities", Json::object()},
                 {"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}));
  REQUIRE(h.sink().ForId(7).size() == 1);
  const std::vector<Json> records = trace.Records();
  REQUIRE_FALSE(records.empty());
  const Json& start = records[0];
  CHECK(start["event"] == "tool.call.start");
  CHECK(start["trace_id"] == "4bf92f3577b34da6a3ce929d0e0e4736");
  CHECK(start["parent_span_id"] == "00f067aa0ba902b7");
  CHECK(start["attributes"]["mcp.protocol.version"] == "2026-07-28");
}

TEST_CASE(
    "a cancelled call traces cancel.received and ends cancelled, arguments only with "
    "trace_arguments",
    "[trace][OBS-1]") {
  TraceFile trace(Json::object());
  SessionOptions options = trace.Options();
  options.trace_arguments = true;
  SessionHarness h(1, options);
  h.Initialize();
  h.Send(h.Call(1, "latch_wait", {{"name", "L"}}));
  REQUIRE(h.WaitUntilRunning(1));
  h.Send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})");
  h.Send(h.Call(2, "latch_release", {{"name", "L"}}));
  REQUIRE(h.WaitFor(2));
  // The worker writes tool.attempt.end when the released tool returns: poll the file for it
  // (a bounded wait for a condition, never an assertion on time).
  std::vector<Json> records;
  for (int i = 0; i < 1000; ++i) {
    records = trace.Records();
    bool attempt_ended = false;
    for (const Json& r : records) attempt_ended |= r["event"] == "tool.attempt.end";
    if (attempt_ended) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::vector<std::string> events;
  for (const Json& r : records) events.push_back(r["event"].get<std::string>());
  CHECK(std::count(events.begin(), events.end(), "cancel.received") == 1);
  const auto end = std::find_if(records.begin(), records.end(),
                                [](const Json& r) { return r["event"] == "tool.call.end"; });
  REQUIRE(end != records.end());
  CHECK((*end)["attributes"]["outcome"] == "cancelled");
  CHECK(records[0]["attributes"]["gen_ai.tool.call.arguments"] == R"({"name":"L"})");
}

}  // namespace keel::session_trace_test
