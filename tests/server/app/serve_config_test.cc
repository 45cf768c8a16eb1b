// The configuration a serving keel resolves before anything starts (BUD-1): the policy from
// --policy or the built-in one with the timeout flags, and the catalog; either invalid ends
// start-up with 78 and every problem listed.
#include "server/app/serve_config.h"

#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "fakes/temp_dir.h"

namespace keel::serve_config_test {
namespace {

TEST_CASE("without --policy the built-in policy takes its default timeouts from the flags") {
  CliOptions flags;
  flags.idle_timeout_ms = 1234;
  flags.max_timeout_ms = 5678;
  std::ostringstream err;
  const ServeConfig config = LoadServeConfig(flags, err);
  REQUIRE_FALSE(config.exit_code);
  CHECK(config.policy->version == kBuiltinPolicyVersion);
  CHECK(config.policy->defaults.timeouts.idle_ms == 1234);
  CHECK(config.policy->defaults.timeouts.max_ms == 5678);
  CHECK(err.str().empty());
}

TEST_CASE("without --catalog the built-in demo catalog is served") {
  std::ostringstream err;
  const ServeConfig config = LoadServeConfig(CliOptions(), err);
  REQUIRE(config.catalog);
  bool has_echo = false;
  for (const CatalogEntry& entry : config.catalog->tools) has_echo |= entry.name == "echo";
  CHECK(has_echo);
}

TEST_CASE("a valid --policy file replaces the built-in policy") {
  TempDir dir;
  CliOptions flags;
  flags.policy_file = dir.Write("policy.json", R"({"version":"v7"})");
  std::ostringstream err;
  const ServeConfig config = LoadServeConfig(flags, err);
  REQUIRE_FALSE(config.exit_code);
  CHECK(config.policy->version == "v7");
}

TEST_CASE("an invalid --policy file exits 78 listing every problem before the catalog is read") {
  TempDir dir;
  CliOptions flags;
  flags.policy_file = dir.Write(
      "policy.json", R"({"version":"v8","defaults":{"timeouts":{"attempt_ms":60000}},"x":1})");
  flags.catalog_file = dir.File("missing-catalog.json");
  std::ostringstream err;
  const ServeConfig config = LoadServeConfig(flags, err);
  CHECK(config.exit_code == 78);
  CHECK(err.str().find("keel: policy: ") == 0);
  CHECK(err.str().find("keel: catalog: ") == std::string::npos);
}

TEST_CASE("a catalog with problems exits 78 listing each as a catalog problem") {
  TempDir dir;
  CliOptions flags;
  flags.catalog_file = dir.Write("catalog.json", R"({"tools":[{"name":"bad name"}]})");
  std::ostringstream err;
  const ServeConfig config = LoadServeConfig(flags, err);
  CHECK(config.exit_code == 78);
  CHECK_FALSE(config.catalog);
  CHECK(err.str().find("keel: catalog: ") == 0);
}

}  // namespace
}  // namespace keel::serve_config_test
