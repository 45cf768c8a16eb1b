// JobFiber: one WorkerPool job on a stack of its own, so that it can Suspend() (suspend.h)
// and continue later on any worker thread. The pool creates one per job, runs it with Run()
// on a worker, and, when Run() reports a suspension, calls the job's arm with a ResumeFn that
// queues the fiber again.
//
// Why fibers: a call forwarded to an upstream server (keel wrap) spends nearly all its time
// waiting for the upstream's answer. Blocked on its worker, every call parked that worker
// and had the upstream's reader thread wake it: two more context switches and a futex round
// per call, which on these VMs cost more CPU than everything else keel does for the call
// (docs/benchmarks.md §8: 57-67 us of keel CPU per forwarded call at 16 in flight, the
// most of it in the kernel's wake-up paths). Suspended, the call holds no thread: the
// reader thread queues it, and a worker that is awake anyway takes it with no wake-up.
// C++20's stackless coroutines would need every function between the worker and the wait
// (CallRunner, RetryExecutor, the breaker's guard, Tool::Call) to become a coroutine; a
// stack per job leaves them as they are.
//
// Why Boost.Context (Debian libboost-context-dev): switching stacks is a few instructions
// of assembly per ABI, which Boost.Context has kept correct for x86-64, arm64 and more for
// fifteen years; ucontext's swapcontext() makes a sigprocmask system call at every switch,
// the very cost this avoids. Stacks come from a small cache (1 MiB each, with a guard page
// below, so an overflow faults instead of corrupting memory): mmap per job would cost two
// system calls per call. Untouched stack pages cost no memory.
//
// Thread-safety: Run() on one thread at a time (the pool's worker that took the fiber).
#pragma once

#include <functional>
#include <memory>

#include "server/runtime/suspend.h"

namespace keel {

class JobFiber {
 public:
  explicit JobFiber(std::function<void()> job);
  ~JobFiber();  // requires: finished, or never run
  JobFiber(const JobFiber&) = delete;
  JobFiber& operator=(const JobFiber&) = delete;

  // Runs the job until it returns (true) or suspends (false). After false, call
  // arm() once, with the ResumeFn that will queue this fiber again.
  bool Run();
  // The arm of the Suspend() that returned control to Run(); valid until the fiber runs
  // again (it lives on the fiber's stack).
  const SuspendArm& arm() const { return *arm_; }

  // Marks a resume; false if this suspension was already resumed (a bug in the arm).
  bool MarkResumed();

 private:
  friend void Suspend(const SuspendArm& arm);
  struct State;
  std::unique_ptr<State> state_;
  const SuspendArm* arm_ = nullptr;
};

}  // namespace keel
