#include "server/upstream/reconnect_backoff.h"

#include <algorithm>
#include <random>

#include "server/policy/backoff.h"

namespace keel {
namespace {

// SplitMix64's finalizer: every bit of the input moves about half the output's bits.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

Duration ReconnectCeiling(int attempt) {
  Duration ceiling = kReconnectFirst;
  for (int n = 1; n < attempt && ceiling < kReconnectCap; ++n) ceiling *= 2;
  return std::min(ceiling, kReconnectCap);
}

Duration ReconnectDelay(int attempt, uint64_t client_id) {
  if (attempt < 1) attempt = 1;
  const Duration ceiling = ReconnectCeiling(attempt);
  const double sample = UnitSample(Mix(client_id ^ Mix(static_cast<uint64_t>(attempt))));
  const auto half = ceiling / 2;
  // [half, ceiling): the sample is below 1, and half + (ceiling - half) * sample < ceiling.
  return half + std::chrono::duration_cast<Duration>((ceiling - half) * sample);
}

uint64_t RandomReconnectId() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device();
}

}  // namespace keel
