// The tools a serving keel offers: the catalog's entries bound to keel's implementations, in
// catalog order, then the test tools and fixtures the catalog does not describe; entries with
// `run` become command tools for the start-up reconciliation; a bad --fault or binding ends
// start-up with 78.
#include "server/app/tool_set.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "app_fixtures.h"
#include "server/catalog/catalog_binding.h"

namespace keel::tool_set_test {
namespace {

using app_test::TempKeelDb;

Catalog Load(const std::string& text) {
  CatalogLoad load = LoadCatalog(text);
  INFO(Json(load.problems).dump(2));
  REQUIRE(load.ok());
  return *load.catalog;
}

std::vector<std::string> Names(const ToolRegistry& registry) {
  std::vector<std::string> names;
  for (const auto& tool : registry.tools()) names.push_back(tool->spec().name);
  return names;
}

bool Has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST_CASE("the built-in catalog serves its demo tools, in its order, and no test tools") {
  TempKeelDb db;
  std::ostringstream err;
  const ToolSet set = BuildToolSet(db.flags(), *LoadCatalogFile("").catalog, db.Open(), err);
  REQUIRE_FALSE(set.exit_code);
  const std::vector<std::string> names = Names(set.registry);
  REQUIRE(names.size() == 7);
  CHECK(names.front() == "echo");
  CHECK(Has(names, "charge_account"));
  CHECK(Has(names, "restart_deployment_job"));
  CHECK_FALSE(Has(names, "sleep"));
  CHECK(set.command_tools.empty());
}

TEST_CASE("the test tools and conformance fixtures are served after the catalog's own tools") {
  TempKeelDb db;
  db.flags().test_tools = true;
  db.flags().conformance_fixtures = true;
  std::ostringstream err;
  const ToolSet set = BuildToolSet(db.flags(), *LoadCatalogFile("").catalog, db.Open(), err);
  REQUIRE_FALSE(set.exit_code);
  const std::vector<std::string> names = Names(set.registry);
  REQUIRE(names.size() > 7);
  CHECK(names[6] == "lookup_deployment_operation");
  CHECK(Has(names, "sleep"));
  CHECK(Has(names, "latch_wait"));
  CHECK(Has(names, "test_simple_text"));
}

TEST_CASE("the MRTR, diagnostic, legacy and task fixtures come after the core fixtures") {
  TempKeelDb db;
  db.flags().conformance_fixtures = true;
  std::ostringstream err;
  const ToolSet set = BuildToolSet(db.flags(), *LoadCatalogFile("").catalog, db.Open(), err);
  REQUIRE_FALSE(set.exit_code);
  const std::vector<std::string> names = Names(set.registry);
  auto at = [&](const std::string& name) {
    return std::find(names.begin(), names.end(), name) - names.begin();
  };
  const auto simple = at("test_simple_text");
  REQUIRE(simple < static_cast<long>(names.size()));
  for (const char* name :
       {"test_input_required_result_elicitation", "test_missing_capability",
        "test_trigger_tool_change", "test_custom_header", "test_sampling",
        "test_elicitation_sep1330_enums", "greet", "slow_compute", "test_tool_with_task"}) {
    INFO(name);
    CHECK(at(name) > simple);
    CHECK(at(name) < static_cast<long>(names.size()));
  }
  CHECK(set.tools_changed != nullptr);
}

TEST_CASE("a bad --fault ends start-up with 78 naming it") {
  TempKeelDb db;
  db.flags().faults = {"echo:fail_503=1"};
  std::ostringstream err;
  const ToolSet set = BuildToolSet(db.flags(), *LoadCatalogFile("").catalog, db.Open(), err);
  CHECK(set.exit_code == 78);
  CHECK(err.str().rfind("keel: ", 0) == 0);
  CHECK(err.str().find("echo") != std::string::npos);
  CHECK(set.registry.tools().empty());
}

TEST_CASE("a catalog entry naming no implementation ends start-up with 78 as a catalog problem") {
  TempKeelDb db;
  const Catalog catalog =
      Load(R"({"tools":[{"name":"no_such_tool","description":"d","inputSchema":{"type":"object"},)"
           R"("effect":"read"}]})");
  std::ostringstream err;
  const ToolSet set = BuildToolSet(db.flags(), catalog, db.Open(), err);
  CHECK(set.exit_code == 78);
  CHECK(err.str().rfind("keel: catalog: ", 0) == 0);
  CHECK(err.str().find("no_such_tool") != std::string::npos);
  CHECK(set.command_tools.empty());
}

TEST_CASE("a catalog entry with run is served as a command tool and kept for reconciliation") {
  TempKeelDb db;
  const Catalog catalog =
      Load(R"({"tools":[{"name":"echo","description":"d","inputSchema":{"type":"object"},)"
           R"("effect":"read"},{"name":"hello","description":"d","inputSchema":{"type":"object"},)"
           R"("effect":"read","run":{"command":["/bin/echo","hi"]}}]})");
  std::ostringstream err;
  const ToolSet set = BuildToolSet(db.flags(), catalog, db.Open(), err);
  REQUIRE_FALSE(set.exit_code);
  CHECK(Names(set.registry) == std::vector<std::string>{"echo", "hello"});
  REQUIRE(set.command_tools.size() == 1);
  CHECK(set.command_tools[0] == set.registry.Find("hello"));
}

}  // namespace
}  // namespace keel::tool_set_test
