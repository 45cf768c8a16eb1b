// A COMMIT whose answer is lost (DIST-3): the connection dies while COMMIT runs, so the
// writer cannot tell whether it committed. The ledger reads the key back and finds out —
// never guesses: committed -> the outcome as if the answer had come (the effect ran once);
// not committed -> an error saying nothing happened, and the retry runs it once. The fault
// is injected at the COMMIT by a forwarding Database (fakes/commit_fault_database.h), on
// both backends.
#include <chrono>
#include <memory>

#include <catch2/catch.hpp>

#include "fakes/commit_fault_database.h"
#include "ledger/commit_group.h"
#include "ledger/mutation_ledger.h"
#include "ledger_fixture.h"

namespace keel::commit_lost_test {
namespace {

constexpr std::chrono::milliseconds kWait{2000};
using Fault = CommitFaultDatabase::Fault;

struct Rig {
  explicit Rig(const std::string& backend) : file(backend) {
    auto faulty = std::make_unique<CommitFaultDatabase>(file.Open());
    fault = faulty.get();
    group = std::make_unique<CommitGroup>(nullptr, std::move(faulty));
    own = file.Open();
    MutationLedger::Options options = file.OptionsFor("keel-1-me");
    options.group = group.get();
    ledger = std::make_unique<MutationLedger>(*own, options);
  }
  LedgerFile file;
  CommitFaultDatabase* fault = nullptr;
  std::unique_ptr<CommitGroup> group;
  std::unique_ptr<Database> own;
  std::unique_ptr<MutationLedger> ledger;
};

}  // namespace

TEST_CASE(
    "a keyed write whose COMMIT committed but lost its answer is found committed: it ran "
    "once and a retry replays",
    "[ledger][IDEM-3][DIST-3]") {
  const std::string backend = GENERATE(Catch::Generators::from_range(LedgerBackends()));
  Rig rig(backend);
  ChargeEffect charge;
  rig.fault->arm(Fault::kCommittedAnswerLost);
  const MutationLedger::Outcome first =
      rig.ledger->RunInDatabase("charge", "k1", "fp", kWait, std::ref(charge));
  INFO(first.error);
  CHECK(first.status == MutationLedger::Status::kExecuted);
  CHECK(first.result["content"][0]["text"] == "charged 500");
  CHECK(first.record.executions == 1);
  const MutationLedger::Outcome retry =
      rig.ledger->RunInDatabase("charge", "k1", "fp", kWait, std::ref(charge));
  CHECK(retry.status == MutationLedger::Status::kReplayed);
  CHECK(charge.runs == 1);
  CHECK(CountCharges(*rig.own) == 1);
}

TEST_CASE(
    "a keyed write whose connection was lost before COMMIT is found not committed: an error "
    "saying nothing happened, and the retry runs it once",
    "[ledger][IDEM-3][DIST-3]") {
  const std::string backend = GENERATE(Catch::Generators::from_range(LedgerBackends()));
  Rig rig(backend);
  ChargeEffect charge;
  rig.fault->arm(Fault::kLostBeforeCommit);
  const MutationLedger::Outcome first =
      rig.ledger->RunInDatabase("charge", "k1", "fp", kWait, std::ref(charge));
  CHECK(first.status == MutationLedger::Status::kError);
  CHECK_THAT(first.error, Catch::Contains("did not commit") && Catch::Contains("nothing"));
  CHECK_FALSE(rig.ledger->Lookup("charge", "k1"));
  CHECK(CountCharges(*rig.own) == 0);
  const MutationLedger::Outcome retry =
      rig.ledger->RunInDatabase("charge", "k1", "fp", kWait, std::ref(charge));
  CHECK(retry.status == MutationLedger::Status::kExecuted);
  CHECK(CountCharges(*rig.own) == 1);
}

TEST_CASE(
    "a claim whose COMMIT lost its answer is found: committed -> ours, run it, and not "
    "committed -> nothing claimed",
    "[ledger][IDEM-5][DIST-3]") {
  const std::string backend = GENERATE(Catch::Generators::from_range(LedgerBackends()));
  Rig rig(backend);
  rig.fault->arm(Fault::kCommittedAnswerLost);
  const MutationLedger::Outcome mine = rig.ledger->Claim("restart", "k1", "fp", kWait);
  CHECK(mine.status == MutationLedger::Status::kExecuted);
  CHECK(mine.record.state == LedgerState::kInProgress);
  CHECK(mine.record.owner == "keel-1-me");

  rig.fault->arm(Fault::kLostBeforeCommit);
  const MutationLedger::Outcome lost = rig.ledger->Claim("restart", "k2", "fp", kWait);
  CHECK(lost.status == MutationLedger::Status::kError);
  CHECK_FALSE(rig.ledger->Lookup("restart", "k2"));
}

}  // namespace keel::commit_lost_test
