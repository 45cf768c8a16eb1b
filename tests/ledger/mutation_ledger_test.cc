// Unit tests for ledger/mutation_ledger.h, in-database effects (IDEM-2, IDEM-3, IDEM-4).
#include "ledger/mutation_ledger.h"

#include <functional>
#include <stdexcept>
#include <string>

#include <catch2/catch.hpp>

#include "ledger/fingerprint.h"
#include "ledger_fixture.h"

using keel::ChargeEffect;
using keel::CountCharges;
using keel::EffectOutcome;
using keel::Fingerprint;
using keel::Json;
using keel::LedgerFile;
using keel::LedgerState;
using keel::MutationLedger;
using Status = MutationLedger::Status;
using namespace std::chrono_literals;

namespace mutation_ledger_test {

namespace {

const std::string kTool = "charge";
const Json kArgs = {{"account", "acct-1"}, {"cents", 500}};
const std::string kPrint = Fingerprint(kTool, kArgs);

}  // namespace

TEST_CASE("IDEM-1 two keys with the same arguments run the effect twice", "[ledger][IDEM-1]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger ledger(*db, file.OptionsFor("p1"));
  ChargeEffect effect;
  CHECK(ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(effect)).status ==
        Status::kExecuted);
  CHECK(ledger.RunInDatabase(kTool, "k-2", kPrint, 1s, std::ref(effect)).status ==
        Status::kExecuted);
  CHECK(effect.runs == 2);
  CHECK(CountCharges(*db) == 2);
}

TEST_CASE("IDEM-2 the same key twice runs once and replays the first result", "[ledger][IDEM-2]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger ledger(*db, file.OptionsFor("p1"));
  ChargeEffect effect;
  const auto first = ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(effect));
  const auto second = ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(effect));
  REQUIRE(first.status == Status::kExecuted);
  REQUIRE(second.status == Status::kReplayed);
  CHECK(second.result == first.result);
  CHECK(first.result["structuredContent"]["run"] == 1);
  CHECK(effect.runs == 1);
  CHECK(CountCharges(*db) == 1);
  CHECK(second.record.state == LedgerState::kCommitted);
  CHECK(second.record.executions == 1);
  CHECK(second.record.attempts == 1);  // a replay is a plain read: no write, not counted
}

TEST_CASE("IDEM-2 the same key with other arguments is rejected and runs nothing",
          "[ledger][IDEM-2]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger ledger(*db, file.OptionsFor("p1"));
  ChargeEffect effect;
  REQUIRE(ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(effect)).status ==
          Status::kExecuted);
  const Json other = {{"account", "acct-1"}, {"cents", 900}};
  const auto mismatch =
      ledger.RunInDatabase(kTool, "k-1", Fingerprint(kTool, other), 1s, std::ref(effect));
  CHECK(mismatch.status == Status::kMismatch);
  CHECK(mismatch.result.is_null());
  CHECK_THAT(mismatch.error, Catch::Contains("different arguments"));
  CHECK(effect.runs == 1);
  CHECK(CountCharges(*db) == 1);
  CHECK(mismatch.record.executions == 1);
  CHECK(mismatch.record.attempts == 1);          // answered from a read, like a replay
  CHECK(mismatch.record.fingerprint == kPrint);  // the first intent keeps the key
}

TEST_CASE("IDEM-3 a transient outcome stores nothing and a retry runs the effect",
          "[ledger][IDEM-3]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger ledger(*db, file.OptionsFor("p1"));
  ChargeEffect charge;
  bool transient = true;
  auto effect = [&](keel::Database& d) {
    EffectOutcome outcome = charge(d);
    outcome.transient = transient;
    return outcome;
  };
  const auto first = ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, effect);
  CHECK(first.status == Status::kExecuted);
  CHECK(first.result["structuredContent"]["run"] == 1);
  CHECK(first.record.key.empty());  // no row
  CHECK_FALSE(ledger.Lookup(kTool, "k-1").has_value());
  CHECK(CountCharges(*db) == 0);  // the effect's write rolled back too
  transient = false;
  const auto retry = ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, effect);
  CHECK(retry.status == Status::kExecuted);
  CHECK(retry.record.executions == 1);
  CHECK(charge.runs == 2);
  CHECK(CountCharges(*db) == 1);
}

TEST_CASE("IDEM-2 a failed outcome is stored and replayed as failed", "[ledger][IDEM-2]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger ledger(*db, file.OptionsFor("p1"));
  int runs = 0;
  auto declined = [&](keel::Database&) {
    ++runs;
    EffectOutcome outcome;
    outcome.result = {{"isError", true}, {"content", {{{"type", "text"}, {"text", "declined"}}}}};
    outcome.failed = true;
    return outcome;
  };
  const auto first = ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, declined);
  const auto again = ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, declined);
  CHECK(first.status == Status::kExecuted);
  CHECK(first.record.state == LedgerState::kFailed);
  CHECK(again.status == Status::kReplayed);
  CHECK(again.record.state == LedgerState::kFailed);
  CHECK(again.result == first.result);
  CHECK(again.result["isError"] == true);
  CHECK(runs == 1);
}

TEST_CASE("IDEM-3 a throwing effect rolls back its writes and leaves no row", "[ledger][IDEM-3]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger ledger(*db, file.OptionsFor("p1"));
  ChargeEffect charge;
  auto throwing = [&](keel::Database& d) -> EffectOutcome {
    charge(d);  // the INSERT happens, then the effect fails
    throw std::runtime_error("backend exploded");
  };
  const auto outcome = ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, throwing);
  CHECK(outcome.status == Status::kError);
  CHECK_THAT(outcome.error, Catch::Contains("backend exploded"));
  CHECK(CountCharges(*db) == 0);
  CHECK_FALSE(ledger.Lookup(kTool, "k-1").has_value());
  CHECK(ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(charge)).status ==
        Status::kExecuted);
  CHECK(CountCharges(*db) == 1);
}

TEST_CASE("IDEM-4 a committed record and its result survive close and reopen", "[ledger][IDEM-4]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  ChargeEffect effect;
  Json first_result;
  {
    auto db = file.Open();
    MutationLedger ledger(*db, file.OptionsFor("p1"));
    first_result = ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(effect)).result;
  }
  auto db = file.Open();
  MutationLedger ledger(*db, file.OptionsFor("p2"));
  const auto replay = ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(effect));
  CHECK(replay.status == Status::kReplayed);
  CHECK(replay.result == first_result);
  CHECK(replay.record.owner == "p1");
  CHECK(effect.runs == 1);
  CHECK(CountCharges(*db) == 1);
}

TEST_CASE("IDEM-4 mutating a returned result does not change the next replay", "[ledger][IDEM-4]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger ledger(*db, file.OptionsFor("p1"));
  ChargeEffect effect;
  auto first = ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(effect));
  const Json pristine = first.result;
  first.result["structuredContent"]["chargeId"] = "tampered";
  first.record.result = "tampered";
  auto replay = ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(effect));
  CHECK(replay.result == pristine);
  replay.result.clear();
  CHECK(ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(effect)).result == pristine);
  CHECK(ledger.Lookup(kTool, "k-1")->result == pristine);
}

TEST_CASE("IDEM-3 a held write lock and no wait budget answer busy, then the call runs",
          "[ledger][IDEM-3]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto holder = file.Open();
  auto db = file.Open();
  MutationLedger ledger(*db, file.OptionsFor("p1"));
  ChargeEffect effect;
  {
    keel::WriteTransaction lock(*holder);
    const auto busy = ledger.RunInDatabase(kTool, "k-1", kPrint, 0ms, std::ref(effect));
    CHECK(busy.status == Status::kBusy);
    CHECK(busy.retry_after_ms > 0);
    CHECK(ledger.Claim("remote", "k-1", kPrint, 0ms).status == Status::kBusy);
  }
  CHECK(effect.runs == 0);
  CHECK(ledger.RunInDatabase(kTool, "k-1", kPrint, 0ms, std::ref(effect)).status ==
        Status::kExecuted);
}

TEST_CASE("Lookup returns every field of the row", "[ledger][IDEM-2]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger ledger(*db, file.OptionsFor("p1"));
  ChargeEffect effect;
  const int64_t start = file.now_ms;
  ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(effect));
  file.now_ms += 7;
  ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(effect));
  CHECK_FALSE(ledger.Lookup(kTool, "missing").has_value());
  CHECK_FALSE(ledger.Lookup("other-tool", "k-1").has_value());  // keys are per tool
  const auto row = ledger.Lookup(kTool, "k-1");
  REQUIRE(row.has_value());
  CHECK(row->tool == kTool);
  CHECK(row->key == "k-1");
  CHECK(row->fingerprint == kPrint);
  CHECK(row->state == LedgerState::kCommitted);
  CHECK(row->result["structuredContent"]["chargeId"] == "ch-1");
  CHECK(row->owner == "p1");
  CHECK(row->lease_until_ms == 0);
  CHECK(row->attempts == 1);
  CHECK(row->executions == 1);
  CHECK(row->operation_id == "ch-1");
  CHECK(row->created_ms == start);
  CHECK(row->updated_ms == start);  // a replay changes no state
  CHECK(row->expires_ms == start + 10'000);
}

TEST_CASE("a stored result nested deeper than 128 levels reads as unreadable, not a crash",
          "[ledger][IDEM-2]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger ledger(*db, file.OptionsFor("p1"));
  ChargeEffect effect;
  REQUIRE(ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(effect)).status ==
          Status::kExecuted);
  // Anyone can write the file: a result 100,000 levels deep.
  const std::string deep = R"({"content":[],"structuredContent":{"a":)" + std::string(100000, '[') +
                           std::string(100000, ']') + "}}";
  db->Prepare("UPDATE ledger SET result = ?1 WHERE key = 'k-1'").Bind(1, deep).Run();

  const auto row = ledger.Lookup(kTool, "k-1");
  REQUIRE(row.has_value());
  CHECK(row->state == LedgerState::kCommitted);
  CHECK(row->result.is_null());
  const auto replay = ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(effect));
  CHECK(replay.status == Status::kReplayed);
  CHECK(replay.result.is_null());
  CHECK(effect.runs == 1);
}

TEST_CASE("IDEM-2 ReapExpired deletes only terminal rows past their expiry", "[ledger][IDEM-2]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger ledger(*db, file.OptionsFor("p1"));
  ChargeEffect effect;
  auto failed = [](keel::Database&) {
    EffectOutcome outcome;
    outcome.result = {{"isError", true}};
    outcome.failed = true;
    return outcome;
  };
  ledger.RunInDatabase(kTool, "old-ok", kPrint, 1s, std::ref(effect));
  ledger.RunInDatabase(kTool, "old-failed", kPrint, 1s, failed);
  ledger.Claim(kTool, "old-claim", kPrint, 1s);
  ledger.Claim(kTool, "old-unknown", kPrint, 1s);
  ledger.MarkNeedsReconciliation(kTool, "old-unknown");
  file.now_ms += 5'000;
  ledger.RunInDatabase(kTool, "young", kPrint, 1s, std::ref(effect));
  file.now_ms += 5'000;  // the old terminal rows expire exactly now
  CHECK(ledger.ReapExpired() == 2);
  CHECK_FALSE(ledger.Lookup(kTool, "old-ok").has_value());
  CHECK_FALSE(ledger.Lookup(kTool, "old-failed").has_value());
  CHECK(ledger.Lookup(kTool, "young").has_value());
  CHECK(ledger.Lookup(kTool, "old-claim").has_value());
  CHECK(ledger.Lookup(kTool, "old-unknown").has_value());
  CHECK(ledger.ReapExpired() == 0);
  // A reaped key is new again: Stripe's "a new request if a key is reused after pruning".
  CHECK(ledger.RunInDatabase(kTool, "old-ok", kPrint, 1s, std::ref(effect)).status ==
        Status::kExecuted);
}

}  // namespace mutation_ledger_test
