// The latency section of `keel trace report` (trace_report.h): per tool, over its finished
// calls (tool.call.end duration_ms), the count, p50/p95/p99 and max (nearest rank) and a
// histogram on 1-2-5 buckets. Markup: `section#latency`, one `div.tool-latency` per tool
// (data-tool, data-calls) holding `table.pct` and `svg.histogram` with `rect.bucket`
// (data-count). At most kMaxLatencyTools tools, the busiest first; the page says when more
// were left out.
//
// Pure: model in, markup out; tool names are HtmlEscape'd.
#pragma once

#include <cstddef>
#include <string>

#include "server/trace/trace_model.h"

namespace keel {

inline constexpr size_t kMaxLatencyTools = 60;  // beyond this the page is a wall of charts

std::string LatencySection(const TraceModel& model);

}  // namespace keel
