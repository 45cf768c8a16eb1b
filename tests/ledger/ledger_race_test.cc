// IDEM-3: two independent connections racing one key run the effect exactly once.
#include <barrier>
#include <functional>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "ledger/fingerprint.h"
#include "ledger/mutation_ledger.h"
#include "ledger_fixture.h"

using keel::ChargeEffect;
using keel::LedgerFile;
using keel::MutationLedger;
using Status = MutationLedger::Status;

namespace ledger_race_test {

TEST_CASE("IDEM-3 two connections racing one key run the effect once and agree on the result",
          "[ledger][IDEM-3]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto first_db = file.Open();
  auto second_db = file.Open();
  MutationLedger first(*first_db, file.OptionsFor("p1"));
  MutationLedger second(*second_db, file.OptionsFor("p2"));
  const std::string print = keel::Fingerprint("charge", {{"cents", 500}});
  constexpr int kRounds = 50;
  for (int round = 0; round < kRounds; ++round) {
    const std::string key = "race-" + std::to_string(round);
    ChargeEffect effect;
    effect.charge_id = key;
    std::barrier start(2);
    MutationLedger::Outcome a;
    MutationLedger::Outcome b;
    // Each ledger (and its connection) is used by one thread only; the wait budget is far
    // above one commit, so the loser waits for the lock and replays.
    std::thread ta([&] {
      start.arrive_and_wait();
      a = first.RunInDatabase("charge", key, print, std::chrono::seconds(30), std::ref(effect));
    });
    std::thread tb([&] {
      start.arrive_and_wait();
      b = second.RunInDatabase("charge", key, print, std::chrono::seconds(30), std::ref(effect));
    });
    ta.join();
    tb.join();
    INFO("round " << round << ": " << a.error << " / " << b.error);
    REQUIRE(effect.runs.load() == 1);
    REQUIRE(((a.status == Status::kExecuted && b.status == Status::kReplayed) ||
             (a.status == Status::kReplayed && b.status == Status::kExecuted)));
    REQUIRE(a.result == b.result);
    REQUIRE(a.result["structuredContent"]["chargeId"] == key);
    const auto row = first.Lookup("charge", key);
    REQUIRE(row.has_value());
    CHECK(row->executions == 1);
    // The loser counts only if it reached the write lock before the winner committed;
    // otherwise its replay was a plain read.
    CHECK(row->attempts >= 1);
    CHECK(row->attempts <= 2);
  }
  CHECK(keel::CountCharges(*first_db) == kRounds);
}

}  // namespace ledger_race_test
