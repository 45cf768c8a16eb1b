// Unit tests for ledger/schema.h: versioned migrations through PRAGMA user_version.
#include "ledger/schema.h"

#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "fakes/temp_dir.h"
#include "ledger/database.h"

using keel::Database;
using keel::Migrate;
using keel::MigrateStatus;

namespace schema_test {

namespace {

std::unique_ptr<Database> OpenFresh(const keel::TempDir& dir) {
  std::string error;
  auto db = Database::Open(dir.File("schema.db"), &error);
  REQUIRE(db != nullptr);
  return db;
}

int64_t CountTables(Database& db) {
  keel::Statement count = db.Prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'table'");
  REQUIRE(count.Step());
  return count.Int64(0);
}

// Back to the ledger table of versions 1 to 4.
constexpr const char* kDropAttemptColumns =
    "ALTER TABLE ledger DROP COLUMN attempt_boot_id; "
    "ALTER TABLE ledger DROP COLUMN attempt_pgid; "
    "ALTER TABLE ledger DROP COLUMN attempt_start_ticks; ";
// What migration 6 added (a parked task's questions and answers).
constexpr const char* kDropInputColumns =
    "ALTER TABLE tasks DROP COLUMN input_requests; "
    "ALTER TABLE tasks DROP COLUMN input_answers; ";

}  // namespace

TEST_CASE("migrating a fresh file creates the ledger, demo and task tables at the current version",
          "[ledger]") {
  keel::TempDir dir;
  auto db = OpenFresh(dir);
  std::string error;
  REQUIRE(Migrate(*db, &error) == MigrateStatus::kOk);
  CHECK(error.empty());
  CHECK(db->Pragma("user_version") == std::to_string(keel::SchemaVersion()));
  CHECK(keel::SchemaVersion() == 6);
  for (const char* table : {"ledger", "accounts", "charges", "inventory", "reservations", "tasks",
                            "settings", "deploy_operations"}) {
    CAPTURE(table);
    CHECK(db->Exec(std::string("SELECT * FROM ") + table) == "");
  }
  CHECK(db->Exec("INSERT INTO ledger(tool, key, fingerprint, state, owner, created_ms, "
                 "updated_ms) VALUES('t', 'k', 'f', 'in_progress', 'o', 1, 1)") == "");
  CHECK_THAT(db->Exec("INSERT INTO ledger(tool, key, fingerprint, state, owner, created_ms, "
                      "updated_ms) VALUES('t', 'k2', 'f', 'done', 'o', 1, 1)"),
             Catch::Contains("CHECK"));
}

TEST_CASE("migrating twice is a no-op and keeps the data", "[ledger]") {
  keel::TempDir dir;
  auto db = OpenFresh(dir);
  std::string error;
  REQUIRE(Migrate(*db, &error) == MigrateStatus::kOk);
  REQUIRE(db->Exec("INSERT INTO accounts VALUES('acct-1', 1000)") == "");
  const int64_t tables = CountTables(*db);
  REQUIRE(Migrate(*db, &error) == MigrateStatus::kOk);
  CHECK(CountTables(*db) == tables);
  keel::Statement balance = db->Prepare("SELECT balance_cents FROM accounts");
  REQUIRE(balance.Step());
  CHECK(balance.Int64(0) == 1000);
}

TEST_CASE("a file from a newer keel is refused and left untouched", "[ledger]") {
  keel::TempDir dir;
  auto db = OpenFresh(dir);
  REQUIRE(db->Exec("PRAGMA user_version = 99") == "");
  std::string error;
  CHECK(Migrate(*db, &error) == MigrateStatus::kNewerThanBinary);
  CHECK_THAT(error, Catch::Contains("99"));
  CHECK(db->Pragma("user_version") == "99");
  CHECK(CountTables(*db) == 0);
}

TEST_CASE("a failing migration step rolls back whole and reports the step", "[ledger]") {
  keel::TempDir dir;
  auto db = OpenFresh(dir);
  // A table the first step also creates makes it fail halfway.
  REQUIRE(db->Exec("CREATE TABLE reservations(x INTEGER)") == "");
  std::string error;
  CHECK(Migrate(*db, &error) == MigrateStatus::kError);
  CHECK_THAT(error, Catch::Contains("migration 1"));
  CHECK(db->Pragma("user_version") == "0");
  CHECK(CountTables(*db) == 1);  // the ledger table created earlier in the step is gone
}

TEST_CASE("a version 1 file gains the tasks, settings and deployment tables and keeps its data",
          "[ledger]") {
  keel::TempDir dir;
  auto db = OpenFresh(dir);
  std::string error;
  REQUIRE(Migrate(*db, &error) == MigrateStatus::kOk);
  // Back to what a version 1 keel left: no tasks table, user_version 1.
  REQUIRE(db->Exec("DROP TABLE tasks; DROP TABLE settings; DROP TABLE deploy_jobs; "
                   "DROP TABLE deploy_operations; " +
                   std::string(kDropAttemptColumns) + "PRAGMA user_version = 1;") == "");
  REQUIRE(db->Exec("INSERT INTO accounts VALUES('acct-1', 1000)") == "");
  REQUIRE(Migrate(*db, &error) == MigrateStatus::kOk);
  CHECK(db->Pragma("user_version") == std::to_string(keel::SchemaVersion()));
  CHECK(db->Exec("SELECT * FROM tasks") == "");
  CHECK(db->Exec("SELECT * FROM settings") == "");
  keel::Statement balance = db->Prepare("SELECT balance_cents FROM accounts");
  REQUIRE(balance.Step());
  CHECK(balance.Int64(0) == 1000);
}

TEST_CASE("a version 4 ledger gains the attempt columns and its claims record no attempt",
          "[ledger]") {
  keel::TempDir dir;
  auto db = OpenFresh(dir);
  std::string error;
  REQUIRE(Migrate(*db, &error) == MigrateStatus::kOk);
  REQUIRE(db->Exec(std::string(kDropAttemptColumns) + kDropInputColumns +
                   "PRAGMA user_version = 4;") == "");
  REQUIRE(db->Exec("INSERT INTO ledger(tool, key, fingerprint, state, owner, created_ms, "
                   "updated_ms) VALUES('t', 'k', 'f', 'in_progress', 'o', 1, 1)") == "");
  REQUIRE(Migrate(*db, &error) == MigrateStatus::kOk);
  CHECK(db->Pragma("user_version") == std::to_string(keel::SchemaVersion()));
  keel::Statement row =
      db->Prepare("SELECT attempt_boot_id, attempt_pgid, attempt_start_ticks FROM ledger");
  REQUIRE(row.Step());
  CHECK(row.IsNull(0));
  CHECK(row.Int64(1) == 0);
  CHECK(row.Int64(2) == 0);
}

TEST_CASE("a version 5 file's tasks gain the input columns, empty for every task", "[ledger]") {
  keel::TempDir dir;
  auto db = OpenFresh(dir);
  std::string error;
  REQUIRE(Migrate(*db, &error) == MigrateStatus::kOk);
  REQUIRE(db->Exec(std::string(kDropInputColumns) + "PRAGMA user_version = 5;") == "");
  REQUIRE(db->Exec("INSERT INTO tasks(task_id, tool, status, created_ms, updated_ms, "
                   "poll_interval_ms, request, owner, owner_pid, lease_until_ms) "
                   "VALUES('t1', 'job', 'working', 1, 1, 1000, '{}', 'o', 1, 1)") == "");
  REQUIRE(Migrate(*db, &error) == MigrateStatus::kOk);
  keel::Statement row = db->Prepare("SELECT input_requests, input_answers FROM tasks");
  REQUIRE(row.Step());
  CHECK(row.IsNull(0));
  CHECK(row.IsNull(1));
}

}  // namespace schema_test
