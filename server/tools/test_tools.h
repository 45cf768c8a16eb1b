// Test tools (behind --test-tools): they let tests and transcripts force every ordering
// without sleeping.
//   sleep {ms}                      waits ms; a cancel stops it at once (task: optional)
//   task_sleep {ms}                 the same, only as a task (taskSupport: required)
//   progress {steps, interval_ms}   reports progress 1..steps, interval_ms apart (optional)
//   latch_wait {name, ignore_cancel?, checkpoint?}
//                                   blocks until latch `name` is released (or cancelled,
//                                   unless ignore_cancel), then reaches a checkpoint unless
//                                   checkpoint is false (task: optional)
//   latch_release {name}            opens latch `name` for good; runs on the loop thread,
//                                   so it works even when every worker is blocked
//   fail {message}                  returns isError: true with the message
//   flaky_read, flaky_write, flaky_idempotent {counter, fail?, retry_after_ms?, hang?}
//                                   (effects read, unsafe_write, idempotent_write; the last
//                                   also takes idempotencyKey): call n on counter `counter`
//                                   returns the scripted failure fail[n-1] as
//                                   structuredContent.error {type, retry_after_ms?}, then
//                                   succeeds with {attempt: n}. With hang, an
//                                   attempt_timeout first waits for the call's deadline or a
//                                   cancel (and stops at a checkpoint if cancelled).
//   ask_name, ask_two_rounds, ask_everything
//                                   ask the client for input (asking_tools.h)
// Latches live in one LatchRegistry, flaky counters in one mutex-guarded map, each shared
// by the tools of one server (one MakeTestTools() call); thread-safe.
#pragma once

#include <memory>
#include <vector>

#include "server/catalog/tool.h"

namespace keel {

std::vector<std::unique_ptr<Tool>> MakeTestTools();

}  // namespace keel
