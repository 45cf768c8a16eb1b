// TraceLog: keel's per-attempt trace (OBS-1), one JSON object per line in --trace-file,
// shaped as an OpenTelemetry LogRecord (reference/ecosystem.md §4.3):
//   {"ts": RFC 3339 UTC with µs, "ts_unix_ms": integer, "event": "tool.call.start" | ...,
//    "severity_text": "INFO" | "WARN" | "ERROR", "trace_id": 32 hex, "span_id": 16 hex,
//    "parent_span_id"?: 16 hex, "attributes": {...}, "resource": {service.name, ...}}
// Timestamps are never unix nanoseconds as JSON numbers (jq and JS round them).
//
// Thread-safety: Emit() may be called from any thread; each record is one write of one
// line, in the order Emit() was called.
// Errors: a record that cannot be written is counted (write_errors()) and dropped; tracing
// never fails a call.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace keel {

using Json = nlohmann::json;

// W3C trace context from a request's `_meta.traceparent` ("00-<trace id>-<parent id>-<flags>").
struct TraceContext {
  std::string trace_id;        // 32 lowercase hex, not all zero
  std::string parent_span_id;  // 16 lowercase hex, not all zero; empty when keel started the trace
};
// Nullopt unless `traceparent` is a valid version-00 header.
std::optional<TraceContext> ParseTraceparent(std::string_view traceparent);
// A fresh context (random trace id, no parent) when the client sent none.
TraceContext NewTraceContext();
std::string NewSpanId();

// One record, ready to write (pure; for tests and Emit()).
struct TraceEvent {
  std::string event;
  std::string severity = "INFO";
  std::string trace_id;
  std::string span_id;
  std::string parent_span_id;  // empty: none
  Json attributes = Json::object();
};
Json TraceRecord(const TraceEvent& event, int64_t unix_us, const Json& resource);
// "2026-11-29T14:33:05.001000Z"
std::string Rfc3339Micros(int64_t unix_us);

class TraceLog {
 public:
  // Opens (appending, creating) `path`. Null with *error set when it cannot.
  static std::unique_ptr<TraceLog> Open(const std::string& path, Json resource, std::string* error);
  ~TraceLog();
  TraceLog(const TraceLog&) = delete;
  TraceLog& operator=(const TraceLog&) = delete;

  // Writes one record stamped now (wall clock).
  void Emit(const TraceEvent& event);
  uint64_t write_errors() const;

 private:
  TraceLog(std::FILE* file, Json resource) : file_(file), resource_(std::move(resource)) {}
  std::FILE* file_;
  const Json resource_;
  mutable std::mutex mu_;
  uint64_t write_errors_ = 0;  // guarded by mu_
};

}  // namespace keel
