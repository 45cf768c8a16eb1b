// OTLP/JSON: the protobuf JSON mapping of OpenTelemetry's trace and metrics messages, as the
// collector's file exporter writes them and its otlpjsonfile receiver reads them (one
// ExportTraceServiceRequest or ExportMetricsServiceRequest per line). The rules followed
// (opentelemetry-proto docs/specification.md, "JSON Protobuf Encoding"):
//   - lowerCamelCase field names; traceId / spanId / parentSpanId as lowercase hex (not base64);
//   - 64-bit integers (times in unix nanoseconds, intValue, counts) as decimal strings;
//   - enums as integers (SpanKind SERVER = 2, INTERNAL = 1; StatusCode OK = 1, ERROR = 2;
//     AggregationTemporality CUMULATIVE = 2); fields at their default value are left out;
//   - attributes as KeyValue lists: {"key", "value": {"stringValue" | "intValue" |
//     "boolValue" | "doubleValue" | "arrayValue"}}.
// Hand-written: the mapping is small and fixed, and pulling in protobuf plus the generated
// OTLP classes for it would be the only protobuf in keel.
//
// Pure functions and value types; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace keel {

using Json = nlohmann::json;

// SpanKind and Status.StatusCode of trace.proto.
enum class SpanKind : int { kInternal = 1, kServer = 2, kClient = 3 };
enum class SpanStatus : int { kUnset = 0, kOk = 1, kError = 2 };

struct OtlpEvent {
  int64_t time_unix_ns = 0;
  std::string name;
  Json attributes = Json::object();  // flat {"key": scalar}
};

struct OtlpSpan {
  std::string trace_id;        // 32 lowercase hex
  std::string span_id;         // 16 lowercase hex
  std::string parent_span_id;  // 16 lowercase hex; empty: a root span
  std::string name;
  SpanKind kind = SpanKind::kInternal;
  int64_t start_unix_ns = 0;
  int64_t end_unix_ns = 0;
  Json attributes = Json::object();  // flat {"key": scalar}
  std::vector<OtlpEvent> events;
  SpanStatus status = SpanStatus::kUnset;
  std::string status_message;
};

// "1700000000000000000": how OTLP/JSON writes a fixed64 / int64.
std::string Int64String(int64_t value);
// One AnyValue: strings, booleans, integers (as intValue strings), doubles, arrays of those;
// anything else (objects, null) as its JSON text in a stringValue.
Json OtlpAnyValue(const Json& value);
// A flat {"key": value} object as a KeyValue list, in key order.
Json OtlpAttributes(const Json& flat);
Json OtlpSpanJson(const OtlpSpan& span);
// {"resourceSpans":[{"resource":{...},"scopeSpans":[{"scope":{name,version},"spans":[...]}]}]}
Json ExportTraceRequest(const Json& resource, const std::string& scope_version,
                        const std::vector<OtlpSpan>& spans);
// The same envelope for metrics; `metrics` are Metric messages already in OTLP/JSON.
Json ExportMetricsRequest(const Json& resource, const std::string& scope_version,
                          const Json& metrics);

}  // namespace keel
