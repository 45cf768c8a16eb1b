// OperationDuration: the `mcp.server.operation.duration` histogram of the MCP semantic
// conventions (semconv docs/gen-ai/mcp.md): each served request's duration in seconds, from
// its arrival until its answer, one data point per distinct attribute set (mcp.method.name,
// error.type, gen_ai.tool.name, mcp.protocol.version, network.transport,
// rpc.response.status_code), with the advised explicit bucket boundaries. Cumulative
// temporality: every export repeats the counts since `start_unix_ns`.
//
// Not thread-safe: its owner (TraceLog) serialises calls.
// Invariants: bucket_counts has bounds + 1 entries and sums to count; at most
// kMaxPoints distinct attribute sets (more are counted in dropped() and not recorded).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace keel {

using Json = nlohmann::json;

class OperationDuration {
 public:
  // A client choosing method names or tool names must not grow keel's memory without bound.
  static constexpr size_t kMaxPoints = 1024;
  static const std::vector<double>& Bounds();

  explicit OperationDuration(int64_t start_unix_ns) : start_unix_ns_(start_unix_ns) {}

  // `attributes`: a flat object; only the histogram's attribute keys are kept.
  void Record(const Json& attributes, double seconds);
  bool empty() const { return points_.empty(); }
  uint64_t dropped() const { return dropped_; }
  // The Metric message (OTLP/JSON) with one data point per attribute set, as of `now_unix_ns`.
  Json MetricJson(int64_t now_unix_ns) const;

 private:
  struct Point {
    Json attributes;
    uint64_t count = 0;
    double sum = 0;
    double min = 0;
    double max = 0;
    std::vector<uint64_t> bucket_counts;
  };
  int64_t start_unix_ns_;
  std::map<std::string, Point> points_;  // by the attribute set's JSON text
  uint64_t dropped_ = 0;
};

}  // namespace keel
