// The per-attempt trace file (OBS-1): record shape, W3C traceparent, whole lines.
#include "server/trace/trace_log.h"

#include <fstream>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/temp_dir.h"

namespace keel::trace_log_test {

TEST_CASE("a valid traceparent gives the client's trace id and parent span", "[trace][OBS-1]") {
  const auto context = ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  REQUIRE(context);
  CHECK(context->trace_id == "4bf92f3577b34da6a3ce929d0e0e4736");
  CHECK(context->parent_span_id == "00f067aa0ba902b7");
}

TEST_CASE("a malformed traceparent is refused", "[trace][OBS-1]") {
  for (const char* bad : {"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
                          "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                          "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
                          "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
                          "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01"}) {
    CAPTURE(bad);
    CHECK_FALSE(ParseTraceparent(bad));
  }
}

TEST_CASE("fresh trace and span ids are lowercase hex of the W3C sizes", "[trace][OBS-1]") {
  const TraceContext context = NewTraceContext();
  CHECK(context.trace_id.size() == 32);
  CHECK(context.parent_span_id.empty());
  CHECK(NewSpanId().size() == 16);
  CHECK(NewSpanId() != NewSpanId());
}

TEST_CASE("a trace record carries RFC 3339 microseconds, unix milliseconds and the ids",
          "[trace][OBS-1]") {
  TraceEvent event;
  event.event = "tool.attempt.end";
  event.severity = "WARN";
  event.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  event.span_id = "00f067aa0ba902b7";
  event.parent_span_id = "a3ce929d0e0e4736";
  event.attributes = {{"gen_ai.tool.name", "echo"}, {"retry.attempt", 1}};
  const Json record = TraceRecord(event, 1795963985001234, Json{{"service.name", "keel"}});
  CHECK(record["ts"] == "2026-11-29T14:53:05.001234Z");
  CHECK(record["ts_unix_ms"] == 1795963985001);
  CHECK(record["event"] == "tool.attempt.end");
  CHECK(record["severity_text"] == "WARN");
  CHECK(record["trace_id"] == event.trace_id);
  CHECK(record["span_id"] == event.span_id);
  CHECK(record["parent_span_id"] == event.parent_span_id);
  CHECK(record["attributes"]["retry.attempt"] == 1);
  CHECK(record["resource"]["service.name"] == "keel");
  event.parent_span_id.clear();
  CHECK_FALSE(TraceRecord(event, 0, Json::object()).contains("parent_span_id"));
}

TEST_CASE("records from many threads land as whole lines", "[trace][OBS-1]") {
  TempDir dir;
  std::string error;
  auto log = TraceLog::Open(dir.File("trace.jsonl"), Json{{"service.name", "keel"}}, &error);
  REQUIRE(log != nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&log, t] {
      for (int i = 0; i < 250; ++i) {
        TraceEvent event;
        event.event = "tool.call.start";
        event.attributes = {{"thread", t}, {"i", i}, {"padding", std::string(200, 'x')}};
        log->Emit(event);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  std::ifstream in(dir.File("trace.jsonl"));
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    CHECK(Json::parse(line)["event"] == "tool.call.start");
    ++lines;
  }
  CHECK(lines == 1000);
  CHECK(log->write_errors() == 0);
}

TEST_CASE("a trace file that cannot be opened is an error, not a crash", "[trace][OBS-1]") {
  std::string error;
  CHECK(TraceLog::Open("/nonexistent-dir/trace.jsonl", Json::object(), &error) == nullptr);
  CHECK_FALSE(error.empty());
}

}  // namespace keel::trace_log_test
