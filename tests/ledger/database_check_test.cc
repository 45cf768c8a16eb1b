// Unit tests for ledger/database_check.h: the start-up proof that keel's file can be written
// and reads back sound.
#include "ledger/database_check.h"

#include <chrono>
#include <string>

#include <catch2/catch.hpp>

#include "fakes/damaged_pages.h"
#include "ledger_fixture.h"

using keel::CheckDatabase;
using keel::DamageTable;
using keel::DatabaseCheck;
using keel::LedgerFile;
using Verdict = DatabaseCheck::Verdict;
using namespace std::chrono_literals;

namespace database_check_test {

namespace {

std::chrono::steady_clock::time_point Plenty() { return std::chrono::steady_clock::now() + 1h; }

int64_t UserVersion(keel::Database& db) { return std::stoll(db.Pragma("user_version")); }

}  // namespace

TEST_CASE("a sound writable database passes the start-up check with every page read", "[ledger]") {
  LedgerFile file;
  auto db = file.Open();
  const int64_t version = UserVersion(*db);
  const DatabaseCheck check = CheckDatabase(*db, Plenty());
  CHECK(check.verdict == Verdict::kUsable);
  CHECK(check.problem.empty());
  CHECK(check.write_proven);
  CHECK(check.scan_complete);
  CHECK(UserVersion(*db) == version);       // the proof write changed nothing
  CHECK(db->Pragma("synchronous") == "2");  // as Open() left it: FULL
}

TEST_CASE("a database that refuses writes fails the start-up check as not writable", "[ledger]") {
  // query_only stands in for a read-only file: as root (CI) a 0444 file is still writable.
  LedgerFile file;
  auto db = file.Open();
  REQUIRE(db->Exec("PRAGMA query_only = ON") == "");
  const DatabaseCheck check = CheckDatabase(*db, Plenty());
  CHECK(check.verdict == Verdict::kNotWritable);
  CHECK_THAT(check.problem, Catch::Contains("readonly"));
}

TEST_CASE("a database with damaged pages fails the start-up check as damaged", "[ledger]") {
  LedgerFile file;
  DamageTable(file.path(), "charges");  // a table no start-up step reads
  auto db = file.Open();
  const DatabaseCheck check = CheckDatabase(*db, Plenty());
  CHECK(check.verdict == Verdict::kDamaged);
  CHECK_THAT(check.problem, Catch::Contains("quick_check"));
}

TEST_CASE("a start-up page scan whose deadline has passed is skipped and says it is partial",
          "[ledger]") {
  LedgerFile file;
  DamageTable(file.path(), "charges");
  auto db = file.Open();
  const DatabaseCheck check = CheckDatabase(*db, std::chrono::steady_clock::now() - 1ms);
  CHECK(check.verdict == Verdict::kUsable);  // nothing it read was damaged
  CHECK(check.write_proven);
  CHECK_FALSE(check.scan_complete);
}

}  // namespace database_check_test
