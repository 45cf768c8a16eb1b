// Unit tests for server/surface/conformance_surface.h: the official conformance suite's
// resources, templates and prompts are a catalog that LoadCatalog accepts, and the surface
// built from them serves what the suite checks (CONF-1; the suite itself runs in
// scripts/conformance_suite).
#include "server/surface/conformance_surface.h"

#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "protocol/tool_result.h"

using keel::Json;

namespace conformance_surface_test {

TEST_CASE("the conformance fixtures are a catalog LoadCatalog accepts", "[CONF-1]") {
  keel::Catalog catalog;
  keel::AddConformanceSurfaceEntries(catalog);
  CHECK(catalog.resources.size() == 3);
  CHECK(catalog.resource_templates.size() == 1);
  CHECK(catalog.prompts.size() == 4);
}

TEST_CASE("the fixture surface lists test://static-text first and knows no nonexistent uri",
          "[CONF-1]") {
  keel::Catalog catalog;
  keel::AddConformanceSurfaceEntries(catalog);
  keel::Surface surface(catalog.resources, catalog.resource_templates, catalog.prompts, nullptr);
  keel::AddConformancePrompts(surface);
  // The suite's caching scenario reads the first resource listed.
  CHECK(surface.resources().items().at(0)["uri"] == "test://static-text");
  CHECK_FALSE(surface.resources().Resolve("test://nonexistent-resource-for-conformance-testing"));
  const auto read = surface.resources().Resolve("test://template/123/data");
  REQUIRE(read);
  keel::ToolContext ctx(read->arguments, keel::CancellationToken(), nullptr);
  const Json result = read->reader->Call(ctx);
  const Json& item = result["structuredContent"]["contents"][0];
  CHECK(item["mimeType"] == "application/json");
  CHECK(Json::parse(item["text"].get<std::string>()) ==
        Json({{"id", "123"}, {"templateTest", true}, {"data", "Data for ID: 123"}}));
  CHECK(surface.prompts().Find("test_input_required_result_prompt") != nullptr);
  CHECK(surface.completes());
}

}  // namespace conformance_surface_test
