#include "server/tools/list_changed_hook.h"

#include <utility>

namespace keel {

void ListChangedHook::Connect(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  fn_ = std::move(fn);
}

bool ListChangedHook::Fire() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!fn_) return false;
  fn_();
  return true;
}

}  // namespace keel
