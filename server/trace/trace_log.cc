#include "server/trace/trace_log.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include "server/runtime/random_hex.h"
#include "server/trace/otlp_span_builder.h"

namespace keel {
namespace {

bool IsLowerHex(std::string_view text) {
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool AllZero(std::string_view text) {
  return text.find_first_not_of('0') == std::string_view::npos;
}

// A W3C id of `bytes` random bytes, never all zero (which W3C reserves as invalid).
std::string TraceHex(size_t bytes) {
  for (;;) {
    std::string id = RandomHex(bytes);
    if (!AllZero(id)) return id;
  }
}

}  // namespace

std::optional<TraceContext> ParseTraceparent(std::string_view header) {
  // version "00": 2 + 1 + 32 + 1 + 16 + 1 + 2 = 55 characters.
  if (header.size() != 55 || header[2] != '-' || header[35] != '-' || header[52] != '-') {
    return std::nullopt;
  }
  const std::string_view version = header.substr(0, 2);
  const std::string_view trace_id = header.substr(3, 32);
  const std::string_view parent = header.substr(36, 16);
  const std::string_view flags = header.substr(53, 2);
  if (version != "00" || !IsLowerHex(trace_id) || !IsLowerHex(parent) || !IsLowerHex(flags) ||
      AllZero(trace_id) || AllZero(parent)) {
    return std::nullopt;
  }
  return TraceContext{std::string(trace_id), std::string(parent)};
}

TraceContext NewTraceContext() { return TraceContext{TraceHex(16), std::string()}; }

std::string NewSpanId() { return TraceHex(8); }

std::string Rfc3339Micros(int64_t unix_us) {
  const std::time_t seconds = static_cast<std::time_t>(unix_us / 1000000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[96];  // roomy: the compiler cannot bound the int fields
  std::snprintf(text, sizeof(text), "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<long long>(unix_us % 1000000));
  return text;
}

Json TraceRecord(const TraceEvent& event, int64_t unix_us, const Json& resource) {
  Json record = {{"ts", Rfc3339Micros(unix_us)}, {"ts_unix_ms", unix_us / 1000},
                 {"event", event.event},         {"severity_text", event.severity},
                 {"trace_id", event.trace_id},   {"span_id", event.span_id}};
  if (!event.parent_span_id.empty()) record["parent_span_id"] = event.parent_span_id;
  record["attributes"] = event.attributes;
  record["resource"] = resource;
  return record;
}

std::optional<TraceFormat> ParseTraceFormat(std::string_view name) {
  if (name == "jsonl") return TraceFormat::kJsonl;
  if (name == "otlp") return TraceFormat::kOtlp;
  return std::nullopt;
}

std::string MetricsPathOf(const std::string& path) { return path + ".metrics.jsonl"; }

std::unique_ptr<TraceLog> TraceLog::Open(const std::string& path, Json resource, std::string* error,
                                         Options options) {
  std::FILE* file = std::fopen(path.c_str(), "ae");
  if (file == nullptr) {
    *error = std::strerror(errno);
    return nullptr;
  }
  std::FILE* metrics = nullptr;
  if (options.format == TraceFormat::kOtlp) {
    const std::string metrics_path = MetricsPathOf(path);
    metrics = std::fopen(metrics_path.c_str(), "ae");
    if (metrics == nullptr) {
      *error = metrics_path + ": " + std::strerror(errno);
      std::fclose(file);
      return nullptr;
    }
  }
  return std::unique_ptr<TraceLog>(
      new TraceLog(file, metrics, std::move(resource), std::move(options)));
}

TraceLog::TraceLog(std::FILE* file, std::FILE* metrics, Json resource, Options options)
    : file_(file),
      metrics_file_(metrics),
      resource_(std::move(resource)),
      options_(std::move(options)),
      duration_(NowUnixNs()) {
  if (otlp()) spans_ = std::make_unique<OtlpSpanBuilder>();
  metrics_written_ns_ = NowUnixNs();
}

TraceLog::~TraceLog() {
  if (metrics_file_ != nullptr) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (metrics_dirty_) WriteMetricsLocked(NowUnixNs());
    }
    std::fclose(metrics_file_);
  }
  std::fclose(file_);
}

int64_t TraceLog::NowUnixNs() const {
  if (options_.unix_ns) return options_.unix_ns();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void TraceLog::WriteLineLocked(std::FILE* file, const Json& value) {
  std::string line = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  line += '\n';
  if (std::fwrite(line.data(), 1, line.size(), file) != line.size() || std::fflush(file) != 0) {
    ++write_errors_;
  }
}

void TraceLog::WriteSpanLocked(const OtlpSpan& span, int64_t now_ns) {
  WriteLineLocked(file_, ExportTraceRequest(resource_, options_.version, {span}));
  if (span.kind != SpanKind::kServer) return;
  duration_.Record(span.attributes,
                   static_cast<double>(span.end_unix_ns - span.start_unix_ns) / 1e9);
  metrics_dirty_ = true;
  if (now_ns - metrics_written_ns_ >=
      std::chrono::duration_cast<std::chrono::nanoseconds>(kMetricsInterval).count()) {
    WriteMetricsLocked(now_ns);
  }
}

void TraceLog::WriteMetricsLocked(int64_t now_ns) {
  metrics_written_ns_ = now_ns;
  metrics_dirty_ = false;
  if (duration_.empty()) return;
  WriteLineLocked(metrics_file_, ExportMetricsRequest(resource_, options_.version,
                                                      Json::array({duration_.MetricJson(now_ns)})));
}

void TraceLog::Emit(const TraceEvent& event) {
  const int64_t now_ns = NowUnixNs();
  if (otlp()) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const OtlpSpan& span : spans_->Add(event, now_ns)) WriteSpanLocked(span, now_ns);
    return;
  }
  std::string line = TraceRecord(event, now_ns / 1000, resource_)
                         .dump(-1, ' ', false, Json::error_handler_t::replace);
  line += '\n';
  std::lock_guard<std::mutex> lock(mu_);
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    ++write_errors_;
  }
}

void TraceLog::EmitSpan(const OtlpSpan& span) {
  if (!otlp()) return;
  const int64_t now_ns = NowUnixNs();
  std::lock_guard<std::mutex> lock(mu_);
  WriteSpanLocked(span, now_ns);
}

uint64_t TraceLog::write_errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return write_errors_;
}

}  // namespace keel
