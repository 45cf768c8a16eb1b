// Unit tests for ledger/mutation_ledger.h, remote effects: claim, outcome, reconcile (IDEM-5).
#include <functional>
#include <string>

#include <catch2/catch.hpp>

#include "ledger/fingerprint.h"
#include "ledger/mutation_ledger.h"
#include "ledger_fixture.h"

using keel::ChargeEffect;
using keel::Fingerprint;
using keel::Json;
using keel::LedgerFile;
using keel::LedgerState;
using keel::MutationLedger;
using Status = MutationLedger::Status;
using namespace std::chrono_literals;

namespace remote_claim_test {

namespace {

const std::string kTool = "remote_charge";
const std::string kPrint = Fingerprint(kTool, {{"cents", 500}});
const Json kResult = {{"content", {{{"type", "text"}, {"text", "charged"}}}}};

}  // namespace

TEST_CASE("IDEM-5 a claim commits in_progress, completes, then replays", "[ledger][IDEM-5]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger ledger(*db, file.OptionsFor("p1"));
  const int64_t start = file.now_ms;
  const auto claim = ledger.Claim(kTool, "k-1", kPrint, 1s);
  REQUIRE(claim.status == Status::kExecuted);
  CHECK(claim.record.state == LedgerState::kInProgress);
  CHECK(claim.record.owner == "p1");
  CHECK(claim.record.lease_until_ms == start + 5'000);
  CHECK(claim.record.executions == 1);
  CHECK(claim.record.result.is_null());
  CHECK(claim.record.expires_ms == 0);  // never reaped while in progress

  file.now_ms += 100;
  REQUIRE(ledger.Complete(kTool, "k-1", kResult, /*failed=*/false, "op-77"));
  const auto row = ledger.Lookup(kTool, "k-1");
  CHECK(row->state == LedgerState::kCommitted);
  CHECK(row->operation_id == "op-77");
  CHECK(row->lease_until_ms == 0);
  CHECK(row->updated_ms == start + 100);
  CHECK(row->expires_ms == start + 100 + 10'000);

  const auto replay = ledger.Claim(kTool, "k-1", kPrint, 1s);
  CHECK(replay.status == Status::kReplayed);
  CHECK(replay.result == kResult);
  CHECK(replay.record.executions == 1);
  CHECK(replay.record.attempts == 1);                              // the replay was a plain read
  CHECK_FALSE(ledger.Complete(kTool, "k-1", kResult, false, ""));  // no longer a claim
}

TEST_CASE("IDEM-5 a released claim is dropped and the next claim runs", "[ledger][IDEM-5]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger ledger(*db, file.OptionsFor("p1"));
  REQUIRE(ledger.Claim(kTool, "k-1", kPrint, 1s).status == Status::kExecuted);
  CHECK(ledger.Release(kTool, "k-1"));
  CHECK_FALSE(ledger.Lookup(kTool, "k-1").has_value());
  CHECK_FALSE(ledger.Release(kTool, "k-1"));
  CHECK(ledger.Claim(kTool, "k-1", kPrint, 1s).status == Status::kExecuted);
}

TEST_CASE("IDEM-5 only the owner completes, releases or marks its claim", "[ledger][IDEM-5]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger mine(*db, file.OptionsFor("p1"));
  MutationLedger theirs(*db, file.OptionsFor("p2"));
  REQUIRE(mine.Claim(kTool, "k-1", kPrint, 1s).status == Status::kExecuted);
  CHECK_FALSE(theirs.Complete(kTool, "k-1", kResult, false, ""));
  CHECK_FALSE(theirs.Release(kTool, "k-1"));
  CHECK_FALSE(theirs.MarkNeedsReconciliation(kTool, "k-1"));
  CHECK(mine.Lookup(kTool, "k-1")->state == LedgerState::kInProgress);
  CHECK_FALSE(mine.Complete(kTool, "missing", kResult, false, ""));
}

TEST_CASE("IDEM-5 an unknown outcome needs reconciliation until the owner records it",
          "[ledger][IDEM-5]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger mine(*db, file.OptionsFor("p1"));
  MutationLedger theirs(*db, file.OptionsFor("p2"));
  ChargeEffect effect;
  REQUIRE(mine.Claim(kTool, "k-1", kPrint, 1s).status == Status::kExecuted);
  REQUIRE(mine.MarkNeedsReconciliation(kTool, "k-1"));
  CHECK_FALSE(mine.MarkNeedsReconciliation(kTool, "k-1"));  // not in progress any more
  CHECK(mine.Claim(kTool, "k-1", kPrint, 1s).status == Status::kNeedsReconciliation);
  const auto blocked = theirs.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(effect));
  CHECK(blocked.status == Status::kNeedsReconciliation);
  CHECK_THAT(blocked.error, Catch::Contains("reconcile"));
  CHECK(effect.runs == 0);
  // Reconciled by key: the backend says it happened.
  REQUIRE(mine.Complete(kTool, "k-1", kResult, false, "op-1"));
  CHECK(theirs.Claim(kTool, "k-1", kPrint, 1s).status == Status::kReplayed);
  CHECK(mine.Lookup(kTool, "k-1")->attempts == 3);  // the final replay was a plain read
}

TEST_CASE("IDEM-5 an expired claim of another owner turns needs_reconciliation, never re-runs",
          "[ledger][IDEM-5]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger dead(*db, file.OptionsFor("p-dead"));
  MutationLedger alive(*db, file.OptionsFor("p-alive"));
  ChargeEffect effect;
  REQUIRE(dead.Claim(kTool, "k-1", kPrint, 1s).status == Status::kExecuted);
  file.now_ms += 5'000;  // the lease ends exactly now
  const auto outcome = alive.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(effect));
  CHECK(outcome.status == Status::kNeedsReconciliation);
  CHECK(outcome.record.state == LedgerState::kNeedsReconciliation);
  CHECK(outcome.record.updated_ms == file.now_ms);
  CHECK(outcome.record.executions == 1);
  CHECK(effect.runs == 0);
  CHECK(alive.Lookup(kTool, "k-1")->state == LedgerState::kNeedsReconciliation);  // committed
  CHECK(alive.Claim(kTool, "k-1", kPrint, 1s).status == Status::kNeedsReconciliation);
}

TEST_CASE("IDEM-5 a live claim answers in progress with the time left on its lease",
          "[ledger][IDEM-5]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger holder(*db, file.OptionsFor("p1"));
  MutationLedger other(*db, file.OptionsFor("p2"));
  ChargeEffect effect;
  REQUIRE(holder.Claim(kTool, "k-1", kPrint, 1s).status == Status::kExecuted);
  file.now_ms += 1'500;
  const auto busy = other.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(effect));
  CHECK(busy.status == Status::kInProgress);
  CHECK(busy.retry_after_ms == 3'500);
  CHECK(busy.record.state == LedgerState::kInProgress);
  CHECK(effect.runs == 0);
  // Our own claim: still running here, so in progress even past the lease, polled sooner.
  const auto own = holder.Claim(kTool, "k-1", kPrint, 1s);
  CHECK(own.status == Status::kInProgress);
  CHECK(own.retry_after_ms == 1'000);
  file.now_ms += 10'000;
  CHECK(holder.Claim(kTool, "k-1", kPrint, 1s).retry_after_ms == 1);
  CHECK(holder.Lookup(kTool, "k-1")->attempts == 4);
}

TEST_CASE("IDEM-5 a claimed key with other arguments is a mismatch, whatever its state",
          "[ledger][IDEM-5][IDEM-2]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger ledger(*db, file.OptionsFor("p1"));
  const std::string other = Fingerprint(kTool, {{"cents", 900}});
  REQUIRE(ledger.Claim(kTool, "k-1", kPrint, 1s).status == Status::kExecuted);
  CHECK(ledger.Claim(kTool, "k-1", other, 1s).status == Status::kMismatch);
  REQUIRE(ledger.MarkNeedsReconciliation(kTool, "k-1"));
  CHECK(ledger.Claim(kTool, "k-1", other, 1s).status == Status::kMismatch);
  CHECK(ledger.Claim(kTool, "k-1", "", 1s).status == Status::kError);  // no fingerprint
}

TEST_CASE("IDEM-5 a claim records its process run and adoption keeps it", "[ledger][IDEM-5]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger dead(*db, file.OptionsFor("p-dead"));
  MutationLedger next(*db, file.OptionsFor("p-next"));
  const keel::LedgerAttempt starting{"boot-1", 0, 0};
  const auto claim = dead.Claim(kTool, "k-1", kPrint, 1s, std::nullopt, starting);
  REQUIRE(claim.status == Status::kExecuted);
  CHECK(claim.record.attempt == starting);
  const keel::LedgerAttempt spawned{"boot-1", 4242, 987654};
  CHECK_FALSE(next.RecordAttempt(kTool, "k-1", spawned));  // not its claim
  REQUIRE(dead.RecordAttempt(kTool, "k-1", spawned));
  CHECK(next.Lookup(kTool, "k-1")->attempt == spawned);
  REQUIRE(next.Adopt(kTool, "k-1", "p-dead", /*owner_gone=*/true));
  const auto adopted = next.Lookup(kTool, "k-1");
  CHECK(adopted->owner == "p-next");
  CHECK(adopted->attempt == spawned);  // the next reconciler still sees the run
  CHECK_FALSE(next.RecordAttempt(kTool, "k-1", starting));  // no longer in progress
}

TEST_CASE("IDEM-5 a claim or effect without a process records no attempt", "[ledger][IDEM-5]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  MutationLedger ledger(*db, file.OptionsFor("p1"));
  ChargeEffect effect;
  CHECK_FALSE(ledger.Claim(kTool, "k-1", kPrint, 1s).record.attempt.has_value());
  CHECK_FALSE(
      ledger.RunInDatabase(kTool, "k-2", kPrint, 1s, std::ref(effect)).record.attempt.has_value());
}

}  // namespace remote_claim_test
