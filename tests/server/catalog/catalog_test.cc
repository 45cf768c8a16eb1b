// The tool catalog loader: the built-in catalog and the documented example load; every bad
// value or unknown field is reported with the tool and the field's path, all problems at
// once; annotations follow the effect class; a loaded entry registers as a ToolSpec.
#include "server/catalog/catalog.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/stub_tool.h"
#include "fakes/temp_ledger.h"
#include "server/catalog/builtin_catalog.h"
#include "server/catalog/catalog_spec.h"
#include "server/catalog/tool_registry.h"
#include "server/tools/deployment_tools.h"
#include "server/tools/echo_tool.h"
#include "server/tools/ledger_tools.h"

namespace keel::catalog_test {
namespace {

// A valid unsafe_write tool; tests change one field at a time.
Json Charge() {
  return Json::parse(R"({
    "name": "charge_account", "description": "Charges an account.",
    "inputSchema": {"type": "object", "properties": {
        "account": {"type": "string"}, "cents": {"type": "integer"}, "memo": {"type": "string"}},
      "required": ["account", "cents"]},
    "effect": "unsafe_write", "backend": "payments"})");
}

std::vector<std::string> ProblemsOf(const Json& catalog) {
  CatalogLoad load = LoadCatalog(catalog.dump());
  CHECK(load.ok() == load.problems.empty());
  return load.problems;
}

std::vector<std::string> ProblemsOfTool(const Json& tool) {
  return ProblemsOf(Json{{"tools", Json::array({Json{{"name", "echo"},
                                                     {"description", "e"},
                                                     {"inputSchema", {{"type", "object"}}},
                                                     {"effect", "read"}},
                                                tool})}});
}

// The one problem reported, which must name `where` (tool and field) and say `what`.
void RequireOneProblem(const std::vector<std::string>& problems, const std::string& where,
                       const std::string& what) {
  INFO(Json(problems).dump(2));
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].rfind(where + ": ", 0) == 0);
  CHECK(problems[0].find(what) != std::string::npos);
}

std::string DocsExample() {
  const auto path = std::filesystem::path(__FILE__).parent_path() / "../../../docs/catalog.md";
  std::ifstream file(path);
  REQUIRE(file.good());
  std::stringstream text;
  text << file.rdbuf();
  const std::string doc = text.str();
  const size_t section = doc.find("## A complete example");
  REQUIRE(section != std::string::npos);
  const size_t start = doc.find("```json\n", section);
  REQUIRE(start != std::string::npos);
  const size_t end = doc.find("```", start + 8);
  return doc.substr(start + 8, end - start - 8);
}

TEST_CASE("the built-in catalog loads without problems", "[catalog]") {
  CatalogLoad load = LoadCatalog(BuiltinCatalogJson());
  INFO(Json(load.problems).dump(2));
  REQUIRE(load.ok());
  REQUIRE(load.catalog->tools.size() == 7);
  const CatalogEntry& charge = load.catalog->tools[1];
  CHECK(charge.name == "charge_account");
  CHECK(charge.effect == EffectClass::kUnsafeWrite);
  CHECK(charge.backend == "payments");
  CHECK(charge.key_components == std::vector<std::string>{"account", "cents"});
  CHECK(charge.task_support == TaskSupport::kOptional);
  CHECK(load.catalog->tools[2].backend == "inventory");
  CHECK(load.catalog->tools[3].effect == EffectClass::kRead);
  // The simulated deployment backend: the seed's budgets (backend 7 s inside 10 s).
  const CatalogEntry& get_job = load.catalog->tools[4];
  CHECK(get_job.name == "get_deployment_job");
  CHECK(get_job.backend == "deployment-api");
  REQUIRE(get_job.timeouts);
  CHECK(get_job.timeouts->attempt_ms == 7000);
  CHECK(get_job.timeouts->max_ms == 10000);
  const CatalogEntry& restart = load.catalog->tools[5];
  CHECK(restart.effect == EffectClass::kUnsafeWrite);
  CHECK(restart.approval_required);
}

TEST_CASE("the built-in catalog describes the tools keel serves by default", "[catalog]") {
  TempLedger ledger;
  std::vector<std::unique_ptr<Tool>> tools;
  tools.push_back(MakeEchoTool());
  for (auto& tool : MakeLedgerTools(ledger.service())) tools.push_back(std::move(tool));
  for (auto& tool : MakeDeploymentTools(ledger.service(), nullptr))
    tools.push_back(std::move(tool));

  CatalogLoad load = LoadCatalog(BuiltinCatalogJson());
  REQUIRE(load.ok());
  REQUIRE(load.catalog->tools.size() == tools.size());
  for (size_t i = 0; i < tools.size(); ++i) {
    const ToolSpec& served = tools[i]->spec();
    const ToolSpec listed = SpecFor(load.catalog->tools[i]);
    INFO(served.name);
    CHECK(listed.name == served.name);
    CHECK(listed.title == served.title);
    CHECK(listed.description == served.description);
    Json schema = listed.input_schema;  // approval: required adds approval_id
    if (listed.approval_required) schema["properties"].erase("approval_id");
    CHECK(schema == served.input_schema);
    CHECK(IsWrite(listed.effect) == IsWrite(served.effect));
    CHECK(listed.task_support == served.task_support);
  }
}

TEST_CASE("the example in docs/catalog.md loads without problems", "[catalog]") {
  CatalogLoad load = LoadCatalog(DocsExample());
  INFO(Json(load.problems).dump(2));
  REQUIRE(load.ok());
  const CatalogEntry& charge = load.catalog->tools.at(3);
  CHECK(charge.approval_required);
  REQUIRE(charge.timeouts.has_value());
  CHECK(charge.timeouts->idle_ms == 5000);
  CHECK(charge.timeouts->max_ms == 20000);
  CHECK(charge.timeouts->attempt_ms == 8000);
  REQUIRE(charge.retry.has_value());
  CHECK(charge.retry->max_attempts == 2);
  CHECK(charge.retry->base_ms == RetrySettings{}.base_ms);
  CHECK(charge.result_ttl_ms == 86400000);
  CHECK(load.catalog->tools.at(0).output_schema.is_object());
  CHECK(load.catalog->tools.at(1).task_support == TaskSupport::kRequired);
}

TEST_CASE("absent optional fields take their documented defaults", "[catalog]") {
  Json tool = Charge();
  tool.erase("backend");
  CatalogLoad load = LoadCatalog(Json{{"tools", Json::array({tool})}}.dump());
  REQUIRE(load.ok());
  const CatalogEntry& entry = load.catalog->tools[0];
  CHECK(entry.title.empty());
  CHECK(entry.output_schema.is_null());
  CHECK(entry.backend == "charge_account");
  CHECK_FALSE(entry.timeouts.has_value());
  CHECK_FALSE(entry.retry.has_value());
  CHECK(entry.key_components.empty());
  CHECK_FALSE(entry.approval_required);
  CHECK(entry.task_support == TaskSupport::kForbidden);
  CHECK_FALSE(entry.result_ttl_ms.has_value());
}

TEST_CASE("a timeouts object without attemptMs clamps the default attempt to maxMs", "[catalog]") {
  Json tool = Charge();
  tool["timeouts"] = {{"idleMs", 0}, {"maxMs", 4000}};
  CatalogLoad load = LoadCatalog(Json{{"tools", Json::array({tool})}}.dump());
  REQUIRE(load.ok());
  CHECK(load.catalog->tools[0].timeouts->idle_ms == 0);
  CHECK(load.catalog->tools[0].timeouts->attempt_ms == 4000);
}

TEST_CASE("malformed JSON is one problem that says where", "[catalog]") {
  CatalogLoad load = LoadCatalog("{\"tools\": [\n  {\"name\": \"echo\",}\n]}");
  REQUIRE_FALSE(load.ok());
  REQUIRE(load.problems.size() == 1);
  CHECK(load.problems[0].find("catalog: not valid JSON") == 0);
  CHECK(load.problems[0].find("line 2") != std::string::npos);
}

TEST_CASE(
    "a key written twice in one catalog object is refused with its JSON path instead of last-wins",
    "[catalog]") {
  // Last-wins would load this unsafe write as a retryable read.
  const std::string twice = R"({"tools": [
    {"name": "echo", "description": "e", "inputSchema": {"type": "object"}, "effect": "read"},
    {"name": "charge_account", "description": "Charges an account.",
     "inputSchema": {"type": "object", "properties": {"cents": {"type": "integer"},
                                                      "cents": {"type": "string"}}},
     "effect": "unsafe_write", "effect": "read"}]})";
  const CatalogLoad load = LoadCatalog(twice);
  CHECK_FALSE(load.ok());
  CHECK(load.problems ==
        std::vector<std::string>{
            "tools[1].inputSchema.properties.cents: appears more than once in its object; "
            "write it once",
            "tools[1].effect: appears more than once in its object; write it once"});
}

TEST_CASE("the top level must be an object of the four sections, one of them non-empty",
          "[catalog]") {
  RequireOneProblem(ProblemsOf(Json::array()), "catalog", "must be an object");
  RequireOneProblem(ProblemsOf(Json::object()), "catalog", "serves nothing");
  RequireOneProblem(ProblemsOf(Json{{"tools", Json::array()}}), "catalog", "serves nothing");
  RequireOneProblem(ProblemsOf(Json{{"tools", Json::array({Charge()})}, {"prompts", 3}}),
                    "catalog.prompts", "must be an array");
  RequireOneProblem(ProblemsOf(Json{{"tools", Json::array({Charge()})}, {"tool", 1}}),
                    "catalog.tool", "unknown field");
  RequireOneProblem(ProblemsOf(Json{{"tools", Json::array({Charge(), 7})}}), "tools[1]",
                    "must be an object");
}

TEST_CASE("an effect outside the four classes names the tool and the field", "[catalog]") {
  Json tool = Charge();
  tool["effect"] = "write";
  RequireOneProblem(ProblemsOfTool(tool), "tools[1] (charge_account).effect",
                    "\"write\" is not one of read, expensive_read, idempotent_write, unsafe_write");
  tool.erase("effect");
  RequireOneProblem(ProblemsOfTool(tool), "tools[1] (charge_account).effect", "is required");
}

TEST_CASE("unknown fields are refused at every level outside the schemas", "[catalog]") {
  const std::vector<std::pair<Json::json_pointer, std::string>> cases = {
      {Json::json_pointer("/readOnly"), "tools[1] (charge_account).readOnly"},
      {Json::json_pointer("/timeouts/idle"), "tools[1] (charge_account).timeouts.idle"},
      {Json::json_pointer("/retry/maxAttemps"), "tools[1] (charge_account).retry.maxAttemps"},
      {Json::json_pointer("/idempotency/key"), "tools[1] (charge_account).idempotency.key"},
  };
  for (const auto& [pointer, where] : cases) {
    Json tool = Charge();
    tool["timeouts"] = {{"idleMs", 1000}, {"maxMs", 2000}};
    tool["retry"] = Json::object();
    tool["idempotency"] = {{"keyComponents", Json::array({"account"})}};
    tool[pointer] = 1;
    RequireOneProblem(ProblemsOfTool(tool), where, "unknown field");
  }
  // Inside a schema an unknown keyword is the schema checker's business, named by pointer.
  Json tool = Charge();
  tool["inputSchema"]["properties"]["account"]["patern"] = "^a";
  RequireOneProblem(ProblemsOfTool(tool), "tools[1] (charge_account).inputSchema",
                    "#/properties/account");
}

TEST_CASE("a bad name is reported by index, and names must be unique", "[catalog]") {
  Json tool = Charge();
  tool["name"] = "charge account";
  tool["effect"] = "write";
  const auto problems = ProblemsOfTool(tool);
  REQUIRE(problems.size() == 2);
  CHECK(problems[0].rfind("tools[1].name: \"charge account\" must match", 0) == 0);
  CHECK(problems[1].rfind("tools[1].effect: ", 0) == 0);

  tool = Charge();
  tool["name"] = "echo";
  RequireOneProblem(ProblemsOfTool(tool), "tools[1] (echo).name",
                    "is already the name of tools[0]");
  tool.erase("name");
  RequireOneProblem(ProblemsOfTool(tool), "tools[1].name", "is required");
}

TEST_CASE("required strings must be present and of the right type", "[catalog]") {
  Json tool = Charge();
  tool.erase("description");
  RequireOneProblem(ProblemsOfTool(tool), "tools[1] (charge_account).description", "is required");
  tool["description"] = "";
  RequireOneProblem(ProblemsOfTool(tool), "tools[1] (charge_account).description", "empty");
  tool = Charge();
  tool["title"] = 3;
  RequireOneProblem(ProblemsOfTool(tool), "tools[1] (charge_account).title", "must be a string");
  tool = Charge();
  tool["backend"] = "pay ments";
  RequireOneProblem(ProblemsOfTool(tool), "tools[1] (charge_account).backend", "must match");
}

TEST_CASE("input and output schemas must be well-formed object schemas", "[catalog]") {
  const std::string where = "tools[1] (charge_account).";
  Json tool = Charge();
  tool.erase("inputSchema");
  RequireOneProblem(ProblemsOfTool(tool), where + "inputSchema", "is required");
  tool["inputSchema"] = {{"type", "string"}};
  RequireOneProblem(ProblemsOfTool(tool), where + "inputSchema", "\"type\": \"object\"");
  tool["inputSchema"] = "object";
  RequireOneProblem(ProblemsOfTool(tool), where + "inputSchema", "must be a JSON Schema object");
  tool = Charge();
  tool["inputSchema"]["properties"]["cents"]["minimum"] = "1";
  RequireOneProblem(ProblemsOfTool(tool), where + "inputSchema", "#/properties/cents/minimum");
  tool = Charge();
  tool["outputSchema"] = {{"properties", Json::object()}};
  RequireOneProblem(ProblemsOfTool(tool), where + "outputSchema", "\"type\": \"object\"");
  tool["outputSchema"] = {{"type", "object"}, {"required", "id"}};
  RequireOneProblem(ProblemsOfTool(tool), where + "outputSchema", "#/required");
}

TEST_CASE("timeouts must be positive integers with idle and attempt within max", "[catalog]") {
  const std::string where = "tools[1] (charge_account).timeouts.";
  Json tool = Charge();
  tool["timeouts"] = {{"idleMs", 30000}, {"maxMs", 20000}};
  RequireOneProblem(ProblemsOfTool(tool), where + "idleMs", "must not exceed maxMs (20000)");
  tool["timeouts"] = {{"idleMs", 1000}, {"maxMs", 2000}, {"attemptMs", 3000}};
  RequireOneProblem(ProblemsOfTool(tool), where + "attemptMs", "must not exceed maxMs");
  tool["timeouts"] = {{"idleMs", 1000}, {"maxMs", 0}};
  RequireOneProblem(ProblemsOfTool(tool), where + "maxMs", "must be an integer from 1");
  tool["timeouts"] = {{"idleMs", 1.5}, {"maxMs", 2000}};
  RequireOneProblem(ProblemsOfTool(tool), where + "idleMs", "got 1.5");
  tool["timeouts"] = {{"idleMs", "5s"}, {"maxMs", 2000}};
  RequireOneProblem(ProblemsOfTool(tool), where + "idleMs", "got \"5s\"");
  tool["timeouts"] = {{"maxMs", 2000}};
  RequireOneProblem(ProblemsOfTool(tool), where + "idleMs", "is required");
  tool["timeouts"] = {{"idleMs", 1000}, {"maxMs", 18446744073709551615ULL}};
  RequireOneProblem(ProblemsOfTool(tool), where + "maxMs", "must be an integer");
  tool["timeouts"] = 5000;
  RequireOneProblem(ProblemsOfTool(tool), "tools[1] (charge_account).timeouts",
                    "must be an object");
}

TEST_CASE("retry settings must be sane", "[catalog]") {
  const std::string where = "tools[1] (charge_account).retry.";
  Json tool = Charge();
  tool["retry"] = {{"maxAttempts", 0}};
  RequireOneProblem(ProblemsOfTool(tool), where + "maxAttempts", "from 1 to 10, got 0");
  tool["retry"] = {{"maxAttempts", 11}};
  RequireOneProblem(ProblemsOfTool(tool), where + "maxAttempts", "got 11");
  tool["retry"] = {{"baseMs", 500}, {"capMs", 100}};
  RequireOneProblem(ProblemsOfTool(tool), where + "capMs", "must not be less than baseMs (500)");
  tool["retry"] = {{"baseMs", 2000}};
  RequireOneProblem(ProblemsOfTool(tool), where + "capMs", "1500 (the default)");
  tool["retry"] = {{"retryAfterCapMs", -1}};
  RequireOneProblem(ProblemsOfTool(tool), where + "retryAfterCapMs", "got -1");
  // An unsafe write may retry: only failures where the attempt did not happen are retried.
  tool["retry"] = {{"maxAttempts", 3}};
  CHECK(ProblemsOfTool(tool).empty());
}

TEST_CASE("key components must name input properties, and only writes have them", "[catalog]") {
  const std::string where = "tools[1] (charge_account).idempotency";
  Json tool = Charge();
  tool["idempotency"] = {{"keyComponents", Json::array({"account", "amount"})}};
  RequireOneProblem(ProblemsOfTool(tool), where + ".keyComponents[1]",
                    "\"amount\" is not a property of inputSchema");
  tool["idempotency"] = {{"keyComponents", Json::array({"account", "account"})}};
  RequireOneProblem(ProblemsOfTool(tool), where + ".keyComponents[1]", "listed twice");
  tool["idempotency"] = {{"keyComponents", Json::array()}};
  RequireOneProblem(ProblemsOfTool(tool), where + ".keyComponents", "non-empty array");
  tool["idempotency"] = {{"keyComponents", Json::array({"account"})}};
  tool["effect"] = "read";
  RequireOneProblem(ProblemsOfTool(tool), where, "applies to writes only");
}

TEST_CASE("an idempotent write needs key components or an idempotencyKey argument", "[catalog]") {
  Json tool = Charge();
  tool["effect"] = "idempotent_write";
  RequireOneProblem(ProblemsOfTool(tool), "tools[1] (charge_account).idempotency",
                    "an idempotent_write needs");
  tool["idempotency"] = {{"keyComponents", Json::array({"account", "cents"})}};
  CHECK(ProblemsOfTool(tool).empty());
  tool.erase("idempotency");
  tool["inputSchema"]["properties"]["idempotencyKey"] = {{"type", "string"}};
  CHECK(ProblemsOfTool(tool).empty());
}

TEST_CASE("approval, taskSupport and resultTtlMs accept only their documented values",
          "[catalog]") {
  const std::string where = "tools[1] (charge_account).";
  Json tool = Charge();
  tool["approval"] = "yes";
  RequireOneProblem(ProblemsOfTool(tool), where + "approval",
                    "\"yes\" is not one of none, required");
  tool = Charge();
  tool["taskSupport"] = true;
  RequireOneProblem(ProblemsOfTool(tool), where + "taskSupport",
                    "true is not one of forbidden, optional, required");
  tool = Charge();
  tool["resultTtlMs"] = 0;
  RequireOneProblem(ProblemsOfTool(tool), where + "resultTtlMs", "from 1 to");
}

TEST_CASE("every problem in a catalog is reported at once", "[catalog]") {
  Json bad = Charge();
  bad["effect"] = "write";
  bad["timeouts"] = {{"idleMs", 5}, {"maxMs", 1}};
  bad["colour"] = "red";
  Json worse = Charge();
  worse["name"] = "";
  worse["approval"] = "maybe";
  const auto problems = ProblemsOf(Json{{"tools", Json::array({Charge(), bad, worse})}});
  INFO(Json(problems).dump(2));
  // bad is a duplicate name too.
  CHECK(problems.size() == 6);
  auto has = [&](const std::string& prefix) {
    for (const auto& problem : problems) {
      if (problem.rfind(prefix, 0) == 0) return true;
    }
    return false;
  };
  CHECK(has("tools[1] (charge_account).name: "));
  CHECK(has("tools[1] (charge_account).colour: "));
  CHECK(has("tools[1] (charge_account).effect: "));
  CHECK(has("tools[1] (charge_account).timeouts.idleMs: "));
  CHECK(has("tools[2].name: "));
  CHECK(has("tools[2].approval: "));
}

TEST_CASE("annotations never contradict the effect class", "[catalog]") {
  for (EffectClass effect : {EffectClass::kRead, EffectClass::kExpensiveRead,
                             EffectClass::kIdempotentWrite, EffectClass::kUnsafeWrite}) {
    INFO(EffectClassName(effect));
    const Json hints = Annotations(effect);
    const bool read_only = hints.at("readOnlyHint").get<bool>();
    const bool destructive = hints.at("destructiveHint").get<bool>();
    const bool idempotent = hints.at("idempotentHint").get<bool>();
    CHECK(read_only == !IsWrite(effect));
    CHECK_FALSE((read_only && destructive));  // a read destroys nothing
    CHECK((read_only ? idempotent : true));   // repeating a read adds no effect
    CHECK(idempotent == (effect != EffectClass::kUnsafeWrite));
    CHECK(destructive == IsWrite(effect));         // a write may overwrite: claim no less
    CHECK_FALSE(hints.contains("openWorldHint"));  // not the effect's to say
  }
}

TEST_CASE("SpecFor builds a ToolSpec that a ToolRegistry accepts and lists", "[catalog]") {
  CatalogLoad load = LoadCatalog(DocsExample());
  REQUIRE(load.ok());
  ToolRegistry registry;
  for (const CatalogEntry& entry : load.catalog->tools) {
    CHECK(registry.Register(MakeStubTool(SpecFor(entry))).empty());
  }
  REQUIRE(registry.tools().size() == 4);
  const Json listed = ToolRegistry::Describe(registry.Find("charge_account")->spec());
  CHECK(listed.at("title") == "Charge an account");
  CHECK(listed.at("annotations") == Annotations(EffectClass::kUnsafeWrite));
  CHECK(listed.at("execution").at("taskSupport") == "optional");
  // approval: required adds the approval_id argument; the rest is the catalog's schema.
  Json schema = listed.at("inputSchema");
  CHECK(schema["properties"]["approval_id"]["type"] == "string");
  schema["properties"].erase("approval_id");
  CHECK(schema == load.catalog->tools[3].input_schema);
  CHECK_FALSE(listed.contains("outputSchema"));
  CHECK(Json(ToolRegistry::Describe(registry.Find("get_invoice")->spec())).at("outputSchema") ==
        load.catalog->tools[0].output_schema);
}

// fuzz_catalog regressions (tests/fuzz/regressions/catalog/): nlohmann parses any depth
// without recursing, but copying or dumping the value afterwards recursed once per level
// and overflowed the stack, in a problem message (a deep "effect") or in the loaded entry
// (a deep inputSchema "default", copied and listed whole).
TEST_CASE("a catalog nested deeper than 128 levels is refused unread", "[catalog]") {
  auto with_default = [](int arrays) {
    return R"({"tools":[{"name":"t","description":"d","effect":"read",)"
           R"("inputSchema":{"type":"object","default":)" +
           std::string(arrays, '[') + std::string(arrays, ']') + "}}]}";
  };
  // The root, tools, the entry and inputSchema are 4 levels.
  CHECK(LoadCatalog(with_default(124)).ok());
  const CatalogLoad over = LoadCatalog(with_default(125));
  CHECK(over.problems ==
        std::vector<std::string>{"catalog: nests 129 levels deep; at most 128 are allowed"});

  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  const std::string deep_effect = R"({"tools":[{"name":"t","description":"d","inputSchema":)"
                                  R"({"type":"object"},"effect":)" +
                                  deep + "}]}";
  for (const std::string& text : {deep_effect, with_default(200000)}) {
    const CatalogLoad load = LoadCatalog(text);
    REQUIRE(load.problems.size() == 1);
    CHECK(load.problems[0].find("at most 128 are allowed") != std::string::npos);
  }
}

}  // namespace
TEST_CASE(
    "the server section sets name, title, version and instructions, and unset ones stay unset",
    "[catalog]") {
  Json catalog = {
      {"server", {{"name", "acme-ops"}, {"version", "2.3.1"}, {"instructions", "Be careful."}}},
      {"tools", Json::array({Charge()})}};
  CatalogLoad load = LoadCatalog(catalog.dump());
  INFO(Json(load.problems).dump(2));
  REQUIRE(load.ok());
  CHECK(load.catalog->server.name == "acme-ops");
  CHECK_FALSE(load.catalog->server.title.has_value());
  CHECK(load.catalog->server.version == "2.3.1");
  CHECK(load.catalog->server.instructions == "Be careful.");
  CatalogLoad without = LoadCatalog(Json{{"tools", Json::array({Charge()})}}.dump());
  REQUIRE(without.ok());
  CHECK_FALSE(without.catalog->server.name.has_value());
  CHECK_FALSE(without.catalog->server.instructions.has_value());
}

TEST_CASE("a server section with an unknown field, a wrong type or an empty string is refused",
          "[catalog]") {
  RequireOneProblem(ProblemsOf({{"server", {{"nmae", "x"}}}, {"tools", Json::array({Charge()})}}),
                    "catalog.server.nmae", "unknown field");
  RequireOneProblem(ProblemsOf({{"server", {{"version", 2}}}, {"tools", Json::array({Charge()})}}),
                    "catalog.server.version", "string");
  RequireOneProblem(ProblemsOf({{"server", {{"name", ""}}}, {"tools", Json::array({Charge()})}}),
                    "catalog.server.name", "non-empty string");
  RequireOneProblem(ProblemsOf({{"server", {{"instructions", std::string(16385, 'x')}}},
                                {"tools", Json::array({Charge()})}}),
                    "catalog.server.instructions", "at most 16384 bytes");
  RequireOneProblem(ProblemsOf({{"server", "acme"}, {"tools", Json::array({Charge()})}}),
                    "catalog.server", "object");
}

}  // namespace keel::catalog_test
