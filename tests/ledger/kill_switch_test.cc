// The kill switch for writes (OPS-2) in the settings table.
#include "ledger/kill_switch.h"

#include <catch2/catch.hpp>

#include "fakes/temp_dir.h"
#include "ledger/schema.h"

namespace keel::kill_switch_test {
namespace {

std::unique_ptr<Database> Migrated(const TempDir& dir) {
  std::string error;
  auto db = Database::Open(dir.File("keel.db"), &error);
  REQUIRE(db != nullptr);
  REQUIRE(Migrate(*db, &error) == MigrateStatus::kOk);
  return db;
}

}  // namespace

TEST_CASE("writes are allowed until the switch is set, and the setting says who set it",
          "[kill_switch][OPS-2]") {
  TempDir dir;
  auto db = Migrated(dir);
  CHECK_FALSE(WritesBlocked(*db));
  CHECK(ReadKillSwitch(*db).updated_ms == 0);
  SetWritesBlocked(*db, true, 1000, "operator");
  const KillSwitchState on = ReadKillSwitch(*db);
  CHECK(on.blocked);
  CHECK(on.updated_ms == 1000);
  CHECK(on.updated_by == "operator");
  SetWritesBlocked(*db, false, 2000, "operator");
  CHECK_FALSE(WritesBlocked(*db));
}

TEST_CASE("another connection (a restart, or keel admin from a shell) sees the switch",
          "[kill_switch][OPS-2]") {
  TempDir dir;
  auto first = Migrated(dir);
  SetWritesBlocked(*first, true, 1000, "admin");
  first.reset();
  auto second = Migrated(dir);
  CHECK(WritesBlocked(*second));
}

TEST_CASE("a switch that cannot be read fails closed: writes count as blocked",
          "[kill_switch][OPS-2]") {
  TempDir dir;
  auto db = Migrated(dir);
  REQUIRE(db->Exec("DROP TABLE settings") == "");
  CHECK(WritesBlocked(*db));
  CHECK(ReadKillSwitch(*db).unreadable);
  CHECK(ReadKillSwitch(*db).updated_by.rfind("unreadable", 0) == 0);
}

}  // namespace keel::kill_switch_test
