// Reads of a ledger whose pages are damaged (IDEM-4, IDEM-5): a read that cannot be done
// says so (SqliteError), never "no such key" or "nothing unsettled".
#include <functional>
#include <string>

#include <catch2/catch.hpp>

#include "fakes/damaged_pages.h"
#include "ledger/fingerprint.h"
#include "ledger/mutation_ledger.h"
#include "ledger_fixture.h"

using keel::ChargeEffect;
using keel::DamageTable;
using keel::Fingerprint;
using keel::LedgerFile;
using keel::MutationLedger;
using keel::SqliteError;
using Status = MutationLedger::Status;
using namespace std::chrono_literals;

namespace damaged_ledger_test {

namespace {

const std::string kTool = "charge";
const std::string kPrint = Fingerprint(kTool, {{"cents", 500}});

// A ledger file with a committed key "k-1" and an unsettled claim "k-2", whose ledger table
// is then damaged on disk.
void WriteKeysThenDamage(LedgerFile& file) {
  {
    auto db = file.Open();
    MutationLedger ledger(*db, file.OptionsFor("p1"));
    ChargeEffect effect;
    REQUIRE(ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(effect)).status ==
            Status::kExecuted);
    REQUIRE(ledger.Claim(kTool, "k-2", kPrint, 1s).status == Status::kExecuted);
  }
  DamageTable(file.path(), "ledger");
}

}  // namespace

TEST_CASE("a lookup in a damaged ledger fails instead of saying the key never ran", "[ledger]") {
  LedgerFile file;
  WriteKeysThenDamage(file);
  auto db = file.Open();
  MutationLedger ledger(*db, file.OptionsFor("p2"));
  CHECK_THROWS_AS(ledger.Lookup(kTool, "k-1"), SqliteError);
  // The write path gives the same answer for the same key: an error, not a fresh run.
  ChargeEffect effect;
  CHECK(ledger.RunInDatabase(kTool, "k-1", kPrint, 1s, std::ref(effect)).status == Status::kError);
  CHECK(effect.runs == 0);
}

TEST_CASE("listing the unsettled keys of a damaged ledger fails instead of finding none",
          "[ledger]") {
  LedgerFile file;
  WriteKeysThenDamage(file);
  auto db = file.Open();
  MutationLedger ledger(*db, file.OptionsFor("p2"));
  CHECK_THROWS_AS(ledger.Unsettled(kTool, 10), SqliteError);
}

}  // namespace damaged_ledger_test
