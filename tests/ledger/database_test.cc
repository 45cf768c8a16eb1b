// Unit tests for ledger/database.h: one SQLite connection opened for durable state.
#include "ledger/database.h"

#include <string>

#include <catch2/catch.hpp>

#include "fakes/temp_dir.h"

using keel::Database;

namespace database_test {

TEST_CASE("an opened file database uses WAL, synchronous FULL and foreign keys", "[ledger]") {
  keel::TempDir dir;
  std::string error;
  auto db = Database::Open(dir.File("ledger.db"), &error);
  REQUIRE(db != nullptr);
  CHECK(error.empty());
  CHECK(db->Pragma("journal_mode") == "wal");
  CHECK(db->Pragma("synchronous") == "2");  // FULL
  CHECK(db->Pragma("foreign_keys") == "1");
  CHECK(db->Pragma("busy_timeout") != "0");
}

TEST_CASE("foreign keys are enforced on an opened database", "[ledger]") {
  keel::TempDir dir;
  std::string error;
  auto db = Database::Open(dir.File("fk.db"), &error);
  REQUIRE(db != nullptr);
  REQUIRE(db->Exec("CREATE TABLE parent(id INTEGER PRIMARY KEY);"
                   "CREATE TABLE child(pid INTEGER REFERENCES parent(id));") == "");
  CHECK(db->Exec("INSERT INTO parent VALUES (1); INSERT INTO child VALUES (1);") == "");
  CHECK_THAT(db->Exec("INSERT INTO child VALUES (2)"), Catch::Contains("FOREIGN KEY"));
}

TEST_CASE("Exec returns an empty string on success and the SQLite error for bad SQL", "[ledger]") {
  keel::TempDir dir;
  std::string error;
  auto db = Database::Open(dir.File("exec.db"), &error);
  REQUIRE(db != nullptr);
  CHECK(db->Exec("CREATE TABLE t(x INTEGER)") == "");
  CHECK_THAT(db->Exec("SELEC x FROM t"), Catch::Contains("syntax error"));
  CHECK_FALSE(db->Exec("CREATE TABLE oops(").empty());
  CHECK_THAT(db->Exec("SELECT * FROM missing_table"), Catch::Contains("no such table"));
  CHECK_THAT(db->Exec("CREATE TABLE t(x INTEGER)"), Catch::Contains("already exists"));
  CHECK(db->Pragma("no_such_pragma_returns_nothing") == "");
}

TEST_CASE("a table written survives closing and reopening the database", "[ledger]") {
  keel::TempDir dir;
  const std::string path = dir.File("durable.db");
  std::string error;
  {
    auto db = Database::Open(path, &error);
    REQUIRE(db != nullptr);
    REQUIRE(db->Exec("CREATE TABLE effects(key TEXT PRIMARY KEY, done INTEGER)") == "");
    REQUIRE(db->Exec("INSERT INTO effects VALUES ('k1', 1)") == "");
  }
  auto db = Database::Open(path, &error);
  REQUIRE(db != nullptr);
  // The row is there: inserting the same primary key again is refused.
  CHECK_THAT(db->Exec("INSERT INTO effects VALUES ('k1', 1)"), Catch::Contains("UNIQUE"));
  CHECK(db->Exec("INSERT INTO effects VALUES ('k2', 1)") == "");
  CHECK(db->Pragma("journal_mode") == "wal");
}

TEST_CASE("opening a path in a directory that does not exist fails with a readable error",
          "[ledger]") {
  keel::TempDir dir;
  std::string error;
  auto db = Database::Open(dir.File("no/such/dir/ledger.db"), &error);
  CHECK(db == nullptr);
  CHECK_FALSE(error.empty());
  CHECK_THAT(error, Catch::Contains("unable to open"));
}

TEST_CASE("an in-memory database opens with journal mode memory", "[ledger]") {
  std::string error;
  auto db = Database::Open(":memory:", &error);
  REQUIRE(db != nullptr);
  CHECK(db->Pragma("journal_mode") == "memory");
  CHECK(db->Pragma("foreign_keys") == "1");
}

}  // namespace database_test
