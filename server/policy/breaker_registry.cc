#include "server/policy/breaker_registry.h"

namespace keel {

std::shared_ptr<CircuitBreaker> BreakerRegistry::For(std::string_view tool,
                                                     std::string_view backend,
                                                     const BreakerSettings& settings) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<CircuitBreaker>& breaker =
      breakers_[std::make_pair(std::string(tool), std::string(backend))];
  if (breaker == nullptr || !(breaker->settings() == settings)) {
    breaker = std::make_shared<CircuitBreaker>(settings, clock_);
  }
  return breaker;
}

size_t BreakerRegistry::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return breakers_.size();
}

}  // namespace keel
