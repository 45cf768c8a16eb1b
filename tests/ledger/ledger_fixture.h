// LedgerFile: a migrated ledger file in a temp directory, a hand-set wall clock, and a
// counting demo effect (a charge row per execution) for the MutationLedger tests.
// One per test case; connections it opens are for the calling thread (or handed to one).
#pragma once

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/temp_dir.h"
#include "ledger/database.h"
#include "ledger/mutation_ledger.h"
#include "ledger/schema.h"

namespace keel {

// The backends the ledger tests run on: "sqlite" always, and "postgres" when
// KEEL_TEST_POSTGRES_URL names a server to use (scripts/test starts a throwaway one:
// scripts/pg_test_server). A test takes one with GENERATE(from_range(LedgerBackends())).
inline std::vector<std::string> LedgerBackends() {
  std::vector<std::string> backends = {"sqlite"};
  const char* url = std::getenv("KEEL_TEST_POSTGRES_URL");
  if (url != nullptr && *url != '\0') backends.push_back("postgres");
  return backends;
}

class LedgerFile {
 public:
  // "sqlite": a file in a temp dir. "postgres": a schema of its own (t_<random>) on the
  // server KEEL_TEST_POSTGRES_URL names, dropped at the end.
  explicit LedgerFile(const std::string& backend = "sqlite") {
    if (backend == "postgres") {
      const std::string base = std::getenv("KEEL_TEST_POSTGRES_URL");
      schema_ = "t_" + std::filesystem::path(dir_.path()).filename().string();
      for (char& c : schema_) {
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      std::string error;
      admin_ = Database::Open(base, &error);
      INFO(error);
      REQUIRE(admin_ != nullptr);
      REQUIRE(admin_->Exec("CREATE SCHEMA " + schema_) == "");
      spec_ = base + (base.find('?') == std::string::npos ? "?" : "&") +
              "options=-csearch_path%3D" + schema_;
    } else {
      spec_ = dir_.File("ledger.db");
    }
    auto db = Open();
    std::string error;
    REQUIRE(Migrate(*db, &error) == MigrateStatus::kOk);
  }
  ~LedgerFile() {
    if (admin_) (void)admin_->Exec("DROP SCHEMA " + schema_ + " CASCADE");
  }
  LedgerFile(const LedgerFile&) = delete;
  LedgerFile& operator=(const LedgerFile&) = delete;

  // A new connection to the database.
  std::unique_ptr<Database> Open() const {
    std::string error;
    auto db = Database::Open(path(), &error);
    INFO(error);
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

  // The SQLite file's path, or the PostgreSQL URL (with the schema): what Database::Open takes.
  std::string path() const { return spec_; }

  std::atomic<int64_t> now_ms{1'700'000'000'000};

 private:
  TempDir dir_;
  std::string spec_;
  std::string schema_;
  std::unique_ptr<Database> admin_;  // postgres: creates and drops the schema
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
