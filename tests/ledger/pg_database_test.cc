// Unit tests for what ledger/pg_database.h does without a server: the placeholder rewrite and
// how a --db value is shown (DIST-1). The connection itself is tested through the ledger and
// task-store suites on PostgreSQL (ledger_fixture.h) and interop ledger_postgres.
#include "ledger/pg_database.h"

#include <cstdlib>
#include <string>

#include <catch2/catch.hpp>

#include "ledger_fixture.h"

using keel::Database;
using keel::PgDatabase;

namespace pg_database_test {

TEST_CASE("DIST-1 ?N placeholders become $N outside quoted literals", "[ledger][DIST-1]") {
  int parameters = 0;
  CHECK(PgDatabase::Rewrite("SELECT a FROM t WHERE k = ?1 AND n > ?12", &parameters) ==
        "SELECT a FROM t WHERE k = $1 AND n > $12");
  CHECK(parameters == 12);
  CHECK(PgDatabase::Rewrite("SELECT '?1', 'it''s ?2', ?3 FROM t", &parameters) ==
        "SELECT '?1', 'it''s ?2', $3 FROM t");
  CHECK(parameters == 3);
  CHECK(PgDatabase::Rewrite("SELECT 1 WHERE x = ? ", &parameters) == "SELECT 1 WHERE x = ? ");
  CHECK(parameters == 0);
}

TEST_CASE("DIST-1 a PostgreSQL --db is shown with its password hidden, anything else as given",
          "[ledger][DIST-1]") {
  CHECK(Database::Describe("postgresql://keel:s3cret@db.internal:5432/keel") ==
        "postgresql://keel:***@db.internal:5432/keel");
  CHECK(Database::Describe("postgres://keel:p@ss@host/db") == "postgres://keel:***@host/db");
  CHECK(Database::Describe("postgresql://keel:pw@host?sslmode=require") ==
        "postgresql://keel:***@host?sslmode=require");
  CHECK(Database::Describe("postgresql://keel@host/db") == "postgresql://keel@host/db");
  CHECK(Database::Describe("postgresql:///db?host=/run/pg&user=keel") ==
        "postgresql:///db?host=/run/pg&user=keel");
  CHECK(Database::Describe("/var/lib/keel/keel.db") == "/var/lib/keel/keel.db");
  CHECK(Database::IsPostgresUrl("postgres://x"));
  CHECK_FALSE(Database::IsPostgresUrl("keel.db"));
}

namespace {

int64_t BackendPid(Database& db) {
  keel::Statement pid = db.Prepare("SELECT pg_backend_pid()");
  REQUIRE(pid.Step());
  return pid.Int64(0);
}

// Ends `db`'s session from the server's side, as a restart or a failover would, and waits
// until it is gone.
void EndSession(keel::LedgerFile& file, Database& db) {
  const int64_t pid = BackendPid(db);
  auto admin = file.Open();
  REQUIRE(admin->Exec("SELECT pg_terminate_backend(" + std::to_string(pid) + ", 10000)") == "");
}

}  // namespace

TEST_CASE(
    "DIST-3 a lost PostgreSQL connection is opened again by the next statement, and a "
    "statement prepared before is prepared again",
    "[ledger][DIST-3]") {
  if (std::getenv("KEEL_TEST_POSTGRES_URL") == nullptr) return;  // no server to test against
  keel::LedgerFile file("postgres");
  auto db = file.Open();
  const int64_t first = BackendPid(*db);
  EndSession(file, *db);
  // The statement that meets the closed connection fails: nothing says it ran.
  int code = 0;
  try {
    keel::Statement pid = db->Prepare("SELECT pg_backend_pid()");
    (void)pid.Step();
  } catch (const keel::SqliteError& e) {
    code = e.code;
  }
  CHECK(code == 10);                // SQLITE_IOERR
  CHECK(BackendPid(*db) != first);  // the same cached statement, on a new connection
  CHECK(db->Exec("SELECT 1") == "");
}

TEST_CASE("DIST-3 keel's PostgreSQL connections are named keel unless the URL names them",
          "[ledger][DIST-3]") {
  if (std::getenv("KEEL_TEST_POSTGRES_URL") == nullptr) return;
  keel::LedgerFile file("postgres");
  auto name = [](keel::Database& db) {
    keel::Statement read = db.Prepare("SELECT current_setting('application_name')");
    REQUIRE(read.Step());
    return read.Text(0);
  };
  CHECK(name(*file.Open()) == "keel");
  std::string error;
  auto named = keel::Database::Open(file.path() + "&application_name=keel_eu_1", &error);
  INFO(error);
  REQUIRE(named != nullptr);
  CHECK(name(*named) == "keel_eu_1");
}

TEST_CASE("DIST-3 a transaction whose PostgreSQL connection was lost never goes on outside it",
          "[ledger][DIST-3]") {
  if (std::getenv("KEEL_TEST_POSTGRES_URL") == nullptr) return;
  keel::LedgerFile file("postgres");
  auto db = file.Open();
  db->BeginImmediate();
  db->Prepare("INSERT INTO charges VALUES(?1, 'acct-1', 500, NULL, 0)").Bind(1, "before").Run();
  EndSession(file, *db);
  auto insert = [&](const std::string& id) {
    db->Prepare("INSERT INTO charges VALUES(?1, 'acct-1', 500, NULL, 0)").Bind(1, id).Run();
  };
  CHECK_THROWS_AS(insert("meets-the-loss"), keel::SqliteError);
  // Still inside the lost transaction: refused, not run in autocommit on a new connection.
  CHECK_THROWS_AS(insert("after"), keel::SqliteError);
  CHECK_FALSE(db->InTransaction());
  CHECK_THROWS_AS(db->Commit(), keel::SqliteError);
  db->Rollback();
  insert("next");  // a new statement outside any transaction: a new connection
  auto reader = file.Open();
  CHECK(keel::CountCharges(*reader) == 1);
}

TEST_CASE(
    "DIST-3 every statement has a statement_timeout unless the URL sets one, kept after a "
    "reconnect, and a statement it stops reads as busy",
    "[ledger][DIST-3]") {
  if (std::getenv("KEEL_TEST_POSTGRES_URL") == nullptr) return;
  keel::LedgerFile file("postgres");
  auto db = file.Open();
  auto setting = [](Database& on) {
    keel::Statement current = on.Prepare("SELECT current_setting('statement_timeout')");
    REQUIRE(current.Step());
    return current.Text(0);
  };
  CHECK(setting(*db) == "30s");
  EndSession(file, *db);
  CHECK(db->Exec("SELECT 1") != "");  // meets the closed connection
  CHECK(setting(*db) == "30s");       // set again on the new one
  REQUIRE(db->Exec("SET statement_timeout = 50") == "");
  int code = 0;
  try {
    db->Prepare("SELECT pg_sleep(2)").Run();
  } catch (const keel::SqliteError& e) {
    code = e.code;
  }
  CHECK(code == 5);  // SQLITE_BUSY

  std::string error;
  auto own = Database::Open(file.path() + "%20-cstatement_timeout%3D7000", &error);
  INFO(error);
  REQUIRE(own != nullptr);
  CHECK(setting(*own) == "7s");
}

}  // namespace pg_database_test
