#include "server/policy/backoff.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace keel {

int64_t BackoffCeilingMs(const RetrySettings& settings, int retry_number) {
  assert(retry_number >= 1);
  const int64_t base = std::max<int64_t>(settings.base_ms, 0);
  const int64_t cap = std::max<int64_t>(settings.cap_ms, 0);
  const int shift = retry_number - 1;
  // base * 2^shift > cap  <=>  base > floor(cap / 2^shift); checking it this way round
  // never shifts base, so a large n cannot overflow.
  if (shift >= 63 || base > (cap >> shift)) return cap;
  return base << shift;
}

int64_t JitterDelayMs(const RetrySettings& settings, int retry_number, double sample) {
  assert(sample >= 0.0 && sample < 1.0);
  const int64_t ceiling = BackoffCeilingMs(settings, retry_number);
  if (ceiling == 0) return 0;
  const auto delay = static_cast<int64_t>(std::floor(sample * static_cast<double>(ceiling)));
  // A sample just below 1 times a large ceiling can round up to the ceiling itself.
  return std::clamp<int64_t>(delay, 0, ceiling - 1);
}

int64_t RetryDelayMs(const RetrySettings& settings, int retry_number, double sample,
                     std::optional<int64_t> retry_after_ms) {
  const int64_t jitter = JitterDelayMs(settings, retry_number, sample);
  if (!retry_after_ms || *retry_after_ms < 0) return jitter;
  const int64_t hint = std::min(*retry_after_ms, std::max<int64_t>(settings.retry_after_cap_ms, 0));
  return std::max(jitter, hint);
}

}  // namespace keel
