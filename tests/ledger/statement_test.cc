// Unit tests for ledger/database.h: cached statements and write transactions.
#include <memory>
#include <string>

#include <catch2/catch.hpp>
#include <sqlite3.h>

#include "fakes/temp_dir.h"
#include "ledger/database.h"

using keel::Database;
using keel::SqliteError;
using keel::Statement;
using keel::WriteTransaction;

namespace statement_test {

namespace {

std::unique_ptr<keel::SqliteDatabase> OpenWithTable(const keel::TempDir& dir) {
  std::string error;
  auto db = keel::SqliteDatabase::Open(dir.File("statement.db"), &error);
  REQUIRE(db != nullptr);
  REQUIRE(db->Exec("CREATE TABLE t(k TEXT PRIMARY KEY, n INTEGER, s TEXT)") == "");
  return db;
}

int64_t CountRows(Database& db) {
  Statement count = db.Prepare("SELECT count(*) FROM t");
  REQUIRE(count.Step());
  return count.Int64(0);
}

}  // namespace

TEST_CASE("a statement binds integers, text and null and its getters copy", "[ledger]") {
  keel::TempDir dir;
  auto db = OpenWithTable(dir);
  db->Prepare("INSERT INTO t VALUES(?1, ?2, ?3)")
      .Bind(1, "a")
      .Bind(2, int64_t{42})
      .Bind(3, "x")
      .Run();
  CHECK(db->Changes() == 1);
  db->Prepare("INSERT INTO t VALUES(?1, ?2, ?3)")
      .Bind(1, "b")
      .Bind(2, int64_t{-7})
      .BindNull(3)
      .Run();

  Statement select = db->Prepare("SELECT k, n, s FROM t ORDER BY k");
  REQUIRE(select.Step());
  const std::string first_key = select.Text(0);  // copied: survives the next step
  CHECK(select.Int64(1) == 42);
  CHECK(select.Text(2) == "x");
  CHECK_FALSE(select.IsNull(2));
  REQUIRE(select.Step());
  CHECK(first_key == "a");
  CHECK(select.Text(0) == "b");
  CHECK(select.Int64(1) == -7);
  CHECK(select.IsNull(2));
  CHECK(select.Text(2) == "");
  CHECK_FALSE(select.Step());
}

TEST_CASE("text with embedded NUL bytes round-trips whole", "[ledger]") {
  keel::TempDir dir;
  auto db = OpenWithTable(dir);
  const std::string value("a\0b", 3);
  db->Prepare("INSERT INTO t VALUES('k', 0, ?1)").Bind(1, value).Run();
  Statement select = db->Prepare("SELECT s FROM t");
  REQUIRE(select.Step());
  CHECK(select.Text(0) == value);
}

TEST_CASE("a statement is reused from the cache, reset and unbound after each use", "[ledger]") {
  keel::TempDir dir;
  auto db = OpenWithTable(dir);
  db->Prepare("INSERT INTO t VALUES(?1, ?2, ?3)")
      .Bind(1, "a")
      .Bind(2, int64_t{1})
      .Bind(3, "x")
      .Run();
  sqlite3_stmt* first = nullptr;
  {
    Statement select = db->Prepare("SELECT n FROM t WHERE k = ?1");
    select.Bind(1, "a");
    REQUIRE(select.Step());  // left mid-result: destruction resets it
    first = sqlite3_next_stmt(db->handle(), nullptr);
  }
  // Same SQL text: the cached statement, with the old binding cleared (k = NULL matches none).
  Statement again = db->Prepare("SELECT n FROM t WHERE k = ?1");
  CHECK_FALSE(again.Step());
  int prepared = 0;
  for (sqlite3_stmt* s = sqlite3_next_stmt(db->handle(), nullptr); s != nullptr;
       s = sqlite3_next_stmt(db->handle(), s)) {
    ++prepared;
  }
  CHECK(first != nullptr);
  CHECK(prepared == 2);  // the INSERT and the SELECT, each prepared once
}

TEST_CASE("preparing the same SQL while its statement is alive is refused", "[ledger]") {
  keel::TempDir dir;
  auto db = OpenWithTable(dir);
  Statement held = db->Prepare("SELECT 1");
  try {
    db->Prepare("SELECT 1");
    FAIL("a second live Statement of one SQL text was handed out");
  } catch (const SqliteError& e) {
    CHECK(e.code == SQLITE_MISUSE);
  }
  Statement moved(std::move(held));
  CHECK(moved.Step());
}

TEST_CASE("bad SQL and constraint violations throw SqliteError with the SQLite code", "[ledger]") {
  keel::TempDir dir;
  auto db = OpenWithTable(dir);
  CHECK_THROWS_AS(db->Prepare("SELEC nothing"), SqliteError);
  db->Prepare("INSERT INTO t VALUES('a', 1, NULL)").Run();
  try {
    db->Prepare("INSERT INTO t VALUES('a', 1, NULL)").Run();
    FAIL("duplicate primary key accepted");
  } catch (const SqliteError& e) {
    CHECK(e.code == SQLITE_CONSTRAINT_PRIMARYKEY);
    CHECK_THAT(e.what(), Catch::Contains("UNIQUE"));
  }
  // The failed statement went back to the cache: the same SQL fails the same way again.
  try {
    db->Prepare("INSERT INTO t VALUES('a', 1, NULL)").Run();
    FAIL("duplicate primary key accepted");
  } catch (const SqliteError& e) {
    CHECK(e.code == SQLITE_CONSTRAINT_PRIMARYKEY);
  }
  CHECK(CountRows(*db) == 1);
}

TEST_CASE("a write transaction rolls back on destruction unless committed", "[ledger]") {
  keel::TempDir dir;
  auto db = OpenWithTable(dir);
  {
    WriteTransaction txn(*db);
    db->Prepare("INSERT INTO t VALUES('gone', 1, NULL)").Run();
    CHECK(CountRows(*db) == 1);
  }
  CHECK(CountRows(*db) == 0);
  {
    WriteTransaction txn(*db);
    db->Prepare("INSERT INTO t VALUES('kept', 1, NULL)").Run();
    txn.Commit();
  }
  CHECK(CountRows(*db) == 1);
  db->Rollback();  // outside a transaction: a no-op
  CHECK(CountRows(*db) == 1);
}

TEST_CASE("BEGIN IMMEDIATE with no wait fails busy while another connection writes", "[ledger]") {
  keel::TempDir dir;
  auto first = OpenWithTable(dir);
  std::string error;
  auto second = Database::Open(dir.File("statement.db"), &error);
  REQUIRE(second != nullptr);
  WriteTransaction holder(*first);
  second->SetBusyTimeout(std::chrono::milliseconds(0));
  try {
    second->BeginImmediate();
    FAIL("two write transactions at once");
  } catch (const SqliteError& e) {
    CHECK((e.code & 0xff) == SQLITE_BUSY);
  }
  CHECK(second->Pragma("busy_timeout") == "0");
}

TEST_CASE("the WAL-reset bug range covers 3.7.0 to 3.51.2 except the fixed backports", "[ledger]") {
  CHECK_FALSE(Database::HasWalResetBug(3006023));
  CHECK(Database::HasWalResetBug(3007000));
  CHECK(Database::HasWalResetBug(3040001));  // Debian 12
  CHECK(Database::HasWalResetBug(3044005));
  CHECK_FALSE(Database::HasWalResetBug(3044006));
  CHECK(Database::HasWalResetBug(3045000));
  CHECK(Database::HasWalResetBug(3050006));
  CHECK_FALSE(Database::HasWalResetBug(3050007));
  CHECK(Database::HasWalResetBug(3051002));
  CHECK_FALSE(Database::HasWalResetBug(3051003));
  CHECK_FALSE(Database::HasWalResetBug(3052000));
}

}  // namespace statement_test
