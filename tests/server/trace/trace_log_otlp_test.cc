// TraceLog with --trace-format otlp (ADO-3): span lines in the trace file, the histogram in
// the sibling metrics file, times from an injected clock.
#include <fstream>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/temp_dir.h"
#include "server/trace/trace_log.h"

namespace keel::trace_log_otlp_test {
namespace {

std::vector<Json> Lines(const std::string& path) {
  std::vector<Json> lines;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) lines.push_back(Json::parse(line));
  return lines;
}

}  // namespace

TEST_CASE(
    "an otlp trace log writes one ExportTraceServiceRequest per finished span and the "
    "duration histogram at close",
    "[trace][ADO-3]") {
  TempDir dir;
  int64_t now = 1'000'000'000;
  TraceLog::Options options;
  options.format = TraceFormat::kOtlp;
  options.version = "9.9.9";
  options.unix_ns = [&now] { return now; };
  std::string error;
  const std::string path = dir.File("trace.jsonl");
  {
    auto log = TraceLog::Open(path, Json{{"service.name", "keel"}}, &error, options);
    REQUIRE(log != nullptr);
    const Json attributes = {{"mcp.method.name", "tools/call"},
                             {"gen_ai.tool.name", "echo"},
                             {"jsonrpc.request.id", "1"}};
    log->Emit(TraceEvent{"tool.call.start", "INFO", "4bf92f3577b34da6a3ce929d0e0e4736",
                         "1111111111111111", "", attributes});
    now += 250'000'000;  // 0.25 s
    log->Emit(TraceEvent{"tool.call.end",
                         "INFO",
                         "4bf92f3577b34da6a3ce929d0e0e4736",
                         "1111111111111111",
                         "",
                         {{"outcome", "ok"}}});
    OtlpSpan list;
    list.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    list.span_id = "2222222222222222";
    list.name = "tools/list";
    list.kind = SpanKind::kServer;
    list.start_unix_ns = now;
    list.end_unix_ns = now + 1000;
    list.attributes = {{"mcp.method.name", "tools/list"}};
    log->EmitSpan(list);
    CHECK(Lines(MetricsPathOf(path)).empty());  // not yet: under kMetricsInterval
  }
  const std::vector<Json> spans = Lines(path);
  REQUIRE(spans.size() == 2);
  const Json& call = spans[0]["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
  CHECK(call["name"] == "tools/call echo");
  CHECK(call["startTimeUnixNano"] == "1000000000");
  CHECK(call["endTimeUnixNano"] == "1250000000");
  CHECK(spans[0]["resourceSpans"][0]["scopeSpans"][0]["scope"]["version"] == "9.9.9");
  const std::vector<Json> metrics = Lines(MetricsPathOf(path));
  REQUIRE(metrics.size() == 1);
  const Json& metric = metrics[0]["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0];
  CHECK(metric["name"] == "mcp.server.operation.duration");
  CHECK(metric["histogram"]["dataPoints"].size() == 2);  // tools/call echo, tools/list
}

TEST_CASE("an otlp trace log writes the histogram again once the interval has passed",
          "[trace][ADO-3]") {
  TempDir dir;
  int64_t now = 0;
  TraceLog::Options options;
  options.format = TraceFormat::kOtlp;
  options.unix_ns = [&now] { return now; };
  std::string error;
  const std::string path = dir.File("t.jsonl");
  auto log = TraceLog::Open(path, Json::object(), &error, options);
  REQUIRE(log != nullptr);
  OtlpSpan span;
  span.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  span.span_id = "2222222222222222";
  span.kind = SpanKind::kServer;
  span.attributes = {{"mcp.method.name", "ping"}};
  now = std::chrono::nanoseconds(TraceLog::kMetricsInterval).count();
  log->EmitSpan(span);
  CHECK(Lines(MetricsPathOf(path)).size() == 1);
}

TEST_CASE("the JSON lines format ignores spans made elsewhere", "[trace][ADO-3]") {
  TempDir dir;
  std::string error;
  auto log = TraceLog::Open(dir.File("t.jsonl"), Json::object(), &error);
  REQUIRE(log != nullptr);
  CHECK_FALSE(log->otlp());
  log->EmitSpan(OtlpSpan{});
  CHECK(Lines(dir.File("t.jsonl")).empty());
  CHECK_FALSE(ParseTraceFormat("OTLP"));
  CHECK(ParseTraceFormat("otlp") == TraceFormat::kOtlp);
}

}  // namespace keel::trace_log_otlp_test
