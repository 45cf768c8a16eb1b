// `keel trace summary FILE` (OBS-2): what a --trace-file says, per tool, backend and
// outcome: calls, intents, retries, timeouts, breaker rejects, p50/p95 call duration,
// backend operations (attempts) and calls per intent. Pure: reads JSON lines, returns text.
// Lines that are not trace records are counted and skipped, never fatal.
#pragma once

#include <istream>
#include <string>

namespace keel {

std::string SummarizeTrace(std::istream& lines);

}  // namespace keel
