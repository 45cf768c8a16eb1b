// Blocked threads, for tests that must force the "already waiting" side of a race without
// sleeping: one thread records its kernel id (CurrentThreadId) and goes into the blocking
// call under test; another spins (yielding) until that thread is asleep in the kernel
// (WaitUntilAsleep: state 'S' in /proc/self/task/<tid>/stat, a futex or poll wait), and only
// then acts. The thread under test must do nothing else that blocks between announcing its
// id and the call under test.
// Header-only; Linux only. Thread-safety: any thread.
#pragma once

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include <sys/syscall.h>
#include <sys/types.h>

namespace keel {

inline pid_t CurrentThreadId() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

// The state letter of thread `tid` of this process ('R', 'S', 'D', ...); '?' when unknown.
inline char ThreadState(pid_t tid) {
  std::ifstream stat("/proc/self/task/" + std::to_string(tid) + "/stat");
  const std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos || paren + 2 >= text.size()) return '?';
  return text[paren + 2];
}

// True once thread `tid` sleeps in the kernel; false if it did not within `limit` (the bound
// only keeps a broken test from hanging: a thread about to wait gets there in microseconds).
inline bool WaitUntilAsleep(pid_t tid, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < give_up) {
    if (ThreadState(tid) == 'S') return true;
    std::this_thread::yield();
  }
  return false;
}

}  // namespace keel
