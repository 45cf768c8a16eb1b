// LatchRegistry: named one-shot gates for the latch test tools. Once released a latch
// stays open, so "release before wait" and "wait before release" both end the wait.
// Thread-safe: Wait() blocks a worker; Release() is called from the loop thread.
#pragma once

#include <condition_variable>
#include <mutex>
#include <set>
#include <string>

#include "server/runtime/cancellation.h"

namespace keel {

class LatchRegistry {
 public:
  // Blocks until `name` is released (true) or `token` is cancelled (false).
  bool Wait(const std::string& name, const CancellationToken& token);
  // Returns false when the latch was already open.
  bool Release(const std::string& name);

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::set<std::string> released_;  // guarded by mu_
};

}  // namespace keel
