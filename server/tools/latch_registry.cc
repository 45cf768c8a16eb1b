#include "server/tools/latch_registry.h"

namespace keel {

bool LatchRegistry::Wait(const std::string& name, const CancellationToken& token) {
  auto wake = token.OnCancel([this] {
    std::lock_guard<std::mutex> lock(mu_);
    cv_.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return released_.count(name) != 0 || token.IsCancelled(); });
  return released_.count(name) != 0;
}

bool LatchRegistry::Release(const std::string& name) {
  bool inserted;
  {
    std::lock_guard<std::mutex> lock(mu_);
    inserted = released_.insert(name).second;
  }
  cv_.notify_all();
  return inserted;
}

}  // namespace keel
