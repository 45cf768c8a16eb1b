// Conformance fixtures for the MCP 2026-07-28 tasks extension (SEP-2663; behind
// --conformance-fixtures; reference/mcp-2026-07-28.md §6 and §8.3): the tools the official
// suite's tasks-* scenarios call.
//   greet {name}                 never a task: "Hello, <name>!"
//   slow_compute {seconds, label?}
//                                taskSupport optional: with the extension declared and
//                                seconds > 0 it becomes a task at once (ToolContext::
//                                BecomeTask); without, or with seconds 0, a plain call. Waits
//                                `seconds` (a cancel, tasks/cancel included, stops it at once:
//                                the task ends cancelled); "Computed <label> in <seconds> s"
//   failing_job {}               taskSupport required (-32021 naming the extension without
//                                it): after `failure_delay` an isError result, so the task
//                                ends completed with result.isError
//   protocol_error_job {}        taskSupport required: throws after `failure_delay`; keel's
//                                internal error, so the task ends failed with
//                                error {code -32603, message} (task_wire.h)
//   test_tool_with_task {}       taskSupport required, asks for input: round 1 asks user_name
//                                (elicitation, {name}) as a call's InputRequiredResult; the
//                                round with the answer becomes a task (CreateTaskResult),
//                                whose result is "Hello, <name>! (done as a task)"
//   confirm_delete {filename}    taskSupport required, asks for input: becomes a task at once,
//                                whose work asks "confirm" (elicitation, {confirm: boolean})
//   multi_input {}               the same with two questions at once, "first" and "second"
//                                ({name, confirm} each)
// keel's task work cannot be asked anything yet (no status input_required answered by
// tasks/update: issue 21), so these two tasks end completed with an isError result of type
// input_unavailable naming their questions; the fixtures ask as the suite's tasks-mrtr-input
// expects, so they need no change when tasks learn to wait for answers.
// Stateless: safe to call concurrently.
#pragma once

#include <memory>
#include <vector>

#include "server/catalog/tool.h"
#include "server/runtime/clock.h"

namespace keel {

// `failure_delay`: the suite's "~1 s" before failing_job and protocol_error_job fail (tests
// pass 0).
std::vector<std::unique_ptr<Tool>> MakeConformanceTaskTools(Millis failure_delay = Millis(1000));

}  // namespace keel
