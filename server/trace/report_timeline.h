// The timeline of `keel trace report` (trace_report.h): which calls it draws, and the SVG of
// them — one row per call (`g.call` with data-tool, data-outcome, data-call-id,
// data-request-id, data-attempts), its attempts as bars (`rect.attempt`, data-attempt,
// data-outcome), backoffs as dashed gaps (`.backoff`), timeouts by layer (`.timeout`,
// data-layer), cancels (`.cancel`), replays (`.replay`), breaker rejections
// (`.breaker-reject`) and suppressed retries (`.suppressed`), each with a <title> tooltip —
// and the breaker state bands per backend over the same time axis (`g.breaker`,
// data-backend; `rect.band`, data-state).
//
// Pure: model in, markup out; every string from the trace is HtmlEscape'd.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "server/trace/report_svg.h"
#include "server/trace/trace_model.h"

namespace keel {

// Which calls the timeline draws: a large trace (100k records) must stay a usable page.
struct TimelineRows {
  std::vector<size_t> shown;  // indexes into model.calls, in order
  size_t failing = 0;         // failing calls in the model
  size_t failing_left_out = 0;
};
// The first `first_calls` calls, then every failing call after them, up to `max_rows` rows.
TimelineRows PickTimelineRows(const TraceModel& model, size_t first_calls, size_t max_rows);

// The axis the timeline and the breaker bands share.
TimeAxis ReportAxis(const TraceModel& model);

std::string TimelineSvg(const TraceModel& model, const std::vector<size_t>& rows,
                        const TimeAxis& axis);
// Empty when no breaker changed state in the trace.
std::string BreakerBandsSvg(const TraceModel& model, const TimeAxis& axis);

}  // namespace keel
