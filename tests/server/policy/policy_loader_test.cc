// Loading the policy file and keeping the current and previous versions (BUD-1, OPS-2).
#include "server/policy/policy_loader.h"

#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fakes/temp_dir.h"
#include "ledger/schema.h"
#include "ledger/settings.h"
#include "server/durable/policy_store.h"

namespace keel::policy_loader_test {
namespace {

std::string Write(const TempDir& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir.File(name)) << text;
  return dir.File(name);
}

}  // namespace

TEST_CASE(
    "a valid policy file loads, an invalid one reports every problem, a missing one "
    "says it cannot be read",
    "[policy][BUD-1]") {
  TempDir dir;
  const LoadedPolicy good = LoadPolicyFile(Write(dir, "good.json", R"({"version":"v7"})"));
  REQUIRE(good.policy);
  CHECK(good.policy->version == "v7");
  CHECK(good.problems.empty());
  const LoadedPolicy bad = LoadPolicyFile(Write(
      dir, "bad.json", R"({"version":"v8","defaults":{"timeouts":{"attempt_ms":60000}},"x":1})"));
  CHECK_FALSE(bad.policy);
  CHECK(bad.problems.size() >= 2);
  const LoadedPolicy missing = LoadPolicyFile(dir.File("none.json"));
  CHECK_FALSE(missing.policy);
  REQUIRE(missing.problems.size() == 1);
  CHECK(missing.problems[0].find("cannot read") != std::string::npos);
}

TEST_CASE("recording a new policy version keeps the one it replaces as the previous one",
          "[policy][BUD-1]") {
  TempDir dir;
  std::string error;
  auto db = Database::Open(dir.File("keel.db"), &error);
  REQUIRE(db != nullptr);
  REQUIRE(Migrate(*db, &error) == MigrateStatus::kOk);
  CHECK_FALSE(StoredPolicy(*db, false));
  Policy v1 = DefaultPolicy();
  v1.version = "v1";
  RecordPolicy(*db, v1, 1000, "start");
  CHECK_FALSE(StoredPolicy(*db, true));
  RecordPolicy(*db, v1, 2000, "restart");  // the same version again: no previous yet
  CHECK_FALSE(StoredPolicy(*db, true));
  Policy v2 = DefaultPolicy();
  v2.version = "v2";
  RecordPolicy(*db, v2, 3000, "SIGHUP reload");
  REQUIRE(StoredPolicy(*db, false));
  CHECK(nlohmann::json::parse(*StoredPolicy(*db, false))["version"] == "v2");
  CHECK(nlohmann::json::parse(*StoredPolicy(*db, true))["version"] == "v1");
}

TEST_CASE("a stored policy nested deeper than 128 levels is shown as stored, never re-encoded",
          "[policy]") {
  TempDir dir;
  std::string error;
  auto db = Database::Open(dir.File("keel.db"), &error);
  REQUIRE(db != nullptr);
  REQUIRE(Migrate(*db, &error) == MigrateStatus::kOk);
  // Anyone can write the database: a stored policy 100,000 levels deep.
  const std::string deep =
      R"({"version":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
  WriteSetting(*db, "policy_current", deep, 1000, "someone");
  CHECK(StoredPolicy(*db, false) == deep);
  Policy v2 = DefaultPolicy();
  v2.version = "v2";
  RecordPolicy(*db, v2, 2000, "start");  // reads the stored one to decide what to keep
  CHECK(nlohmann::json::parse(*StoredPolicy(*db, false))["version"] == "v2");
}

}  // namespace keel::policy_loader_test
