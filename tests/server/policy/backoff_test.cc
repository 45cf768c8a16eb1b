// Backoff (RET-2): full jitter with the cap applied before the jitter, overflow-safe for any
// retry number, and a backend's retry-after hint honoured but clamped.
#include "server/policy/backoff.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <random>

#include <catch2/catch.hpp>

namespace keel::backoff_test {
namespace {

constexpr double kAlmostOne = 0x1.fffffffffffffp-1;  // the largest double below 1

TEST_CASE("backoff ceiling doubles from the base and stops at the cap", "[retry]") {
  RetrySettings settings;  // base 250, cap 1500
  CHECK(BackoffCeilingMs(settings, 1) == 250);
  CHECK(BackoffCeilingMs(settings, 2) == 500);
  CHECK(BackoffCeilingMs(settings, 3) == 1000);
  CHECK(BackoffCeilingMs(settings, 4) == 1500);
  CHECK(BackoffCeilingMs(settings, 5) == 1500);
}

TEST_CASE("backoff ceiling does not overflow for huge retry numbers or bases", "[retry]") {
  RetrySettings settings;
  for (int n : {62, 63, 64, 65, 1000, INT_MAX}) {
    CAPTURE(n);
    CHECK(BackoffCeilingMs(settings, n) == 1500);
  }
  RetrySettings huge{.base_ms = INT64_MAX / 2, .cap_ms = INT64_MAX};
  CHECK(BackoffCeilingMs(huge, 1) == INT64_MAX / 2);
  CHECK(BackoffCeilingMs(huge, 2) == INT64_MAX - 1);
  CHECK(BackoffCeilingMs(huge, 3) == INT64_MAX);
  CHECK(BackoffCeilingMs(huge, INT_MAX) == INT64_MAX);
}

TEST_CASE("jittered delay is floor(sample * ceiling) and stays below the ceiling", "[retry]") {
  RetrySettings settings;
  CHECK(JitterDelayMs(settings, 1, 0.0) == 0);
  CHECK(JitterDelayMs(settings, 1, 0.5) == 125);
  CHECK(JitterDelayMs(settings, 3, 0.25) == 250);
  CHECK(JitterDelayMs(settings, 5, kAlmostOne) == 1499);
  CHECK(JitterDelayMs(settings, 100, kAlmostOne) == 1499);
  RetrySettings zero{.base_ms = 0};
  CHECK(JitterDelayMs(zero, 3, 0.9) == 0);
}

TEST_CASE("UnitSample maps 64 random bits to at least 0 and below 1, never 1", "[retry]") {
  CHECK(UnitSample(0) == 0.0);
  CHECK(UnitSample(UINT64_MAX) == kAlmostOne);
  CHECK(UnitSample(uint64_t{1} << 63) == 0.5);
}

TEST_CASE("a retry-after hint raises the delay but is clamped to retry_after_cap_ms", "[retry]") {
  RetrySettings settings;  // retry_after_cap_ms 5000
  // Jitter for retry 1 at sample 0.5 is 125 ms.
  CHECK(RetryDelayMs(settings, 1, 0.5, std::nullopt) == 125);
  CHECK(RetryDelayMs(settings, 1, 0.5, 800) == 800);
  CHECK(RetryDelayMs(settings, 1, 0.5, 60000) == 5000);
  CHECK(RetryDelayMs(settings, 1, 0.5, 50) == 125);  // never shortens the jitter
  CHECK(RetryDelayMs(settings, 1, 0.5, 0) == 125);
  CHECK(RetryDelayMs(settings, 1, 0.5, -1) == 125);  // invalid: ignored
}

// RET-2 / resilience.md §3.1: with the cap applied before the jitter, retry 5 (ceiling
// min(1500, 250 * 16) = 1500) is uniform on [0, 1500). Randomise-then-cap,
// min(cap, U(0, base * 2^(n-1))), would put 62.5% of the same samples exactly at the cap.
TEST_CASE("full jitter at retry 5 is uniform from 0 up to the cap with no mass at the cap",
          "[retry]") {
  RetrySettings settings;
  std::mt19937_64 rng(20250601);
  constexpr int kSamples = 100000;
  constexpr int kBuckets = 10;
  std::array<int, kBuckets> buckets{};
  double sum = 0;
  int64_t max_delay = 0;
  int at_cap_full = 0;
  int at_cap_then_capped = 0;
  for (int i = 0; i < kSamples; ++i) {
    const double sample = UnitSample(rng());
    const int64_t delay = JitterDelayMs(settings, 5, sample);
    sum += static_cast<double>(delay);
    max_delay = std::max(max_delay, delay);
    ++buckets[static_cast<size_t>(delay * kBuckets / 1500)];
    if (delay >= 1500) ++at_cap_full;
    // The alternative: randomise over the uncapped 250 * 2^4 = 4000, then cap.
    const auto uncapped = static_cast<int64_t>(sample * 4000.0);
    if (std::min<int64_t>(1500, uncapped) == 1500) ++at_cap_then_capped;
  }
  const double mean = sum / kSamples;
  CHECK(mean == Approx(750).epsilon(0.01));
  CHECK(max_delay < 1500);
  CHECK(max_delay >= 1490);
  CHECK(at_cap_full == 0);
  for (int b = 0; b < kBuckets; ++b) {
    CAPTURE(b, buckets[static_cast<size_t>(b)]);
    CHECK(buckets[static_cast<size_t>(b)] == Approx(kSamples / kBuckets).epsilon(0.05));
  }
  CHECK(at_cap_then_capped == Approx(0.625 * kSamples).epsilon(0.02));
}

}  // namespace
}  // namespace keel::backoff_test
