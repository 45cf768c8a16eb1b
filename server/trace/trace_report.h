// `keel trace report FILE` (ADO-4): a --trace-file as one self-contained HTML page — no
// network access at all (no fonts, scripts, styles or images by URL; inline CSS and
// server-side SVG, no script) — for a person after an incident:
//   header#summary   the file, its time range, calls by outcome (`.count[data-outcome]`),
//                    attempts, retries, timeouts by layer, cancels, replays, breaker events
//   section#timeline one row per call with its attempts, backoffs, timeouts (by layer),
//                    cancels and replays (report_timeline.h); capped, and says so
//   section#breakers breaker state bands per backend over the same time axis
//   section#latency  per tool p50/p95/p99 and a histogram (report_latency.h)
//   section#retries  retries per intent (report_intents.h)
// Every string from the trace is HtmlEscape'd (html_text.h): the file is untrusted.
//
// Pure: model in, page out.
#pragma once

#include <cstddef>
#include <string>

#include "server/trace/trace_model.h"

namespace keel {

struct ReportOptions {
  std::string source;  // the trace file's name, for the header
  // The timeline draws the first `first_calls` calls, then every failing one, at most
  // `max_rows` rows in all: a 100k-record trace stays a page a browser opens at once.
  size_t first_calls = 300;
  size_t max_rows = 1500;
};

std::string RenderTraceReport(const TraceModel& model, const ReportOptions& options);

}  // namespace keel
