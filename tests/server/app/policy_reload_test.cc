// SIGHUP and the resilience policy (BUD-1): only a valid --policy file replaces the version
// in force; an invalid one, or none, keeps it. A reload is recorded with the version it
// replaced kept as the previous one.
#include "server/app/policy_reload.h"

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "app_fixtures.h"
#include "server/durable/policy_store.h"

namespace keel::policy_reload_test {
namespace {

using app_test::TempKeelDb;

Policy Running() {
  Policy policy = DefaultPolicy();
  policy.version = "running-1";
  return policy;
}

TEST_CASE("a SIGHUP with an invalid policy file keeps the policy in force") {
  TempKeelDb db;
  const std::string file = db.dir().Write(
      "policy.json", R"({"version":"v8","defaults":{"timeouts":{"attempt_ms":60000}},"x":1})");
  CHECK(ReloadPolicyFile(file, Running()) == nullptr);
}

TEST_CASE("a SIGHUP with a missing policy file keeps the policy in force") {
  TempKeelDb db;
  CHECK(ReloadPolicyFile(db.dir().File("gone.json"), Running()) == nullptr);
}

TEST_CASE("a SIGHUP without --policy keeps the policy in force") {
  CHECK(ReloadPolicyFile("", Running()) == nullptr);
}

TEST_CASE("a SIGHUP with a valid policy file puts the new version in force") {
  TempKeelDb db;
  const PolicyHandle next =
      ReloadPolicyFile(db.dir().Write("policy.json", R"({"version":"v9"})"), Running());
  REQUIRE(next);
  CHECK(next->version == "v9");
}

TEST_CASE("a reloaded policy is recorded and the one it replaced becomes the previous one") {
  TempKeelDb db;
  const std::shared_ptr<LedgerService> ledger = db.Open();
  RecordPolicy(ledger->Borrow().db(), Running(), 1000, "start-up");
  Policy next = DefaultPolicy();
  next.version = "v9";
  RecordReloadedPolicy(*ledger, next);
  CHECK(nlohmann::json::parse(*StoredPolicy(ledger->Borrow().db(), false))["version"] == "v9");
  CHECK(nlohmann::json::parse(*StoredPolicy(ledger->Borrow().db(), true))["version"] ==
        "running-1");
}

}  // namespace
}  // namespace keel::policy_reload_test
