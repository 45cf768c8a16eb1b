// TraceLog: keel's per-attempt trace (OBS-1), one JSON object per line in --trace-file,
// shaped as an OpenTelemetry LogRecord (reference/ecosystem.md §4.3):
//   {"ts": RFC 3339 UTC with µs, "ts_unix_ms": integer, "event": "tool.call.start" | ...,
//    "severity_text": "INFO" | "WARN" | "ERROR", "trace_id": 32 hex, "span_id": 16 hex,
//    "parent_span_id"?: 16 hex, "attributes": {...}, "resource": {service.name, ...}}
// Timestamps are never unix nanoseconds as JSON numbers (jq and JS round them).
//
// With --trace-format otlp (ADO-3) the same records become OTLP spans instead
// (OtlpSpanBuilder), each finished span one ExportTraceServiceRequest line in the file, and
// the mcp.server.operation.duration histogram (OperationDuration) is written as
// ExportMetricsServiceRequest lines to the sibling file `<FILE>.metrics.jsonl` (the OTLP file
// format allows one signal per file): every kMetricsInterval while requests finish, and
// at close. The JSON lines format stays the default and is unchanged.
//
// Thread-safety: Emit() and EmitSpan() may be called from any thread; each record is one
// write of one line, in the order the calls were made.
// Errors: a record that cannot be written is counted (write_errors()) and dropped; tracing
// never fails a call.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/trace/operation_duration.h"
#include "server/trace/otlp_json.h"

namespace keel {

class OtlpSpanBuilder;

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
  // What only the OTLP form uses, never written to the JSON lines (which stay as they were):
  // "mcp.method.name" of a call made for another method, "mcp.session.id".
  Json otlp = Json::object();
};
Json TraceRecord(const TraceEvent& event, int64_t unix_us, const Json& resource);
// "2026-11-29T14:33:05.001000Z"
std::string Rfc3339Micros(int64_t unix_us);

enum class TraceFormat { kJsonl, kOtlp };
// "jsonl" / "otlp"; nullopt for anything else.
std::optional<TraceFormat> ParseTraceFormat(std::string_view name);
// Where --trace-format otlp writes the metrics of trace file `path`.
std::string MetricsPathOf(const std::string& path);

class TraceLog {
 public:
  // How often (at most) the histogram is written while requests finish.
  static constexpr std::chrono::seconds kMetricsInterval{10};

  struct Options {
    TraceFormat format = TraceFormat::kJsonl;
    std::string version;  // the instrumentation scope's version (otlp)
    // Unix time in nanoseconds; null: the system clock. Tests inject one.
    std::function<int64_t()> unix_ns;
  };
  // Opens (appending, creating) `path`, and for otlp its metrics file. Null with *error set
  // when it cannot.
  static std::unique_ptr<TraceLog> Open(const std::string& path, Json resource, std::string* error,
                                        Options options);
  static std::unique_ptr<TraceLog> Open(const std::string& path, Json resource,
                                        std::string* error) {
    return Open(path, std::move(resource), error, Options());
  }
  ~TraceLog();  // otlp: writes the histogram a last time
  TraceLog(const TraceLog&) = delete;
  TraceLog& operator=(const TraceLog&) = delete;

  // Writes one record stamped now (wall clock): a JSON line, or its part of an OTLP span.
  void Emit(const TraceEvent& event);
  // otlp: writes a span made elsewhere (a request that no CallTracer traced) and, for a
  // SERVER span, records its duration. Ignored for jsonl.
  void EmitSpan(const OtlpSpan& span);
  bool otlp() const { return options_.format == TraceFormat::kOtlp; }
  int64_t NowUnixNs() const;
  uint64_t write_errors() const;

 private:
  TraceLog(std::FILE* file, std::FILE* metrics, Json resource, Options options);
  // Under mu_: one finished span out, and its duration into the histogram.
  void WriteSpanLocked(const OtlpSpan& span, int64_t now_ns);
  void WriteMetricsLocked(int64_t now_ns);
  void WriteLineLocked(std::FILE* file, const Json& value);

  std::FILE* file_;
  std::FILE* metrics_file_;  // otlp only
  const Json resource_;
  const Options options_;
  mutable std::mutex mu_;
  uint64_t write_errors_ = 0;               // guarded by mu_
  std::unique_ptr<OtlpSpanBuilder> spans_;  // guarded by mu_; otlp only
  OperationDuration duration_;              // guarded by mu_
  int64_t metrics_written_ns_ = 0;          // guarded by mu_
  bool metrics_dirty_ = false;              // guarded by mu_
};

}  // namespace keel
