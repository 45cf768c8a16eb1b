// BreakerRegistry: the circuit breakers of one process, one per (tool, backend) (CB-1: "one
// breaker per tool and backend, not global"), each made on first use.
//
// Threads: thread-safe (one mutex, held only to find or make a breaker; the breakers have
// their own). Ownership: breakers are shared, so a caller that took one keeps a valid
// breaker for as long as it holds it, even after the registry replaced it.
//
// Invariants:
//  1. For() returns the same breaker for the same key while the settings it is asked with
//     stay equal.
//  2. When a policy reload changes the settings for a key, the next For() replaces that key's
//     breaker with a fresh, closed one (Polly's reload does the same: "the previous pipeline
//     is discarded"). Results recorded into the old one are then simply lost, which is the
//     generation rule across a reload.
//  3. The keys come from the catalog and the policy, so the map is bounded by configuration.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "server/policy/circuit_breaker.h"
#include "server/policy/policy_types.h"
#include "server/runtime/clock.h"

namespace keel {

class BreakerRegistry {
 public:
  explicit BreakerRegistry(const Clock& clock) : clock_(clock) {}

  // The breaker of (tool, backend), made with `settings` if there is none yet or if the one
  // there was made with different settings.
  std::shared_ptr<CircuitBreaker> For(std::string_view tool, std::string_view backend,
                                      const BreakerSettings& settings);
  size_t size() const;

 private:
  const Clock& clock_;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, std::shared_ptr<CircuitBreaker>> breakers_;
};

}  // namespace keel
