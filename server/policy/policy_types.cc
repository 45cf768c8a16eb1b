#include "server/policy/policy_types.h"

namespace keel {

std::string_view EffectClassName(EffectClass effect) {
  switch (effect) {
    case EffectClass::kRead: return "read";
    case EffectClass::kExpensiveRead: return "expensive_read";
    case EffectClass::kIdempotentWrite: return "idempotent_write";
    case EffectClass::kUnsafeWrite: return "unsafe_write";
  }
  return "read";
}

std::optional<EffectClass> ParseEffectClass(std::string_view name) {
  for (EffectClass effect : {EffectClass::kRead, EffectClass::kExpensiveRead,
                             EffectClass::kIdempotentWrite, EffectClass::kUnsafeWrite}) {
    if (EffectClassName(effect) == name) return effect;
  }
  return std::nullopt;
}

std::string_view FailureClassName(FailureClass failure) {
  switch (failure) {
    case FailureClass::kNotSent: return "not_sent";
    case FailureClass::kRejectedTransient: return "rejected_transient";
    case FailureClass::kRejectedPermanent: return "rejected_permanent";
    case FailureClass::kAmbiguous: return "ambiguous";
  }
  return "ambiguous";
}

}  // namespace keel
