#include "server/trace/otlp_json.h"

namespace keel {
namespace {

constexpr const char* kScopeName = "keel";

Json Scope(const std::string& version) {
  Json scope = {{"name", kScopeName}};
  if (!version.empty()) scope["version"] = version;
  return scope;
}

Json Resource(const Json& resource) { return Json{{"attributes", OtlpAttributes(resource)}}; }

}  // namespace

std::string Int64String(int64_t value) { return std::to_string(value); }

Json OtlpAnyValue(const Json& value) {
  if (value.is_string()) return Json{{"stringValue", value}};
  if (value.is_boolean()) return Json{{"boolValue", value}};
  if (value.is_number_unsigned()) {
    return Json{{"intValue", std::to_string(value.get<uint64_t>())}};
  }
  if (value.is_number_integer()) return Json{{"intValue", Int64String(value.get<int64_t>())}};
  if (value.is_number_float()) return Json{{"doubleValue", value}};
  if (value.is_array()) {
    Json values = Json::array();
    for (const Json& item : value) values.push_back(OtlpAnyValue(item));
    return Json{{"arrayValue", {{"values", values}}}};
  }
  return Json{{"stringValue", value.dump(-1, ' ', false, Json::error_handler_t::replace)}};
}

Json OtlpAttributes(const Json& flat) {
  Json list = Json::array();
  if (!flat.is_object()) return list;
  for (const auto& [key, value] : flat.items()) {
    list.push_back(Json{{"key", key}, {"value", OtlpAnyValue(value)}});
  }
  return list;
}

Json OtlpSpanJson(const OtlpSpan& span) {
  Json out = {{"traceId", span.trace_id}, {"spanId", span.span_id}};
  if (!span.parent_span_id.empty()) out["parentSpanId"] = span.parent_span_id;
  out["name"] = span.name;
  out["kind"] = static_cast<int>(span.kind);
  out["startTimeUnixNano"] = Int64String(span.start_unix_ns);
  out["endTimeUnixNano"] = Int64String(span.end_unix_ns);
  out["attributes"] = OtlpAttributes(span.attributes);
  if (!span.events.empty()) {
    Json events = Json::array();
    for (const OtlpEvent& event : span.events) {
      Json e = {{"timeUnixNano", Int64String(event.time_unix_ns)}, {"name", event.name}};
      if (!event.attributes.empty()) e["attributes"] = OtlpAttributes(event.attributes);
      events.push_back(std::move(e));
    }
    out["events"] = std::move(events);
  }
  Json status = Json::object();
  if (span.status != SpanStatus::kUnset) status["code"] = static_cast<int>(span.status);
  if (!span.status_message.empty()) status["message"] = span.status_message;
  out["status"] = std::move(status);
  return out;
}

Json ExportTraceRequest(const Json& resource, const std::string& scope_version,
                        const std::vector<OtlpSpan>& spans) {
  Json list = Json::array();
  for (const OtlpSpan& span : spans) list.push_back(OtlpSpanJson(span));
  Json scope_spans = {{"scope", Scope(scope_version)}, {"spans", std::move(list)}};
  return Json{{"resourceSpans", Json::array({Json{{"resource", Resource(resource)},
                                                  {"scopeSpans", Json::array({scope_spans})}}})}};
}

Json ExportMetricsRequest(const Json& resource, const std::string& scope_version,
                          const Json& metrics) {
  Json scope_metrics = {{"scope", Scope(scope_version)}, {"metrics", metrics}};
  return Json{
      {"resourceMetrics", Json::array({Json{{"resource", Resource(resource)},
                                            {"scopeMetrics", Json::array({scope_metrics})}}})}};
}

}  // namespace keel
