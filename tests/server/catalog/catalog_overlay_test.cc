// The `keel wrap` overlay: LoadCatalog in CatalogMode::kOverlay takes entries that give only
// what they change, refuses run, and alone accepts upstreamTakesKey; what it cannot check
// without the upstream's schema, CheckOverlayAgainstUpstream does; an effect class comes from
// the annotations unless the overlay gives one; OverlaySpec replaces exactly the fields the
// entry gives; OverlayTools applies a whole overlay to an upstream's tools/list.
#include "server/catalog/catalog_overlay.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/stub_tool.h"
#include "fakes/temp_dir.h"
#include "server/catalog/catalog_binding.h"
#include "server/catalog/catalog_spec.h"
#include "server/catalog/tool_registry.h"

namespace keel::catalog_overlay_test {
namespace {

CatalogLoad LoadOverlay(const Json& tools) {
  return LoadCatalog(Json{{"tools", tools}}.dump(), CatalogMode::kOverlay);
}

// The one entry of an overlay that must load.
CatalogEntry Entry(const Json& tool) {
  CatalogLoad load = LoadOverlay(Json::array({tool}));
  INFO(Json(load.problems).dump(2));
  REQUIRE(load.ok());
  return load.catalog->tools.at(0);
}

std::vector<std::string> OverlayProblems(const Json& tool) {
  CatalogLoad load = LoadOverlay(Json::array({tool}));
  CHECK(load.ok() == load.problems.empty());
  return load.problems;
}

// The one problem reported, which must name `where` and say `what`.
void RequireOneProblem(const std::vector<std::string>& problems, const std::string& where,
                       const std::string& what) {
  INFO(Json(problems).dump(2));
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].rfind(where + ": ", 0) == 0);
  CHECK(problems[0].find(what) != std::string::npos);
}

Json CreateEntitiesSchema() {
  return Json::parse(R"({"type": "object", "properties": {
      "entities": {"type": "array", "items": {"type": "object"}}}, "required": ["entities"]})");
}

// An upstream tool as a wrapped server lists it, its effect from its annotations.
ToolSpec Upstream(std::string name, Json annotations = Json{{"idempotentHint", true}}) {
  ToolSpec spec = StubSpec(std::move(name), CreateEntitiesSchema());
  spec.title = "Upstream title";
  spec.description = "The upstream's description.";
  spec.output_schema = Json{{"type", "object"}};
  spec.annotations = std::move(annotations);
  spec.effect = EffectFromAnnotations(spec.annotations);
  spec.task_support = TaskSupport::kOptional;
  return spec;
}

TEST_CASE("an overlay entry may give only a name and keeps every other field unset",
          "[catalog][overlay]") {
  const CatalogEntry entry = Entry(Json{{"name", "create_entities"}});
  CHECK(entry.description.empty());
  CHECK(entry.input_schema.is_null());
  CHECK(entry.output_schema.is_null());
  CHECK_FALSE(entry.has_effect);
  CHECK(entry.backend.empty());
  CHECK_FALSE(entry.has_task_support);
  CHECK_FALSE(entry.timeouts.has_value());
  CHECK_FALSE(entry.upstream_takes_key);
}

TEST_CASE("a serve catalog still needs description inputSchema and effect", "[catalog][overlay]") {
  const CatalogLoad load =
      LoadCatalog(Json{{"tools", Json::array({Json{{"name", "t"}}})}}.dump(), CatalogMode::kServe);
  INFO(Json(load.problems).dump(2));
  REQUIRE(load.problems.size() == 3);
  CHECK(load.problems[0] == "tools[0] (t).description: is required");
  CHECK(load.problems[1] == "tools[0] (t).inputSchema: is required");
  CHECK(load.problems[2].rfind("tools[0] (t).effect: is required", 0) == 0);
}

TEST_CASE("fields an overlay entry gives are checked as strictly as a serve catalog's",
          "[catalog][overlay]") {
  const std::string where = "tools[0] (t).";
  RequireOneProblem(OverlayProblems(Json{{"name", "t"}, {"effect", "write"}}), where + "effect",
                    "is not one of read");
  RequireOneProblem(OverlayProblems(Json{{"name", "t"}, {"description", ""}}),
                    where + "description", "must not be empty");
  RequireOneProblem(OverlayProblems(Json{{"name", "t"}, {"inputSchema", {{"type", "string"}}}}),
                    where + "inputSchema", "\"type\": \"object\"");
  RequireOneProblem(
      OverlayProblems(Json{{"name", "t"}, {"timeouts", {{"idleMs", 9}, {"maxMs", 1}}}}),
      where + "timeouts.idleMs", "must not exceed maxMs");
  RequireOneProblem(OverlayProblems(Json{{"name", "t"}, {"readOnly", true}}), where + "readOnly",
                    "unknown field");
  RequireOneProblem(OverlayProblems(Json{{"name", "t"}, {"taskSupport", "maybe"}}),
                    where + "taskSupport", "is not one of forbidden");
}

TEST_CASE("an overlay entry refuses run and says what run is for", "[catalog][overlay]") {
  RequireOneProblem(
      OverlayProblems(Json{{"name", "t"}, {"run", {{"command", Json::array({"/bin/true"})}}}}),
      "tools[0] (t).run",
      "an overlay entry describes an upstream tool; `run` is for keel's own command tools");
}

TEST_CASE("upstreamTakesKey is a boolean that only an overlay accepts", "[catalog][overlay]") {
  CHECK(Entry(Json{{"name", "t"}, {"upstreamTakesKey", true}}).upstream_takes_key);
  CHECK_FALSE(Entry(Json{{"name", "t"}, {"upstreamTakesKey", false}}).upstream_takes_key);
  RequireOneProblem(OverlayProblems(Json{{"name", "t"}, {"upstreamTakesKey", "yes"}}),
                    "tools[0] (t).upstreamTakesKey", "must be true or false, got \"yes\"");

  const Json served = {{"name", "t"},
                       {"description", "d"},
                       {"inputSchema", {{"type", "object"}}},
                       {"effect", "unsafe_write"},
                       {"upstreamTakesKey", true}};
  const CatalogLoad load = LoadCatalog(Json{{"tools", Json::array({served})}}.dump());
  RequireOneProblem(load.problems, "tools[0] (t).upstreamTakesKey", "unknown field");
}

TEST_CASE("an overlay entry with an inputSchema has its key components checked at load",
          "[catalog][overlay]") {
  Json tool = {{"name", "create_entities"},
               {"effect", "idempotent_write"},
               {"inputSchema", CreateEntitiesSchema()},
               {"idempotency", {{"keyComponents", Json::array({"entity"})}}}};
  RequireOneProblem(OverlayProblems(tool),
                    "tools[0] (create_entities).idempotency.keyComponents[0]",
                    "\"entity\" is not a property of inputSchema");
  tool.erase("idempotency");
  RequireOneProblem(OverlayProblems(tool), "tools[0] (create_entities).idempotency",
                    "an idempotent_write needs");
}

TEST_CASE("an overlay entry without an inputSchema defers key components to the upstream",
          "[catalog][overlay]") {
  // Nothing to check them against yet: the upstream's tools/list decides.
  const CatalogEntry keyed =
      Entry(Json{{"name", "create_entities"},
                 {"effect", "idempotent_write"},
                 {"idempotency", {{"keyComponents", Json::array({"entity"})}}}});
  CHECK(keyed.key_components == std::vector<std::string>{"entity"});
  CHECK(Entry(Json{{"name", "create_entities"}, {"effect", "idempotent_write"}}).has_effect);
  // What the entry alone can tell is still checked.
  RequireOneProblem(OverlayProblems(Json{{"name", "t"},
                                         {"effect", "read"},
                                         {"idempotency", {{"keyComponents", Json::array({"a"})}}}}),
                    "tools[0] (t).idempotency", "applies to writes only");
  RequireOneProblem(
      OverlayProblems(Json{{"name", "t"},
                           {"effect", "unsafe_write"},
                           {"idempotency", {{"keyComponents", Json::array({"a", "a"})}}}}),
      "tools[0] (t).idempotency.keyComponents[1]", "listed twice");
}

TEST_CASE("an overlay may serve resources and prompts next to the upstream's tools",
          "[catalog][overlay]") {
  const Json overlay = {
      {"tools", Json::array({Json{{"name", "read_graph"}, {"effect", "read"}}})},
      {"resources", Json::array({Json{{"name", "notes"}, {"uri", "keel://notes"}, {"text", "n"}}})},
      {"prompts",
       Json::array({Json{{"name", "p"}, {"messages", Json::array({Json{{"text", "hi"}}})}}})}};
  const CatalogLoad load = LoadCatalog(overlay.dump(), CatalogMode::kOverlay);
  INFO(Json(load.problems).dump(2));
  REQUIRE(load.ok());
  CHECK(load.catalog->resources.size() == 1);
  CHECK(load.catalog->prompts.size() == 1);
}

TEST_CASE("key components must name properties of the upstream tool's inputSchema",
          "[catalog][overlay]") {
  CatalogEntry entry =
      Entry(Json{{"name", "create_entities"},
                 {"idempotency", {{"keyComponents", Json::array({"entities", "entity"})}}}});
  const std::vector<std::string> problems =
      CheckOverlayAgainstUpstream(entry, CreateEntitiesSchema(), EffectClass::kIdempotentWrite);
  CHECK(problems == std::vector<std::string>{
                        "tools (create_entities).idempotency.keyComponents[1]: \"entity\" is not "
                        "a property of the upstream tool's inputSchema (it has [\"entities\"])"});
  entry.key_components = {"entities"};
  CHECK(CheckOverlayAgainstUpstream(entry, CreateEntitiesSchema(), EffectClass::kIdempotentWrite)
            .empty());
}

TEST_CASE("an entry with its own inputSchema is checked against it and not the upstream's",
          "[catalog][overlay]") {
  const CatalogEntry entry =
      Entry(Json{{"name", "create_entities"},
                 {"inputSchema", CreateEntitiesSchema()},
                 {"idempotency", {{"keyComponents", Json::array({"entities"})}}}});
  const Json upstream_schema = {{"type", "object"}};  // no "entities": the entry's schema wins
  CHECK(CheckOverlayAgainstUpstream(entry, upstream_schema, EffectClass::kUnsafeWrite).empty());
}

TEST_CASE("key components need a write class from the entry or the upstream's annotations",
          "[catalog][overlay]") {
  CatalogEntry entry = Entry(Json{{"name", "create_entities"},
                                  {"idempotency", {{"keyComponents", Json::array({"entities"})}}}});
  const auto problems =
      CheckOverlayAgainstUpstream(entry, CreateEntitiesSchema(), EffectClass::kRead);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] ==
        "tools (create_entities).idempotency: applies to writes only; this tool's effect is read "
        "(from the upstream's annotations: give \"effect\")");
  CHECK(CheckOverlayAgainstUpstream(entry, CreateEntitiesSchema(), EffectClass::kUnsafeWrite)
            .empty());
  entry.has_effect = true;  // the entry's word wins over the annotations'
  entry.effect = EffectClass::kUnsafeWrite;
  CHECK(CheckOverlayAgainstUpstream(entry, CreateEntitiesSchema(), EffectClass::kRead).empty());
}

TEST_CASE("an idempotent write the overlay declares needs key components or an upstream key",
          "[catalog][overlay]") {
  const CatalogEntry entry =
      Entry(Json{{"name", "create_entities"}, {"effect", "idempotent_write"}});
  const auto problems =
      CheckOverlayAgainstUpstream(entry, CreateEntitiesSchema(), EffectClass::kUnsafeWrite);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].rfind("tools (create_entities).idempotency: an idempotent_write needs", 0) ==
        0);
  CHECK(problems[0].find("the upstream tool's inputSchema") != std::string::npos);

  Json keyed = CreateEntitiesSchema();
  keyed["properties"]["idempotencyKey"] = {{"type", "string"}};
  CHECK(CheckOverlayAgainstUpstream(entry, keyed, EffectClass::kUnsafeWrite).empty());
  // The annotations' idempotentHint alone is not held to it: all arguments make the intent.
  const CatalogEntry timeouts_only = Entry(Json{{"name", "create_entities"}});
  CHECK(CheckOverlayAgainstUpstream(timeouts_only, CreateEntitiesSchema(),
                                    EffectClass::kIdempotentWrite)
            .empty());
}

TEST_CASE("annotations give the effect class readOnlyHint first then idempotentHint else unsafe",
          "[catalog][overlay]") {
  CHECK(EffectFromAnnotations(Json{{"readOnlyHint", true}}) == EffectClass::kRead);
  CHECK(EffectFromAnnotations(Json{{"readOnlyHint", true}, {"idempotentHint", false}}) ==
        EffectClass::kRead);
  CHECK(EffectFromAnnotations(Json{{"readOnlyHint", false}, {"idempotentHint", true}}) ==
        EffectClass::kIdempotentWrite);
  CHECK(EffectFromAnnotations(Json{{"idempotentHint", true}, {"destructiveHint", false}}) ==
        EffectClass::kIdempotentWrite);
  // MCP's defaults for a tool that says nothing: not read-only, not idempotent.
  CHECK(EffectFromAnnotations(Json()) == EffectClass::kUnsafeWrite);
  CHECK(EffectFromAnnotations(Json::object()) == EffectClass::kUnsafeWrite);
  CHECK(EffectFromAnnotations(Json{{"destructiveHint", false}}) == EffectClass::kUnsafeWrite);
  // Only the boolean true counts.
  CHECK(EffectFromAnnotations(Json{{"readOnlyHint", "true"}}) == EffectClass::kUnsafeWrite);
  CHECK(EffectFromAnnotations(Json{{"readOnlyHint", 1}}) == EffectClass::kUnsafeWrite);
  CHECK(EffectFromAnnotations(Json::array({true})) == EffectClass::kUnsafeWrite);
}

TEST_CASE("without an overlay entry the upstream's spec is served unchanged",
          "[catalog][overlay]") {
  const ToolSpec upstream = Upstream("create_entities");
  const ToolSpec spec = OverlaySpec(nullptr, upstream);
  CHECK(ToolRegistry::Describe(spec) == ToolRegistry::Describe(upstream));
  CHECK(spec.effect == EffectClass::kIdempotentWrite);
  CHECK_FALSE(spec.upstream_takes_key);
}

TEST_CASE("an entry that gives only policy fields keeps what the upstream lists",
          "[catalog][overlay]") {
  const CatalogEntry entry =
      Entry(Json{{"name", "create_entities"}, {"timeouts", {{"idleMs", 100}, {"maxMs", 200}}}});
  const ToolSpec upstream = Upstream("create_entities");
  const ToolSpec spec = OverlaySpec(&entry, upstream);
  CHECK(ToolRegistry::Describe(spec) == ToolRegistry::Describe(upstream));
  CHECK(spec.effect == upstream.effect);
  CHECK(spec.backend == upstream.backend);
  CHECK(spec.key_components.empty());
  CHECK_FALSE(spec.approval_required);
  REQUIRE(spec.timeouts.has_value());
  CHECK(spec.timeouts->max_ms == 200);
}

TEST_CASE("every field an overlay entry gives replaces the upstream's", "[catalog][overlay]") {
  const Json own_schema = {{"type", "object"},
                           {"properties", {{"entities", {{"type", "array"}, {"maxItems", 10}}}}}};
  const CatalogEntry entry =
      Entry(Json{{"name", "create_entities"},
                 {"title", "Create"},
                 {"description", "Overlay's."},
                 {"inputSchema", own_schema},
                 {"outputSchema", {{"type", "object"}, {"required", Json::array({"a"})}}},
                 {"effect", "unsafe_write"},
                 {"backend", "memory"},
                 {"retry", {{"maxAttempts", 1}}},
                 {"idempotency", {{"keyComponents", Json::array({"entities"})}}},
                 {"taskSupport", "forbidden"},
                 {"resultTtlMs", 5000},
                 {"upstreamTakesKey", true}});
  const ToolSpec spec = OverlaySpec(&entry, Upstream("create_entities"));
  CHECK(spec.name == "create_entities");
  CHECK(spec.title == "Create");
  CHECK(spec.description == "Overlay's.");
  CHECK(spec.input_schema == own_schema);
  CHECK(spec.output_schema.at("required") == Json::array({"a"}));
  CHECK(spec.effect == EffectClass::kUnsafeWrite);
  CHECK(spec.backend == "memory");
  REQUIRE(spec.retry.has_value());
  CHECK(spec.retry->max_attempts == 1);
  CHECK(spec.key_components == std::vector<std::string>{"entities"});
  CHECK(spec.task_support == TaskSupport::kForbidden);  // the upstream said optional
  CHECK(spec.result_ttl_ms == 5000);
  CHECK(spec.upstream_takes_key);
}

TEST_CASE("an overlay effect rewrites the effect hints and keeps the upstream's other annotations",
          "[catalog][overlay]") {
  // The upstream claims a read; the operator knows it writes.
  const ToolSpec upstream = Upstream(
      "delete_entities",
      Json{{"readOnlyHint", true}, {"openWorldHint", false}, {"title", "Delete entities"}});
  REQUIRE(upstream.effect == EffectClass::kRead);
  const CatalogEntry entry = Entry(Json{{"name", "delete_entities"}, {"effect", "unsafe_write"}});
  const ToolSpec spec = OverlaySpec(&entry, upstream);
  CHECK(spec.effect == EffectClass::kUnsafeWrite);
  Json expected = Annotations(EffectClass::kUnsafeWrite);
  expected["openWorldHint"] = false;
  expected["title"] = "Delete entities";
  CHECK(spec.annotations == expected);
  // No annotations at all: the hints alone.
  ToolSpec bare = Upstream("delete_entities", Json());
  CHECK(OverlaySpec(&entry, bare).annotations == Annotations(EffectClass::kUnsafeWrite));
}

TEST_CASE("overlay approval adds approval_id to the upstream's schema as SpecFor does",
          "[catalog][overlay]") {
  const CatalogEntry entry = Entry(Json{{"name", "delete_entities"}, {"approval", "required"}});
  const ToolSpec spec = OverlaySpec(&entry, Upstream("delete_entities"));
  CHECK(spec.approval_required);
  CHECK(spec.input_schema == WithApprovalId(CreateEntitiesSchema()));
  CHECK(spec.input_schema.at("properties").at("approval_id").at("type") == "string");
  CHECK(spec.input_schema.at("properties").contains("entities"));
}

TEST_CASE("an overlaid spec registers in a ToolRegistry and lists as overlaid",
          "[catalog][overlay]") {
  const CatalogEntry entry = Entry(Json{{"name", "delete_entities"},
                                        {"effect", "unsafe_write"},
                                        {"approval", "required"},
                                        {"taskSupport", "required"}});
  ToolRegistry registry;
  REQUIRE(registry.Register(MakeStubTool(OverlaySpec(&entry, Upstream("delete_entities")))) == "");
  const ToolDescription listed = ToolRegistry::Describe(registry.Find("delete_entities")->spec());
  CHECK(listed.description == "The upstream's description.");
  CHECK(listed.annotations == Annotations(EffectClass::kUnsafeWrite));
  CHECK(listed.task_support == "required");
}

TEST_CASE(
    "OverlayTools keeps the upstream's order, leaves out tools it cannot apply to and "
    "names entries no upstream tool has",
    "[catalog][overlay]") {
  const CatalogLoad load =
      LoadOverlay(Json::array({Json{{"name", "delete_entities"}, {"effect", "unsafe_write"}},
                               Json{{"name", "create_entities"},
                                    {"idempotency", {{"keyComponents", Json::array({"entity"})}}}},
                               Json{{"name", "creat_relations"}, {"effect", "unsafe_write"}}}));
  REQUIRE(load.ok());
  std::vector<ToolSpec> upstream = {Upstream("read_graph", Json{{"readOnlyHint", true}}),
                                    Upstream("create_entities"), Upstream("delete_entities")};
  const OverlaidTools overlaid = OverlayTools(*load.catalog, upstream);
  REQUIRE(overlaid.specs.size() == 2);
  CHECK(overlaid.specs[0].name == "read_graph");
  CHECK(overlaid.specs[0].effect == EffectClass::kRead);
  CHECK(overlaid.specs[1].name == "delete_entities");
  CHECK(overlaid.specs[1].effect == EffectClass::kUnsafeWrite);
  REQUIRE(overlaid.problems.size() == 1);
  CHECK(overlaid.problems[0].rfind("tools (create_entities).idempotency.keyComponents[0]: ", 0) ==
        0);
  CHECK(overlaid.unmatched == std::vector<std::string>{"creat_relations"});
}

TEST_CASE("OverlayTools applies the entry to every upstream tool of its name",
          "[catalog][overlay]") {
  // A server that lists a name twice (the registry refuses the second) must not slip one
  // past the overlay.
  const CatalogLoad load =
      LoadOverlay(Json::array({Json{{"name", "create_entities"}, {"effect", "unsafe_write"}}}));
  REQUIRE(load.ok());
  const OverlaidTools overlaid =
      OverlayTools(*load.catalog, {Upstream("create_entities"), Upstream("create_entities")});
  REQUIRE(overlaid.specs.size() == 2);
  CHECK(overlaid.specs[0].effect == EffectClass::kUnsafeWrite);
  CHECK(overlaid.specs[1].effect == EffectClass::kUnsafeWrite);
  CHECK(overlaid.unmatched.empty());
}

TEST_CASE("LoadCatalogFile reads an overlay in overlay mode and no path is no overlay",
          "[catalog][overlay]") {
  const CatalogLoad none = LoadCatalogFile("", CatalogMode::kOverlay);
  REQUIRE(none.ok());
  CHECK(none.catalog->tools.empty());
  CHECK(none.catalog->resources.empty());

  TempDir dir;
  const std::string path = dir.Write(
      "overlay.json", R"({"tools": [{"name": "read_graph", "upstreamTakesKey": false}]})");
  const CatalogLoad overlay = LoadCatalogFile(path, CatalogMode::kOverlay);
  INFO(Json(overlay.problems).dump(2));
  REQUIRE(overlay.ok());
  CHECK(overlay.catalog->tools.at(0).name == "read_graph");
  CHECK_FALSE(LoadCatalogFile(path).ok());  // a serve catalog needs much more
}

TEST_CASE("the overlay example in docs/catalog.md loads as an overlay", "[catalog][overlay]") {
  const auto path = std::filesystem::path(__FILE__).parent_path() / "../../../docs/catalog.md";
  std::ifstream file(path);
  REQUIRE(file.good());
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  const size_t section = doc.find("### An overlay example");
  REQUIRE(section != std::string::npos);
  const size_t start = doc.find("```json\n", section);
  REQUIRE(start != std::string::npos);
  const size_t end = doc.find("```", start + 8);
  const CatalogLoad load =
      LoadCatalog(doc.substr(start + 8, end - start - 8), CatalogMode::kOverlay);
  INFO(Json(load.problems).dump(2));
  REQUIRE(load.ok());
  REQUIRE(load.catalog->tools.size() == 4);
  const CatalogEntry& create = load.catalog->tools[2];
  CHECK(create.effect == EffectClass::kIdempotentWrite);
  CHECK(create.key_components == std::vector<std::string>{"entities"});
  CHECK(load.catalog->tools[3].approval_required);
}

}  // namespace
}  // namespace keel::catalog_overlay_test
