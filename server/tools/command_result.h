// Command results (RET-1, PRG-1, IDEM-5): from a finished child process to what keel
// answers. Pure functions (no I/O); the contract of docs/catalog.md "Command-backed tools".
//
// CommandResultOf:
//  - exit 0: stdout is the result. With an outputSchema, or output "json", stdout must be one
//    JSON object (validated against the outputSchema), which becomes structuredContent with
//    stdout as its text block; with output "auto" a JSON object is used the same way and
//    anything else is text; with output "text" it is always text. Output cut at the cap ends
//    with the marker "[keel: output cut at N bytes ...]" (and cannot be JSON any more).
//    Output nested deeper than kMaxJsonDepth (bounded_json.h) is never parsed: it is text,
//    or, where JSON is required, an output_invalid failure naming the limit.
//  - a JSON object on stdout with an "error" object is a failure whatever the exit status;
//    its members (type, status, retry_after_ms, failure_class, message, ...) are the error's.
//    Its class: its failure_class; else what its type (or backend_<status>) means
//    (failure_classify.h), unless that is rejected_permanent and a nonzero exit status means
//    something else (exit 75 with {"status": 500} is transient).
//  - exit != 0: a failure classed by the exit status (command_spec.h ExitCodeClass: 75
//    rejected_transient, 69 not_sent, others rejected_permanent, unless the catalog maps it).
//  - killed by a signal, cancelled: ambiguous (command_killed, command_cancelled); the attempt
//    deadline passed: attempt_timeout (ambiguous); could not start: command_not_started,
//    rejected_permanent with effect "none" (nothing ran, so the ledger keeps no outcome).
// Every error is {"type", "failure_class", "exit_code"|"signal"?, ...} in
// structuredContent.error (failure_classify.h). stderr never reaches the client.
//
// ProgressLineOf: one line a command wrote on fd 3, {"progress": n, "total"?: n,
// "message"?: s} or a bare number n; nullopt for anything else (bounded like stdout).
//
// LookupResultOf: a lookup command's answer. exit 0 and {"happened": true, "result": R} ->
// kHappened with R as the call's result (an object: structuredContent; a string: text; absent:
// a text saying so); {"happened": false} -> kDidNotHappen; anything else -> kUnknown (*why set).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "server/catalog/command_spec.h"
#include "server/catalog/tool.h"
#include "server/runtime/process_runner.h"

namespace keel {

Json CommandResultOf(const ProcessResult& run, const CommandSpec& spec, const Json& output_schema,
                     const std::string& tool);

struct ProgressLine {
  double progress = 0;
  std::optional<double> total;
  std::string message;
};
std::optional<ProgressLine> ProgressLineOf(std::string_view line);

Reconciled LookupResultOf(const ProcessResult& run, const Json& output_schema, std::string* why);

// The marker appended to output cut at `cap` bytes.
std::string TruncationMarker(size_t cap);

}  // namespace keel
