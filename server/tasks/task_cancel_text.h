// The statusMessage of a task cancelled by tasks/cancel, one per cancel phase (TASK-1): what
// the client reads in tasks/get and in the cancelled error of tasks/result. Shared by
// tasks/cancel (task_methods.cc) and the work lifecycle (task_lifecycle.cc). Constants only.
#pragma once

namespace keel {

inline constexpr const char* kCancelRequested =
    "Cancelled by tasks/cancel (cancel_requested): the work was asked to stop and has not "
    "reached a checkpoint yet.";
inline constexpr const char* kCancelObserved =
    "Cancelled by tasks/cancel (cancel_observed): the work stopped at a checkpoint.";
inline constexpr const char* kCancelNeverStarted =
    "Cancelled by tasks/cancel (cancel_observed): the work never started.";
inline constexpr const char* kCancelWhileWaiting =
    "Cancelled by tasks/cancel (cancel_observed) while it waited for input: no work of it was "
    "running.";
inline constexpr const char* kFinishedAfterCancel =
    "Cancelled by tasks/cancel, but the work did not stop and ran to its end "
    "(finished_after_cancel): whatever it did has happened; tasks/result reports it in "
    "error.data.lateOutcome.";

}  // namespace keel
