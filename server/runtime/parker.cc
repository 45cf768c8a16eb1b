#include "server/runtime/parker.h"

#include <unistd.h>

#include <linux/futex.h>
#include <sys/syscall.h>

namespace keel {

// A raw futex, not std::atomic::wait: libstdc++ spins with sched_yield() before it sleeps,
// four system calls that measured slower than the wake-up they try to avoid.
void Parker::Park() {
  while (permit_.exchange(0, std::memory_order_acquire) == 0) {
    // Sleeps only while no permit is granted: an Unpark() in between fails the wait at once.
    syscall(SYS_futex, &permit_, FUTEX_WAIT_PRIVATE, 0, nullptr, nullptr, 0);
  }
}

void Parker::Unpark() {
  if (permit_.exchange(1, std::memory_order_release) == 0) {
    syscall(SYS_futex, &permit_, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
  }
}

}  // namespace keel
