#include "server/trace/trace_log.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include "server/runtime/random_hex.h"

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

std::unique_ptr<TraceLog> TraceLog::Open(const std::string& path, Json resource,
                                         std::string* error) {
  std::FILE* file = std::fopen(path.c_str(), "ae");
  if (file == nullptr) {
    *error = std::strerror(errno);
    return nullptr;
  }
  return std::unique_ptr<TraceLog>(new TraceLog(file, std::move(resource)));
}

TraceLog::~TraceLog() { std::fclose(file_); }

void TraceLog::Emit(const TraceEvent& event) {
  const int64_t unix_us = std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
  std::string line =
      TraceRecord(event, unix_us, resource_).dump(-1, ' ', false, Json::error_handler_t::replace);
  line += '\n';
  std::lock_guard<std::mutex> lock(mu_);
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0) {
    ++write_errors_;
  }
}

uint64_t TraceLog::write_errors() const {
  std::lock_guard<std::mutex> lock(mu_);
  return write_errors_;
}

}  // namespace keel
