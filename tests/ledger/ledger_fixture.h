// LedgerFile: a migrated ledger file in a temp directory, a hand-set wall clock, and a
// counting demo effect (a charge row per execution) for the MutationLedger tests.
// One per test case; connections it opens are for the calling thread (or handed to one).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "fakes/temp_dir.h"
#include "ledger/database.h"
#include "ledger/mutation_ledger.h"
#include "ledger/schema.h"

namespace keel {

class LedgerFile {
 public:
  LedgerFile() {
    auto db = Open();
    std::string error;
    REQUIRE(Migrate(*db, &error) == MigrateStatus::kOk);
  }

  // A new connection to the file.
  std::unique_ptr<Database> Open() const {
    std::string error;
    auto db = Database::Open(path(), &error);
    REQUIRE(db != nullptr);
    return db;
  }

  // Ledger options for `owner`, reading the hand-set clock `now_ms`.
  MutationLedger::Options OptionsFor(const std::string& owner) {
    MutationLedger::Options options;
    options.owner = owner;
    options.ttl_ms = 10'000;
    options.lease_ms = 5'000;
    options.now_ms = [this] { return now_ms.load(); };
    return options;
  }

  std::string path() const { return dir_.File("ledger.db"); }

  std::atomic<int64_t> now_ms{1'700'000'000'000};

 private:
  TempDir dir_;
};

// A charge effect: inserts one `charges` row and counts its runs. Safe to share between
// threads (the counter is atomic; the row goes through the connection it is given).
struct ChargeEffect {
  std::atomic<int> runs{0};
  std::string charge_id = "ch-1";

  EffectOutcome operator()(Database& db) {
    const int run = ++runs;
    db.Prepare("INSERT INTO charges VALUES(?1, 'acct-1', 500, NULL, 0)")
        .Bind(1, charge_id + "-" + std::to_string(run))
        .Run();
    EffectOutcome outcome;
    outcome.result = {{"content", {{{"type", "text"}, {"text", "charged 500"}}}},
                      {"structuredContent", {{"chargeId", charge_id}, {"run", run}}}};
    outcome.operation_id = charge_id;
    return outcome;
  }
};

inline int64_t CountCharges(Database& db) {
  Statement count = db.Prepare("SELECT count(*) FROM charges");
  REQUIRE(count.Step());
  return count.Int64(0);
}

}  // namespace keel
