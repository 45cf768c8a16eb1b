// Suspend: how a WorkerPool job waits without holding its worker thread.
//
// Every job of a WorkerPool with threads runs on a fiber (job_fiber.h). A job that must
// wait for something another thread will report (an upstream's answer, a cancel, a timer)
// can Suspend(): its worker thread goes on with other jobs, and the job continues later,
// on whichever worker picks it up, once the thing it waits for calls its ResumeFn.
//
//   CanSuspend()  true when the caller runs in such a job (false on any other thread, and
//                 in a WorkerPool(0), whose jobs run inline).
//   Suspend(arm)  switches the job out, then calls arm(resume) on the worker's own stack,
//                 when the job's frames are saved and no longer run. `resume` is a one-shot
//                 function any thread may call, at once (inside arm) or later; the job is
//                 then queued to continue, and Suspend() returns there. arm must see to it
//                 that resume is called exactly once: a second call is a bug (it aborts),
//                 and a job never resumed never finishes (its call is settled by keel's
//                 timeouts like any stuck job; its stack is not reclaimed).
//
// Rules for code that calls Suspend(), directly or through any function that may:
//   - hold no lock across it: the job may continue on another thread, and a std::mutex
//     must be unlocked by the thread that locked it;
//   - keep no thread-local state across it (nor a pointer to one): the thread may differ.
// Only UpstreamRequest::Wait() suspends today, and its callers hold no lock.
#pragma once

#include <functional>

namespace keel {

using ResumeFn = std::function<void()>;
using SuspendArm = std::function<void(ResumeFn)>;

bool CanSuspend();
// Requires CanSuspend().
void Suspend(const SuspendArm& arm);
// Who runs now, as an opaque identity: the job's fiber when CanSuspend(), else the calling
// thread. Stable across a Suspend() (unlike the thread's id), so state kept per job, such
// as a borrowed database connection (ledger_service.h), follows the job to another thread.
// Never inlined, for the reason ForThisThread gave: a thread-local's address must not be
// taken once for a whole function whose job may move between threads.
[[gnu::noinline]] const void* CurrentJob();

}  // namespace keel
