#include "server/policy/policy_types.h"

namespace keel {

std::string_view EffectClassName(EffectClass effect) {
  switch (effect) {
    case EffectClass::kRead:
      return "read";
    case EffectClass::kExpensiveRead:
      return "expensive_read";
    case EffectClass::kIdempotentWrite:
      return "idempotent_write";
    case EffectClass::kUnsafeWrite:
      return "unsafe_write";
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
    case FailureClass::kNotSent:
      return "not_sent";
    case FailureClass::kRejectedTransient:
      return "rejected_transient";
    case FailureClass::kRejectedPermanent:
      return "rejected_permanent";
    case FailureClass::kAmbiguous:
      return "ambiguous";
  }
  return "ambiguous";
}

std::string_view BreakerModeName(BreakerMode mode) {
  switch (mode) {
    case BreakerMode::kNormal:
      return "normal";
    case BreakerMode::kForcedOpen:
      return "forced_open";
    case BreakerMode::kDisabled:
      return "disabled";
    case BreakerMode::kMetricsOnly:
      return "metrics_only";
  }
  return "normal";
}

std::optional<BreakerMode> ParseBreakerMode(std::string_view name) {
  for (BreakerMode mode : {BreakerMode::kNormal, BreakerMode::kForcedOpen, BreakerMode::kDisabled,
                           BreakerMode::kMetricsOnly}) {
    if (BreakerModeName(mode) == name) return mode;
  }
  return std::nullopt;
}

}  // namespace keel
