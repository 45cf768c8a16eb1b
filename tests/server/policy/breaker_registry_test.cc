// BreakerRegistry (CB-1): one breaker per tool and backend, kept while its settings stay the
// same, replaced by a fresh closed one when a policy reload changes them.
#include "server/policy/breaker_registry.h"

#include <catch2/catch.hpp>

#include "fakes/fake_clock.h"
#include "server/policy/breaker_test_util.h"

namespace keel::breaker_registry_test {
namespace {

TEST_CASE("the registry keeps one breaker per tool and backend", "[breaker]") {
  FakeClock clock;
  BreakerRegistry registry(clock);
  const BreakerSettings settings;
  const auto search_db = registry.For("search", "db", settings);
  CHECK(registry.For("search", "db", settings) == search_db);
  CHECK(registry.For("search", "cache", settings) != search_db);
  CHECK(registry.For("charge", "db", settings) != search_db);
  CHECK(registry.size() == 3);

  test::TripOnFailures(*search_db);  // one backend failing opens only its own breaker
  CHECK(registry.For("search", "cache", settings)->Snapshot().circuit == BreakerState::kClosed);
}

TEST_CASE("changed settings replace a breaker with a fresh closed one", "[breaker]") {
  FakeClock clock;
  BreakerRegistry registry(clock);
  BreakerSettings settings;
  const auto old_breaker = registry.For("search", "db", settings);
  test::TripOnFailures(*old_breaker);
  CHECK(registry.For("search", "db", settings)->Snapshot().circuit == BreakerState::kOpen);

  settings.open_ms = 45000;
  const auto fresh = registry.For("search", "db", settings);
  CHECK(fresh != old_breaker);
  CHECK(fresh->Snapshot().circuit == BreakerState::kClosed);
  CHECK(fresh->settings().open_ms == 45000);
  CHECK(registry.size() == 1);
  CHECK(old_breaker->Snapshot().circuit == BreakerState::kOpen);  // still usable by its holders
}

}  // namespace
}  // namespace keel::breaker_registry_test
