#include "server/trace/operation_duration.h"

#include <algorithm>

#include "server/trace/otlp_json.h"

namespace keel {
namespace {

// The attributes the semantic conventions list for the metric (low cardinality only).
constexpr const char* kKeys[] = {"mcp.method.name",       "error.type",
                                 "gen_ai.tool.name",      "gen_ai.prompt.name",
                                 "gen_ai.operation.name", "mcp.protocol.version",
                                 "network.transport",     "rpc.response.status_code"};

}  // namespace

const std::vector<double>& OperationDuration::Bounds() {
  // The ExplicitBucketBoundaries the conventions advise for mcp.server.operation.duration.
  static const std::vector<double> bounds = {0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1,
                                             2,    5,    10,   30,  60,  120, 300};
  return bounds;
}

void OperationDuration::Record(const Json& attributes, double seconds) {
  Json kept = Json::object();
  for (const char* key : kKeys) {
    const auto it = attributes.find(key);
    if (it != attributes.end()) kept[key] = *it;
  }
  const std::string id = kept.dump(-1, ' ', false, Json::error_handler_t::replace);
  auto it = points_.find(id);
  if (it == points_.end()) {
    if (points_.size() >= kMaxPoints) {
      ++dropped_;
      return;
    }
    Point point;
    point.attributes = std::move(kept);
    point.bucket_counts.assign(Bounds().size() + 1, 0);
    point.min = seconds;
    point.max = seconds;
    it = points_.emplace(id, std::move(point)).first;
  }
  Point& point = it->second;
  ++point.count;
  point.sum += seconds;
  point.min = std::min(point.min, seconds);
  point.max = std::max(point.max, seconds);
  // Buckets are upper-inclusive: bucket i counts bounds[i-1] < x <= bounds[i].
  const auto bound = std::lower_bound(Bounds().begin(), Bounds().end(), seconds);
  ++point.bucket_counts[static_cast<size_t>(bound - Bounds().begin())];
}

Json OperationDuration::MetricJson(int64_t now_unix_ns) const {
  Json points = Json::array();
  for (const auto& [id, point] : points_) {
    Json counts = Json::array();
    for (uint64_t n : point.bucket_counts) counts.push_back(std::to_string(n));
    points.push_back(Json{{"attributes", OtlpAttributes(point.attributes)},
                          {"startTimeUnixNano", Int64String(start_unix_ns_)},
                          {"timeUnixNano", Int64String(now_unix_ns)},
                          {"count", std::to_string(point.count)},
                          {"sum", point.sum},
                          {"bucketCounts", std::move(counts)},
                          {"explicitBounds", Bounds()},
                          {"min", point.min},
                          {"max", point.max}});
  }
  return Json{{"name", "mcp.server.operation.duration"},
              {"description",
               "MCP request duration as observed on the receiver from the time it was received "
               "until the result is sent."},
              {"unit", "s"},
              // AGGREGATION_TEMPORALITY_CUMULATIVE = 2
              {"histogram", {{"dataPoints", std::move(points)}, {"aggregationTemporality", 2}}}};
}

}  // namespace keel
