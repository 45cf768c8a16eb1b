// WriterGate: the in-process queue of ledger writers. Connections of one process take it
// before BEGIN IMMEDIATE, so they wait here (woken the moment the holder is done) instead
// of in SQLite's busy handler, which polls with sleeps of several milliseconds. Writers of
// other processes still meet at SQLite's own lock.
// (A mutex and condition variable rather than std::timed_mutex, whose timed lock
// ThreadSanitizer cannot see, so TSan stays usable on the ledger.)
//
// Thread-safety: every member may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace keel {

class WriterGate {
 public:
  // Held until destroyed, if acquired.
  class Hold {
   public:
    Hold() = default;
    Hold(Hold&& other) noexcept : gate_(other.gate_) { other.gate_ = nullptr; }
    Hold& operator=(Hold&&) = delete;
    Hold(const Hold&) = delete;
    ~Hold() {
      if (gate_ != nullptr) gate_->Leave();
    }

   private:
    friend class WriterGate;
    WriterGate* gate_ = nullptr;
  };

  // Waits at most `budget` for the gate. False (and nothing held) if it stayed taken.
  // `hold` must be empty.
  bool Enter(std::chrono::milliseconds budget, Hold* hold) {
    std::unique_lock<std::mutex> lock(mu_);
    const auto until = std::chrono::steady_clock::now() + budget;
    if (!free_.wait_until(lock, until, [this] { return !held_; })) return false;
    held_ = true;
    hold->gate_ = this;  // `hold` was empty: nothing to leave first
    return true;
  }

 private:
  void Leave() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      held_ = false;
    }
    free_.notify_one();
  }

  std::mutex mu_;
  std::condition_variable free_;
  bool held_ = false;  // guarded by mu_
};

}  // namespace keel
