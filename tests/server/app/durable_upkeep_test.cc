// Upkeep of the durable state while keel serves: expired idempotency keys are forgotten at
// start-up and then every ten minutes on a worker. Time is a FakeClock and the pool runs jobs
// inline, so "ten minutes later" is one Advance().
#include "server/app/durable_upkeep.h"

#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include "app_fixtures.h"
#include "fakes/fake_clock.h"

namespace keel::durable_upkeep_test {
namespace {

using app_test::TempKeelDb;
using namespace std::chrono_literals;

// A ledger whose finished keys expire at once (ttl 0), with a way to finish one.
struct ExpiringLedger {
  TempKeelDb db;
  std::shared_ptr<LedgerService> ledger = db.Open("keel-test", /*ttl_ms=*/0);

  void Finish(const std::string& key) {
    ledger->RunKeyed(
        "charge", key, Json{{"cents", 1}}, 1s,
        [](Database&) { return EffectOutcome{TextResult("done")}; },
        [](const KillSwitchState&) { return TextResult("blocked"); });
  }
  bool Remembers(const std::string& key) {
    return ledger->Borrow().ledger().Lookup("charge", key).has_value();
  }
};

TEST_CASE("reaping forgets finished keys past their ttl and says how many") {
  ExpiringLedger store;
  store.Finish("k-1");
  store.Finish("k-2");
  REQUIRE(store.Remembers("k-1"));
  CHECK(ReapExpiredKeys(*store.ledger) == 2);
  CHECK_FALSE(store.Remembers("k-1"));
  CHECK(ReapExpiredKeys(*store.ledger) == 0);
}

TEST_CASE("expired keys are forgotten at start-up and again every ten minutes") {
  ExpiringLedger store;
  FakeClock clock;
  EventLoop loop(clock);
  WorkerPool pool(0);  // inline: the reap runs when the timer submits it
  LedgerReaper reaper(loop, pool, store.ledger);
  store.Finish("before-start");
  reaper.Start();
  CHECK_FALSE(store.Remembers("before-start"));

  store.Finish("while-serving");
  clock.Advance(kReapInterval - 1ms);
  loop.RunOnce(Duration::zero());
  CHECK(store.Remembers("while-serving"));
  clock.Advance(1ms);
  loop.RunOnce(Duration::zero());
  CHECK_FALSE(store.Remembers("while-serving"));

  store.Finish("next-round");
  clock.Advance(kReapInterval);
  loop.RunOnce(Duration::zero());
  CHECK_FALSE(store.Remembers("next-round"));
}

TEST_CASE("a reaper that goes away leaves no timer behind") {
  ExpiringLedger store;
  FakeClock clock;
  EventLoop loop(clock);
  WorkerPool pool(0);
  {
    LedgerReaper reaper(loop, pool, store.ledger);
    reaper.Start();
  }
  store.Finish("after");
  clock.Advance(kReapInterval);
  loop.RunOnce(Duration::zero());  // nothing fires: the reaper's timer was cancelled
  CHECK(store.Remembers("after"));
}

}  // namespace
}  // namespace keel::durable_upkeep_test
