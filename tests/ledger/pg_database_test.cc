// Unit tests for what ledger/pg_database.h does without a server: the placeholder rewrite and
// how a --db value is shown (DIST-1). The connection itself is tested through the ledger and
// task-store suites on PostgreSQL (ledger_fixture.h) and interop ledger_postgres.
#include "ledger/pg_database.h"

#include <string>

#include <catch2/catch.hpp>

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

}  // namespace pg_database_test
