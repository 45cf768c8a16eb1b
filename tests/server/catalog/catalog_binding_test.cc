// Catalog binding (--catalog): entries bind to keel's implementations by name and present the
// catalog's spec; a missing implementation or a write declared a read is refused; unbound
// implementations are handed back in order; the effective policy's precedence; approval and
// key components shape the idempotency key.
#include "server/catalog/catalog_binding.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/stub_tool.h"
#include "server/call/idempotency_key.h"
#include "server/catalog/effective_policy.h"
#include "server/session/session.h"

namespace keel::catalog_tools_test {
namespace {

// An implementation that answers with its intent arguments and reconciles every call as done.
std::unique_ptr<Tool> FakeImpl(std::string name, EffectClass effect, bool on_loop = false) {
  ToolSpec spec = StubSpec(std::move(name));
  spec.effect = effect;
  spec.runs_on_loop = on_loop;
  spec.description = "implementation's own description";
  return MakeStubTool(
      std::move(spec), [](ToolContext& ctx) { return TextResult(ctx.intent_arguments().dump()); },
      [](const Json& arguments, const Json&) {
        return Reconciled{Reconciled::Outcome::kHappened, arguments};
      });
}

Catalog Load(const std::string& text) {
  CatalogLoad load = LoadCatalog(text);
  INFO(Json(load.problems).dump(2));
  REQUIRE(load.ok());
  return *load.catalog;
}

std::vector<std::unique_ptr<Tool>> Impls() {
  std::vector<std::unique_ptr<Tool>> impls;
  impls.push_back(FakeImpl("echo", EffectClass::kRead, true));
  impls.push_back(FakeImpl("charge", EffectClass::kUnsafeWrite));
  impls.push_back(FakeImpl("lookup", EffectClass::kRead));
  return impls;
}

const char* const kCharge =
    R"({"tools":[{"name":"charge","title":"Charge","description":"From the catalog.",
  "inputSchema":{"type":"object","properties":{"account":{"type":"string"},"cents":{"type":"integer"},
    "memo":{"type":"string"}},"required":["account","cents"],"additionalProperties":false},
  "outputSchema":{"type":"object","properties":{"id":{"type":"string"}}},
  "effect":"idempotent_write","backend":"payments","idempotency":{"keyComponents":["account","cents"]},
  "approval":"required","timeouts":{"idleMs":1000,"maxMs":9000,"attemptMs":3000},
  "retry":{"maxAttempts":2},"resultTtlMs":60000,"taskSupport":"optional"}]})";

TEST_CASE("A catalog entry binds to the implementation of its name and presents the catalog's spec",
          "[catalog]") {
  BoundCatalog bound = BindCatalog(Load(kCharge), Impls());
  REQUIRE(bound.problems.empty());
  REQUIRE(bound.tools.size() == 1);
  const ToolSpec& spec = bound.tools[0]->spec();
  CHECK(spec.name == "charge");
  CHECK(spec.description == "From the catalog.");
  CHECK(spec.effect == EffectClass::kIdempotentWrite);
  CHECK(spec.backend_or_name() == "payments");
  CHECK(spec.approval_required);
  CHECK(spec.key_components == std::vector<std::string>{"account", "cents"});
  REQUIRE(spec.timeouts);
  CHECK(spec.timeouts->attempt_ms == 3000);
  REQUIRE(spec.retry);
  CHECK(spec.retry->max_attempts == 2);
  CHECK(spec.result_ttl_ms == 60000);
  CHECK(spec.task_support == TaskSupport::kOptional);
  CHECK(spec.annotations["destructiveHint"] == true);
  CHECK(spec.annotations["idempotentHint"] == true);
  // approval_id is offered in the schema so a call can carry it.
  CHECK(spec.input_schema["properties"]["approval_id"]["type"] == "string");
  const Json listed = ToolRegistry::Describe(spec);
  CHECK(listed["outputSchema"]["properties"]["id"]["type"] == "string");
}

TEST_CASE("Unbound implementations come back in the order they were given", "[catalog]") {
  BoundCatalog bound = BindCatalog(Load(kCharge), Impls());
  REQUIRE(bound.unbound.size() == 2);
  CHECK(bound.unbound[0]->spec().name == "echo");
  CHECK(bound.unbound[1]->spec().name == "lookup");
}

TEST_CASE("runs_on_loop stays a property of the implementation", "[catalog]") {
  BoundCatalog bound = BindCatalog(
      Load(
          R"({"tools":[{"name":"echo","description":"e","inputSchema":{"type":"object"},"effect":"read"}]})"),
      Impls());
  REQUIRE(bound.tools.size() == 1);
  CHECK(bound.tools[0]->spec().runs_on_loop);
  // Declared a write, it takes the worker path, where the kill switch is checked.
  BoundCatalog as_write = BindCatalog(
      Load(
          R"({"tools":[{"name":"echo","description":"e","inputSchema":{"type":"object"},"effect":"unsafe_write"}]})"),
      Impls());
  REQUIRE(as_write.tools.size() == 1);
  CHECK_FALSE(as_write.tools[0]->spec().runs_on_loop);
}

TEST_CASE("An entry without an implementation and a write declared a read are both refused",
          "[catalog]") {
  BoundCatalog bound = BindCatalog(Load(R"({"tools":[
        {"name":"get_invoice","description":"d","inputSchema":{"type":"object"},"effect":"read"},
        {"name":"charge","description":"d","inputSchema":{"type":"object"},"effect":"read"}]})"),
                                   Impls());
  INFO(Json(bound.problems).dump(2));
  REQUIRE(bound.problems.size() == 2);
  CHECK(bound.problems[0].rfind("tools[0] (get_invoice): keel has no implementation", 0) == 0);
  CHECK(bound.problems[0].find("charge, echo, lookup") != std::string::npos);
  CHECK(bound.problems[1].rfind("tools[1] (charge).effect: \"read\" but the tool writes", 0) == 0);
  CHECK(bound.tools.empty());
}

TEST_CASE("A bound tool fingerprints only the key components plus approval_id and the key",
          "[catalog][idempotency]") {
  BoundCatalog bound = BindCatalog(Load(kCharge), Impls());
  Tool& tool = *bound.tools[0];
  const Json args = {{"account", "a"},
                     {"cents", 5},
                     {"memo", "free text"},
                     {"approval_id", "ap-1"},
                     {"idempotencyKey", "k"}};
  ToolContext ctx(args, CancellationToken(), nullptr);
  ctx.set_key_components(tool.spec().key_components);
  const Json intent = Json::parse(tool.Call(ctx)["content"][0]["text"].get<std::string>());
  CHECK(intent ==
        Json{{"account", "a"}, {"cents", 5}, {"approval_id", "ap-1"}, {"idempotencyKey", "k"}});
  // Reconcile sees the same projection as the call's fingerprint did.
  CHECK(tool.Reconcile(args, Json()).result == intent);
}

TEST_CASE("Without key components every argument is the intent", "[catalog][idempotency]") {
  const Json args = {{"a", 1}, {"memo", "m"}};
  CHECK(IntentArguments(args, {}) == args);
}

TEST_CASE("An approval id scopes the idempotency key, or is the key when there is none",
          "[approval][idempotency]") {
  CHECK(ApprovalScopedKey("k1", Json{{"approval_id", "ap-1"}}) == "k1|approval:ap-1");
  CHECK(ApprovalScopedKey("", Json{{"approval_id", "ap-1"}}) == "approval:ap-1");
  CHECK(ApprovalScopedKey("k1", Json{{"x", 1}}) == "k1");
  CHECK(ApprovalScopedKey("k1", Json{{"approval_id", ""}}) == "k1");
  CHECK(ApprovalScopedKey("k1", Json{{"approval_id", 7}}) == "k1");
}

TEST_CASE("A tool that needs approval needs a non-empty approval_id string", "[approval]") {
  ToolSpec spec;
  spec.name = "pay";
  CHECK(HasApproval(spec, Json::object()));
  spec.approval_required = true;
  CHECK_FALSE(HasApproval(spec, Json::object()));
  CHECK_FALSE(HasApproval(spec, Json{{"approval_id", ""}}));
  CHECK_FALSE(HasApproval(spec, Json{{"approval_id", 3}}));
  CHECK(HasApproval(spec, Json{{"approval_id", "ap"}}));
  CHECK(ApprovalRequiredError(spec)["type"] == "approval_required");
}

TEST_CASE(
    "Effective policy: the policy file's tool entry beats the catalog, which beats the defaults",
    "[policy][catalog]") {
  Policy policy = DefaultPolicy();
  policy.defaults.timeouts = {1000, 50000, 5000};
  ToolPolicy named = policy.defaults;
  named.retry.max_attempts = 1;
  named.shadow = true;
  policy.tools["named"] = named;
  ToolSpec spec;
  spec.name = "plain";
  CHECK(EffectivePolicy(policy, spec, false).timeouts.max_ms == 50000);
  spec.timeouts = TimeoutSettings{10, 20000, 2000};
  spec.retry = RetrySettings{};
  spec.retry->max_attempts = 4;
  ToolPolicy from_catalog = EffectivePolicy(policy, spec, false);
  CHECK(from_catalog.timeouts.max_ms == 20000);
  CHECK(from_catalog.retry.max_attempts == 4);
  CHECK_FALSE(from_catalog.shadow);
  CHECK(EffectivePolicy(policy, spec, true).shadow);
  spec.name = "named";
  ToolPolicy from_policy = EffectivePolicy(policy, spec, false);
  CHECK(from_policy.timeouts.max_ms == 50000);
  CHECK(from_policy.retry.max_attempts == 1);
  CHECK(from_policy.shadow);
}

TEST_CASE("An expensive read without its own retry settings gets at most two attempts",
          "[policy][catalog]") {
  const Policy policy = DefaultPolicy();
  ToolSpec spec;
  spec.name = "report";
  spec.effect = EffectClass::kExpensiveRead;
  CHECK(EffectivePolicy(policy, spec, false).retry.max_attempts == kExpensiveReadAttempts);
  spec.effect = EffectClass::kRead;
  CHECK(EffectivePolicy(policy, spec, false).retry.max_attempts == 3);
  spec.effect = EffectClass::kExpensiveRead;
  spec.retry = RetrySettings{};
  spec.retry->max_attempts = 5;
  CHECK(EffectivePolicy(policy, spec, false).retry.max_attempts == 5);
}

TEST_CASE("The built-in policy takes --idle-timeout and --max-timeout and keeps attempts inside",
          "[policy]") {
  const Policy p = BuiltinPolicyWithTimeouts(700, 3000);
  CHECK(p.defaults.timeouts.idle_ms == 700);
  CHECK(p.defaults.timeouts.max_ms == 3000);
  CHECK(p.defaults.timeouts.attempt_ms == 3000);
  CHECK(BuiltinPolicyWithTimeouts(30000, 55000).defaults.timeouts.attempt_ms == 10000);
}

}  // namespace
}  // namespace keel::catalog_tools_test
