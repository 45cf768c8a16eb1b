// The OTLP/JSON encoding (ADO-3): KeyValue attributes, 64-bit integers as strings, enums as
// integers, the export envelopes; and the mcp.server.operation.duration histogram.
#include "server/trace/otlp_json.h"

#include <catch2/catch.hpp>

#include "server/trace/operation_duration.h"

namespace keel::otlp_json_test {

TEST_CASE("attributes are KeyValue lists with typed values and 64-bit integers as strings",
          "[trace][ADO-3]") {
  const Json list = OtlpAttributes(
      {{"s", "x"}, {"i", 9007199254740993LL}, {"b", true}, {"d", 1.5}, {"a", {"p", 2}}});
  CHECK(list == Json::parse(R"([
    {"key":"a","value":{"arrayValue":{"values":[{"stringValue":"p"},{"intValue":"2"}]}}},
    {"key":"b","value":{"boolValue":true}},
    {"key":"d","value":{"doubleValue":1.5}},
    {"key":"i","value":{"intValue":"9007199254740993"}},
    {"key":"s","value":{"stringValue":"x"}}])"));
}

TEST_CASE("a span is written with hex ids, nanosecond strings and integer enums",
          "[trace][ADO-3]") {
  OtlpSpan span;
  span.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  span.span_id = "00f067aa0ba902b7";
  span.name = "tools/list";
  span.kind = SpanKind::kServer;
  span.start_unix_ns = 1795963985001234567;
  span.end_unix_ns = 1795963985002234567;
  span.events.push_back(OtlpEvent{1795963985001334567, "keel.retry.scheduled", Json::object()});
  span.status = SpanStatus::kError;
  const Json request = ExportTraceRequest(Json{{"service.name", "keel"}}, "0.1.0", {span});
  const Json& scope = request["resourceSpans"][0]["scopeSpans"][0];
  CHECK(scope["scope"] == Json{{"name", "keel"}, {"version", "0.1.0"}});
  const Json& out = scope["spans"][0];
  CHECK(out["traceId"] == "4bf92f3577b34da6a3ce929d0e0e4736");
  CHECK_FALSE(out.contains("parentSpanId"));
  CHECK(out["kind"] == 2);
  CHECK(out["startTimeUnixNano"] == "1795963985001234567");
  CHECK(out["endTimeUnixNano"] == "1795963985002234567");
  CHECK(out["events"][0]["timeUnixNano"] == "1795963985001334567");
  CHECK(out["status"] == Json{{"code", 2}});
  CHECK(request["resourceSpans"][0]["resource"]["attributes"][0]["key"] == "service.name");
}

TEST_CASE("the operation duration histogram counts per attribute set with the advised buckets",
          "[trace][ADO-3]") {
  OperationDuration histogram(100);
  const Json call = {
      {"mcp.method.name", "tools/call"}, {"gen_ai.tool.name", "echo"}, {"keel.call.id", "k-1"}};
  histogram.Record(call, 0.01);  // on a bound: counted in that bucket (upper-inclusive)
  histogram.Record(call, 0.5);
  histogram.Record({{"mcp.method.name", "tools/call"},
                    {"gen_ai.tool.name", "echo"},
                    {"keel.call.id", "k-2"}},  // keel.* is not a metric attribute
                   400);
  const Json metric = histogram.MetricJson(200);
  CHECK(metric["name"] == "mcp.server.operation.duration");
  CHECK(metric["unit"] == "s");
  CHECK(metric["histogram"]["aggregationTemporality"] == 2);
  REQUIRE(metric["histogram"]["dataPoints"].size() == 1);
  const Json& point = metric["histogram"]["dataPoints"][0];
  CHECK(point["count"] == "3");
  CHECK(point["startTimeUnixNano"] == "100");
  CHECK(point["timeUnixNano"] == "200");
  CHECK(point["explicitBounds"].size() == 14);
  REQUIRE(point["bucketCounts"].size() == 15);
  CHECK(point["bucketCounts"][0] == "1");
  CHECK(point["bucketCounts"][5] == "1");
  CHECK(point["bucketCounts"][14] == "1");
  CHECK(point["max"] == 400);
}

}  // namespace keel::otlp_json_test
