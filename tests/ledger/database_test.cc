// Unit tests for ledger/database.h: one SQLite connection opened for durable state.
#include "ledger/database.h"

#include <filesystem>
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

TEST_CASE("a database file with a second hard link is refused at open naming the path and why",
          "[ledger]") {
  // SQLite keeps the write-ahead log per name: two keels on two names of one file would
  // each see only their own writes, and run every key once each.
  keel::TempDir dir;
  std::string error;
  REQUIRE(Database::Open(dir.File("keel.db"), &error) != nullptr);
  std::filesystem::create_hard_link(dir.File("keel.db"), dir.File("other-name.db"));
  for (const char* name : {"keel.db", "other-name.db"}) {
    error.clear();
    CHECK(Database::Open(dir.File(name), &error) == nullptr);
    CHECK_THAT(error, Catch::Contains(dir.File(name)) && Catch::Contains("hard link"));
  }
}

TEST_CASE("a database whose -wal or -shm file has a second hard link is refused at open",
          "[ledger]") {
  for (const char* side : {"-wal", "-shm"}) {
    keel::TempDir dir;
    std::string error;
    auto first = Database::Open(dir.File("keel.db"), &error);  // keeps its side files
    REQUIRE(first != nullptr);
    REQUIRE(first->Exec("CREATE TABLE t(x)") == "");
    std::filesystem::create_hard_link(dir.File(std::string("keel.db") + side),
                                      dir.File(std::string("elsewhere") + side));
    CHECK(Database::Open(dir.File("keel.db"), &error) == nullptr);
    CHECK_THAT(error,
               Catch::Contains(std::string("keel.db") + side) && Catch::Contains("hard link"));
  }
}

TEST_CASE("a database reached through a symlink opens: it is one file with one name", "[ledger]") {
  keel::TempDir dir;
  std::filesystem::create_directory(dir.File("real"));
  std::filesystem::create_directory_symlink(dir.File("real"), dir.File("link"));
  std::string error;
  auto direct = Database::Open(dir.File("real/keel.db"), &error);
  REQUIRE(direct != nullptr);
  REQUIRE(direct->Exec("CREATE TABLE t(x); INSERT INTO t VALUES (1)") == "");
  auto linked = Database::Open(dir.File("link/keel.db"), &error);
  REQUIRE(linked != nullptr);
  CHECK(linked->Exec("INSERT INTO t VALUES (2)") == "");
  std::filesystem::create_symlink(dir.File("real/keel.db"), dir.File("keel-link.db"));
  auto file_link = Database::Open(dir.File("keel-link.db"), &error);
  REQUIRE(file_link != nullptr);
  CHECK(file_link->Exec("INSERT INTO t VALUES (3)") == "");
}

}  // namespace database_test
