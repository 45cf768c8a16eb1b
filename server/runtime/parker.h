// Parker: lets one thread sleep until another grants it a permit — the minimal wake-up
// primitive behind the WorkerPool. Park() returns once a permit is available and consumes
// it; Unpark() grants one (permits do not accumulate beyond one).
//
// Why not a condition variable: after a condvar wait, glibc re-takes the mutex in its
// "contended" state, so the next unlock makes a futex system call even when nobody waits.
// A wake-up already costs two context switches; the pool should not add a third syscall.
//
// Thread-safety: one thread parks; any thread may unpark.
// Invariants: Park() returns only after an Unpark() that it has not consumed before;
// spurious returns from the futex are absorbed inside Park().
#pragma once

#include <atomic>
#include <cstdint>

namespace keel {

class Parker {
 public:
  void Park();
  void Unpark();

 private:
  std::atomic<uint32_t> permit_{0};  // 1 while a permit is granted and not yet consumed
};

}  // namespace keel
