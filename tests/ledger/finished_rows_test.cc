// FinishedRows (DIST-4's replays): finished rows kept in memory for replays — served as
// copies, never past their expiry, never when unfinished or unreadable, the least recently
// used dropped first; and a ledger with the cache answers a replay without reading the
// database, on both backends.
#include "ledger/finished_rows.h"

#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include "ledger_fixture.h"

namespace keel::finished_rows_test {
namespace {

LedgerRecord Finished(const std::string& key, int64_t expires_ms, const std::string& text = "ok") {
  LedgerRecord row;
  row.tool = "charge";
  row.key = key;
  row.fingerprint = "fp";
  row.state = LedgerState::kCommitted;
  row.result = {{"content", {{{"type", "text"}, {"text", text}}}}};
  row.expires_ms = expires_ms;
  return row;
}

}  // namespace

TEST_CASE("a finished row is served as a copy until it expires", "[ledger][DIST-4]") {
  FinishedRows rows;
  rows.Remember(Finished("k1", 1000));
  std::optional<LedgerRecord> found = rows.Find("charge", "k1", 999);
  REQUIRE(found);
  found->result["content"][0]["text"] = "changed by a caller";
  CHECK(rows.Find("charge", "k1", 999)->result["content"][0]["text"] == "ok");
  CHECK_FALSE(rows.Find("charge", "k2", 999));
  CHECK_FALSE(rows.Find("other", "k1", 999));
  CHECK_FALSE(rows.Find("charge", "k1", 1000));  // expired: gone for good
  CHECK(rows.size() == 0);
}

TEST_CASE("rows that are not finished, or whose result cannot be read, are never kept",
          "[ledger][DIST-4]") {
  FinishedRows rows;
  LedgerRecord claim = Finished("claim", 0);
  claim.state = LedgerState::kInProgress;
  rows.Remember(claim);
  LedgerRecord lost = Finished("lost", 0);
  lost.state = LedgerState::kNeedsReconciliation;
  rows.Remember(lost);
  LedgerRecord unreadable = Finished("unreadable", 0);
  unreadable.result = Json();
  rows.Remember(unreadable);
  CHECK(rows.size() == 0);
  LedgerRecord failed = Finished("failed", 0);
  failed.state = LedgerState::kFailed;
  rows.Remember(failed);
  CHECK(rows.Find("charge", "failed", 5));
}

TEST_CASE("beyond its byte budget the least recently used row is dropped first",
          "[ledger][DIST-4]") {
  const std::string big(1000, 'x');
  FinishedRows probe;
  probe.Remember(Finished("k0", 0, big));
  const size_t one = probe.bytes();
  FinishedRows rows(one * 2 + one / 2);  // room for two
  rows.Remember(Finished("k0", 0, big));
  rows.Remember(Finished("k1", 0, big));
  CHECK(rows.Find("charge", "k0", 1));  // k0 used: k1 is now the least recent
  rows.Remember(Finished("k2", 0, big));
  CHECK(rows.size() == 2);
  CHECK(rows.Find("charge", "k0", 1));
  CHECK_FALSE(rows.Find("charge", "k1", 1));
  CHECK(rows.Find("charge", "k2", 1));
  CHECK(rows.bytes() <= one * 2 + one / 2);
}

TEST_CASE("a ledger with finished rows kept answers a replay without reading the database",
          "[ledger][IDEM-4][DIST-4]") {
  const std::string backend = GENERATE(Catch::Generators::from_range(LedgerBackends()));
  LedgerFile file(backend);
  auto db = file.Open();
  FinishedRows finished;
  MutationLedger::Options options = file.OptionsFor("keel-1-me");
  options.finished = &finished;
  MutationLedger ledger(*db, options);
  ChargeEffect charge;
  const std::chrono::milliseconds wait{2000};
  REQUIRE(ledger.RunInDatabase("charge", "k1", "fp", wait, std::ref(charge)).status ==
          MutationLedger::Status::kExecuted);
  REQUIRE(ledger.RunInDatabase("charge", "k1", "fp", wait, std::ref(charge)).status ==
          MutationLedger::Status::kReplayed);  // read from the database, and kept
  CHECK(finished.size() == 1);
  // The row is gone from the database (as only its expiry may do): the kept copy answers.
  auto other = file.Open();
  REQUIRE(other->Exec("DELETE FROM ledger") == "");
  const MutationLedger::Outcome replay =
      ledger.RunInDatabase("charge", "k1", "fp", wait, std::ref(charge));
  CHECK(replay.status == MutationLedger::Status::kReplayed);
  CHECK(replay.result["content"][0]["text"] == "charged 500");
  CHECK(ledger.RunInDatabase("charge", "k1", "other-fp", wait, std::ref(charge)).status ==
        MutationLedger::Status::kMismatch);
  CHECK(charge.runs == 1);
  // Past its expiry the kept copy is not served: the key is looked up (and runs) again.
  file.now_ms += 10'001;
  CHECK(ledger.RunInDatabase("charge", "k1", "fp", wait, std::ref(charge)).status ==
        MutationLedger::Status::kExecuted);
  CHECK(charge.runs == 2);
}

}  // namespace keel::finished_rows_test
