// Opening the database for serving: a file keel cannot use ends start-up (73, 78) with one
// line saying why; a usable one gets --block-writes and the policy in force recorded.
#include "server/app/durable_state.h"

#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "app_fixtures.h"
#include "ledger/kill_switch.h"
#include "server/durable/policy_store.h"

namespace keel::durable_state_test {
namespace {

using app_test::TempKeelDb;

Policy Version(const std::string& version) {
  Policy policy = DefaultPolicy();
  policy.version = version;
  return policy;
}

TEST_CASE("opening records the policy in force for keel policy show") {
  TempKeelDb db;
  std::ostringstream err;
  const DurableState state = OpenDurableState(db.flags(), Version("v5"), "keel-test-1", err);
  REQUIRE_FALSE(state.exit_code);
  CHECK(state.db_path == db.path());
  REQUIRE(state.ledger);
  CHECK(state.ledger->options().owner == "keel-test-1");
  CHECK(nlohmann::json::parse(*StoredPolicy(state.ledger->Borrow().db(), false))["version"] ==
        "v5");
  CHECK_FALSE(WritesBlocked(state.ledger->Borrow().db()));
  CHECK(err.str().empty());
}

TEST_CASE("the kill switch turned on by --block-writes at start-up stays on") {
  TempKeelDb db;
  db.flags().block_writes = true;
  std::ostringstream err;
  {
    const DurableState state = OpenDurableState(db.flags(), Version("v1"), "keel-test-1", err);
    REQUIRE_FALSE(state.exit_code);
    CHECK(ReadKillSwitch(state.ledger->Borrow().db())
              .updated_by.rfind("--block-writes at start-up", 0) == 0);
  }
  db.flags().block_writes = false;  // the next keel on the file, without the flag
  const DurableState next = OpenDurableState(db.flags(), Version("v1"), "keel-test-2", err);
  CHECK(WritesBlocked(next.ledger->Borrow().db()));
}

TEST_CASE("a db file in a missing directory exits 73 with one line saying why") {
  TempKeelDb db;
  db.flags().db_path = db.dir().File("no/such/keel.db");
  std::ostringstream err;
  const DurableState state = OpenDurableState(db.flags(), Version("v1"), "keel-test-1", err);
  CHECK(state.exit_code == 73);
  CHECK_FALSE(state.ledger);
  CHECK(err.str().rfind("keel: cannot open the database " + db.flags().db_path, 0) == 0);
  CHECK(err.str().find('\n') == err.str().size() - 1);
}

}  // namespace
}  // namespace keel::durable_state_test
