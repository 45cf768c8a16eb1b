// The retries-per-intent table of `keel trace report` (trace_report.h). An intent is
// keel.intent.id: the tool and idempotency key when the call had one (so a client's retry
// under the same key is the same intent), else the call itself. Per intent: its calls (the
// client's tries), attempts (keel's), retries keel made (attempts beyond the first of each
// call), total backoff, and each call's outcome. Markup: `section#retries`, `table.intents`
// with one `tr.intent` per listed intent (data-intent, data-tool, data-calls, data-attempts,
// data-retries). Listed: intents with a retry or more than one call, most retries first, at
// most kMaxIntentRows; the page counts the rest.
//
// Pure: model in, markup out; every string from the trace is HtmlEscape'd.
#pragma once

#include <cstddef>
#include <string>

#include "server/trace/trace_model.h"

namespace keel {

inline constexpr size_t kMaxIntentRows = 200;  // a table longer than this is not read

std::string IntentsSection(const TraceModel& model);

}  // namespace keel
