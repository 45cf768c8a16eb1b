// `keel trace summary [--json] FILE` (OBS-2): what a --trace-file says, per tool, backend and
// outcome: calls, intents, retries, timeouts, breaker rejects, p50/p95 call duration,
// backend operations (attempts) and calls per intent. Pure: reads lines, returns text or
// JSON. It reads both --trace-format jsonl records and --trace-format otlp span lines
// (ExportTraceServiceRequest; ADO-3). Lines that are neither are counted and skipped, never
// fatal.
//
// The JSON form (SummarizeTraceJson) holds the same figures as the text:
//   {"groups": [{"tool": string, "backend": string, "outcome": string, "calls": int,
//                "intents": int, "retries": int, "timeouts": int, "breaker_rejects": int,
//                "p50_ms": number, "p95_ms": number, "backend_operations": int,
//                "calls_per_intent": number}, ...],   // sorted by tool, backend, outcome
//    "skipped_lines": int}                             // lines that were not trace records
#pragma once

#include <istream>
#include <string>

#include <nlohmann/json.hpp>

namespace keel {

std::string SummarizeTrace(std::istream& lines);
nlohmann::json SummarizeTraceJson(std::istream& lines);

}  // namespace keel
