// Unit tests for the policy file (server/policy/policy_json.h, policy_validation.h): the
// built-in policy and the docs example validate; every field and cross-field rule is
// rejected with a message that names the field, the tool and the numbers; every problem is
// reported at once; tool overrides merge field by field over the defaults.
#include "server/policy/policy.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "server/policy/policy_json.h"
#include "server/policy/policy_validation.h"

namespace policy_test {

namespace {

using keel::ParsePolicy;
using keel::PolicyParseResult;
using nlohmann::json;

// A policy document: version plus `patch` merged into it (RFC 7386 merge patch).
std::string Doc(const json& patch) {
  json doc = {{"version", "test-1"}};
  doc.merge_patch(patch);
  return doc.dump();
}

// The problems of `patch` applied to a valid policy.
std::vector<std::string> Problems(const json& patch) { return ParsePolicy(Doc(patch)).problems; }

// Fails with the whole list unless exactly one problem was reported, and returns it.
std::string OnlyProblem(const json& patch) {
  const std::vector<std::string> problems = Problems(patch);
  INFO(json(problems).dump(2));
  REQUIRE(problems.size() == 1);
  return problems[0];
}

std::string DocsExample() {
  std::ifstream file(std::string(KEEL_SOURCE_DIR) + "/docs/policy.md");
  std::stringstream text;
  text << file.rdbuf();
  const std::string md = text.str();
  const size_t start = md.find("```json\n");
  REQUIRE(start != std::string::npos);
  const size_t end = md.find("```", start + 8);
  return md.substr(start + 8, end - start - 8);
}

}  // namespace

TEST_CASE("the built-in policy passes validation and round-trips through JSON", "[policy]") {
  const keel::Policy policy = keel::DefaultPolicy();
  CHECK(policy.version == "builtin-1");
  CHECK(keel::ValidatePolicy(policy).empty());
  const PolicyParseResult parsed = ParsePolicy(keel::PolicyToJson(policy).dump());
  INFO(json(parsed.problems).dump(2));
  REQUIRE(parsed.ok());
  CHECK(keel::PolicyToJson(*parsed.policy) == keel::PolicyToJson(policy));
}

TEST_CASE("a policy with only a version gets the built-in settings", "[policy]") {
  const PolicyParseResult parsed = ParsePolicy(R"({"version": "v7"})");
  REQUIRE(parsed.ok());
  keel::Policy expected = keel::DefaultPolicy();
  expected.version = "v7";
  CHECK(keel::PolicyToJson(*parsed.policy) == keel::PolicyToJson(expected));
}

TEST_CASE("the example in docs/policy.md validates and means what the docs say", "[policy]") {
  const PolicyParseResult parsed = ParsePolicy(DocsExample());
  INFO(json(parsed.problems).dump(2));
  REQUIRE(parsed.ok());
  const keel::Policy& policy = *parsed.policy;
  CHECK(policy.version == "2026-11-29.1");
  CHECK(policy.For("charge_account").retry.max_attempts == 1);
  CHECK(policy.For("charge_account").timeouts.attempt_ms == 7000);
  CHECK(policy.For("search_orders").shadow);
  CHECK(policy.For("search_orders").breaker.mode == keel::BreakerMode::kMetricsOnly);
  CHECK(policy.For("charge_account").breaker.mode == keel::BreakerMode::kNormal);
  CHECK_FALSE(policy.For("anything_else").shadow);
  CHECK(policy.RetryBudgetFor("payments").ratio == 0.1);
  CHECK(policy.RetryBudgetFor("inventory").ratio == 0.2);
}

TEST_CASE("a tool override merges field by field over the defaults", "[policy]") {
  const PolicyParseResult parsed = ParsePolicy(
      Doc({{"defaults", {{"retry", {{"base_ms", 100}, {"cap_ms", 800}}}, {"shadow", true}}},
           {"tools", {{"charge_account", {{"retry", {{"max_attempts", 1}}}}}}},
           {"retry_budget", {{"burst", 4}}},
           {"backends", {{"payments", {{"retry_budget", {{"ratio", 0.5}}}}}}}}));
  INFO(json(parsed.problems).dump(2));
  REQUIRE(parsed.ok());
  const keel::ToolPolicy charge = parsed.policy->For("charge_account");
  CHECK(charge.retry.max_attempts == 1);  // its own
  CHECK(charge.retry.base_ms == 100);     // from the file's defaults
  CHECK(charge.retry.cap_ms == 800);
  CHECK(charge.retry.retry_after_cap_ms == 5000);  // built-in
  CHECK(charge.shadow);
  CHECK(parsed.policy->For("other").retry.max_attempts == 3);
  const keel::RetryBudgetSettings payments = parsed.policy->RetryBudgetFor("payments");
  CHECK(payments.ratio == 0.5);
  CHECK(payments.burst == 4);
}

TEST_CASE("tools are merged over the defaults wherever the defaults appear in the file",
          "[policy]") {
  const PolicyParseResult parsed = ParsePolicy(
      R"({"tools": {"a": {}}, "version": "v", "defaults": {"retry": {"max_attempts": 2}}})");
  REQUIRE(parsed.ok());
  CHECK(parsed.policy->For("a").retry.max_attempts == 2);
}

TEST_CASE("a parse error names its line and column", "[policy]") {
  const PolicyParseResult parsed = ParsePolicy("{\n  \"version\": \"v\",\n  \"tools\": {,}\n}");
  REQUIRE(parsed.problems.size() == 1);
  CHECK_FALSE(parsed.ok());
  CHECK(parsed.problems[0].rfind("parse error at line 3, column 13", 0) == 0);
}

// A fuzz_policy regression (tests/fuzz/regressions/policy/): nlohmann reports a number too
// large for a double as out_of_range, not parse_error, and that exception escaped
// ParsePolicy and terminated keel.
TEST_CASE("a number too large for a double is a problem, not an exception", "[policy]") {
  PolicyParseResult parsed;
  REQUIRE_NOTHROW(parsed = ParsePolicy(R"({"version":"v","retry_budget":{"ratio":1e400}})"));
  CHECK_FALSE(parsed.ok());
  CHECK(parsed.problems == std::vector<std::string>{"number overflow parsing '1e400'"});
}

TEST_CASE("a document that is not an object is refused", "[policy]") {
  const PolicyParseResult parsed = ParsePolicy("[1, 2]");
  REQUIRE(parsed.problems.size() == 1);
  CHECK(parsed.problems[0] == "policy must be a JSON object, got array [1,2]");
}

TEST_CASE("an oversized policy is refused unread", "[policy]") {
  const std::string text(keel::kMaxPolicyBytes + 1, ' ');
  const PolicyParseResult parsed = ParsePolicy(text);
  REQUIRE(parsed.problems.size() == 1);
  CHECK(parsed.problems[0].find("at most 1048576") != std::string::npos);
}

// A fuzz_policy regression (tests/fuzz/regressions/policy/): the duplicate-key finder kept
// one path per open array, each longer than the last, so memory grew with the square of
// the depth (this test's 200000 levels would have needed 40 GB).
TEST_CASE("a policy nested deeper than 16 levels is refused unread", "[policy]") {
  auto nested = [](int arrays) {
    return R"({"version":"v","x":)" + std::string(arrays, '[') + std::string(arrays, ']') + "}";
  };
  // 15 arrays in the root object: judged field by field.
  CHECK(ParsePolicy(nested(15)).problems == std::vector<std::string>{"x: unknown field"});
  CHECK(ParsePolicy(nested(16)).problems ==
        std::vector<std::string>{"policy nests 17 levels deep; at most 16 are allowed"});
  const PolicyParseResult deep = ParsePolicy(nested(200000));
  REQUIRE(deep.problems.size() == 1);
  CHECK(deep.problems[0] == "policy nests 200001 levels deep; at most 16 are allowed");
}

TEST_CASE("a missing, empty, mistyped or overlong version is refused", "[policy]") {
  CHECK(
      ParsePolicy("{}").problems ==
      std::vector<std::string>{"version: missing or empty; a policy must say which version it is"});
  CHECK(
      ParsePolicy(R"({"version": ""})").problems ==
      std::vector<std::string>{"version: missing or empty; a policy must say which version it is"});
  CHECK(OnlyProblem({{"version", 3}}) == "version: must be a string, got number 3");
  CHECK(OnlyProblem({{"version", std::string(129, 'v')}}) == "version: must be at most 128 bytes");
}

TEST_CASE("unknown fields are named by their JSON path, at every level", "[policy]") {
  CHECK(OnlyProblem({{"tools", {{"charge_account", {{"retry", {{"max_atempts", 1}}}}}}}}) ==
        "tools.charge_account.retry.max_atempts: unknown field");
  CHECK(OnlyProblem({{"defaults", {{"timeout", json::object()}}}}) ==
        "defaults.timeout: unknown field");
  CHECK(OnlyProblem({{"retries", 3}}) == "retries: unknown field");
  CHECK(OnlyProblem({{"retry_budget", {{"tokens", 3}}}}) == "retry_budget.tokens: unknown field");
  CHECK(OnlyProblem({{"backends", {{"payments", {{"breaker", json::object()}}}}}}) ==
        "backends.payments.breaker: unknown field");
}

TEST_CASE("a key written twice in one object is refused with its path", "[policy]") {
  const PolicyParseResult parsed = ParsePolicy(
      R"({"version": "v", "defaults": {"retry": {"max_attempts": 2, "max_attempts": 4}}})");
  CHECK(parsed.problems ==
        std::vector<std::string>{"defaults.retry.max_attempts: appears more than once in its "
                                 "object; write it once"});
}

TEST_CASE("values of the wrong type are refused with the type found", "[policy]") {
  CHECK(OnlyProblem({{"defaults", {{"timeouts", {{"max_ms", "55000"}}}}}}) ==
        R"(defaults.timeouts.max_ms: must be an integer, got string "55000")");
  CHECK(OnlyProblem({{"defaults", {{"retry", {{"max_attempts", 2.5}}}}}}) ==
        "defaults.retry.max_attempts: must be an integer, got number 2.5");
  CHECK(OnlyProblem({{"defaults", {{"shadow", "yes"}}}}) ==
        R"(defaults.shadow: must be true or false, got string "yes")");
  CHECK(OnlyProblem({{"defaults", {{"breaker", 5}}}}) ==
        "defaults.breaker: must be an object, got number 5");
  CHECK(OnlyProblem({{"tools", {{"charge_account", true}}}}) ==
        "tools.charge_account: must be an object, got boolean true");
  CHECK(OnlyProblem({{"retry_budget", {{"ratio", "0.2"}}}}) ==
        R"(retry_budget.ratio: must be a number, got string "0.2")");
}

TEST_CASE("values out of range are refused with the range and the value", "[policy]") {
  CHECK(OnlyProblem({{"defaults", {{"retry", {{"max_attempts", 0}}}}}}) ==
        "defaults.retry.max_attempts: must be between 1 and 10, got 0");
  CHECK(OnlyProblem({{"defaults", {{"retry", {{"max_attempts", 11}}}}}}) ==
        "defaults.retry.max_attempts: must be between 1 and 10, got 11");
  CHECK(OnlyProblem({{"defaults", {{"timeouts", {{"attempt_ms", -5}}}}}}) ==
        "defaults.timeouts.attempt_ms: must be between 1 and 604800000, got -5");
  CHECK(OnlyProblem({{"defaults", {{"timeouts", {{"max_ms", 18446744073709551615ULL}}}}}}) ==
        "defaults.timeouts.max_ms: must be between 1 and 604800000, got 18446744073709551615");
  CHECK(OnlyProblem({{"tools", {{"t", {{"breaker", {{"failure_rate_percent", 0}}}}}}}}) ==
        "tools.t.breaker.failure_rate_percent: must be between 1 and 100, got 0");
  CHECK(OnlyProblem({{"defaults", {{"breaker", {{"slow_rate_percent", 101}}}}}}) ==
        "defaults.breaker.slow_rate_percent: must be between 1 and 100, got 101");
  CHECK(OnlyProblem({{"defaults", {{"breaker", {{"minimum_calls", 0}}}}}}) ==
        "defaults.breaker.minimum_calls: must be between 1 and 100000, got 0");
  CHECK(OnlyProblem({{"defaults", {{"breaker", {{"half_open_probes", 0}}}}}}) ==
        "defaults.breaker.half_open_probes: must be between 1 and 100, got 0");
  CHECK(OnlyProblem({{"defaults", {{"breaker", {{"window_ms", 3600001}}}}}}) ==
        "defaults.breaker.window_ms: must be between 1 and 3600000, got 3600001");
  CHECK(OnlyProblem({{"defaults", {{"breaker", {{"max_open_ms", 0}}}}}}) ==
        "defaults.breaker.max_open_ms: must be between 1 and 604800000, got 0");
  CHECK(OnlyProblem({{"tools", {{"t", {{"breaker", {{"probe_timeout_ms", -1}}}}}}}}) ==
        "tools.t.breaker.probe_timeout_ms: must be between 1 and 604800000, got -1");
}

TEST_CASE("a breaker mode is one of its four names", "[policy]") {
  CHECK(OnlyProblem({{"defaults", {{"breaker", {{"mode", "shadow"}}}}}}) ==
        R"(defaults.breaker.mode: must be one of "normal", "forced_open", "disabled", )"
        R"("metrics_only", got string "shadow")");
  CHECK(OnlyProblem({{"tools", {{"t", {{"breaker", {{"mode", 1}}}}}}}}) ==
        R"(tools.t.breaker.mode: must be one of "normal", "forced_open", "disabled", )"
        R"("metrics_only", got number 1)");
}

TEST_CASE("the breaker mode, open-duration cap and probe timeout are read and written back",
          "[policy]") {
  const PolicyParseResult parsed = ParsePolicy(
      Doc({{"defaults", {{"breaker", {{"max_open_ms", 120000}, {"probe_timeout_ms", 15000}}}}},
           {"tools",
            {{"search_orders", {{"breaker", {{"mode", "metrics_only"}}}}},
             {"charge_account", {{"breaker", {{"mode", "forced_open"}}}}}}}}));
  INFO(json(parsed.problems).dump(2));
  REQUIRE(parsed.ok());
  const keel::BreakerSettings search = parsed.policy->For("search_orders").breaker;
  CHECK(search.mode == keel::BreakerMode::kMetricsOnly);
  CHECK(search.max_open_ms == 120000);  // from the file's defaults
  CHECK(search.probe_timeout_ms == 15000);
  CHECK(parsed.policy->For("charge_account").breaker.mode == keel::BreakerMode::kForcedOpen);
  CHECK(parsed.policy->For("other").breaker.mode == keel::BreakerMode::kNormal);
  const json written = keel::PolicyToJson(*parsed.policy);
  CHECK(written["tools"]["search_orders"]["breaker"]["mode"] == "metrics_only");
  CHECK(written["defaults"]["breaker"]["mode"] == "normal");
  CHECK(written["defaults"]["breaker"]["probe_timeout_ms"] == 15000);
}

TEST_CASE("the idle clock may be off but not negative", "[policy]") {
  CHECK(Problems({{"defaults", {{"timeouts", {{"idle_ms", 0}}}}}}).empty());
  CHECK(OnlyProblem({{"defaults", {{"timeouts", {{"idle_ms", -1}}}}}}) ==
        "defaults.timeouts.idle_ms: must be between 0 and 604800000, got -1");
}

TEST_CASE("the retry budget ratio must be above 0 and at most 1, and the burst at least 1",
          "[policy]") {
  CHECK(Problems({{"retry_budget", {{"ratio", 1}}}}).empty());
  CHECK(OnlyProblem({{"retry_budget", {{"ratio", 0}}}}) ==
        "retry_budget.ratio: must be greater than 0.0 and at most 1.0, got 0");
  CHECK(OnlyProblem({{"retry_budget", {{"ratio", 1.5}}}}) ==
        "retry_budget.ratio: must be greater than 0.0 and at most 1.0, got 1.5");
  CHECK(OnlyProblem({{"retry_budget", {{"burst", 0.5}}}}) ==
        "retry_budget.burst: must be at least 1.0 and at most 1000000.0, got 0.5");
  CHECK(OnlyProblem({{"backends", {{"payments", {{"retry_budget", {{"burst", 0}}}}}}}}) ==
        "backends.payments.retry_budget.burst: must be at least 1.0 and at most 1000000.0, "
        "got 0");
}

TEST_CASE("tool and backend names must be names keel can register", "[policy]") {
  CHECK(OnlyProblem({{"tools", {{"charge account", json::object()}}}}) ==
        "tools.charge account: tool name must match ^[a-zA-Z0-9_-]{1,64}$");
  CHECK(OnlyProblem({{"backends", {{"pay.ments", json::object()}}}}) ==
        "backends.pay.ments: backend name must match ^[a-zA-Z0-9_-]{1,64}$");
}

// ---- Cross-field rules: one test per rule, each message naming the tool and numbers. ----

TEST_CASE("rule 1: an attempt timeout not below the call budget is refused", "[policy]") {
  // One attempt, so the worst-case rule (which allows equality) stays quiet.
  CHECK(OnlyProblem({{"tools",
                      {{"charge_account",
                        {{"retry", {{"max_attempts", 1}}},
                         {"timeouts", {{"max_ms", 10000}, {"idle_ms", 0}}}}}}}}) ==
        "tools.charge_account: timeouts.attempt_ms (10000) must be less than timeouts.max_ms "
        "(10000): an attempt must time out before the call it belongs to");
}

TEST_CASE("rule 2: an idle clock longer than the call budget is refused", "[policy]") {
  CHECK(OnlyProblem({{"defaults", {{"timeouts", {{"idle_ms", 60000}}}}}}) ==
        "defaults: timeouts.idle_ms (60000) must not exceed timeouts.max_ms (55000); 0 turns "
        "the idle clock off");
}

TEST_CASE("rule 3: attempts and backoffs that cannot fit the call budget are refused", "[policy]") {
  CHECK(OnlyProblem({{"tools", {{"search_orders", {{"timeouts", {{"max_ms", 30000}}}}}}}}) ==
        "tools.search_orders: worst case 3 attempts × 10000 ms + backoffs 250 + 500 = 30750 ms "
        "exceeds timeouts.max_ms (30000): lower retry.max_attempts, timeouts.attempt_ms or the "
        "backoff, or raise timeouts.max_ms");
}

TEST_CASE("rule 3: the backoff sum doubles from base_ms and stops at cap_ms", "[policy]") {
  keel::ToolPolicy tool;
  tool.retry.max_attempts = 6;
  tool.timeouts.attempt_ms = 1000;
  tool.timeouts.idle_ms = 0;
  tool.breaker.slow_call_ms = 1000;
  // 6 × 1000 + 250 + 500 + 1000 + 1500 + 1500
  CHECK(keel::WorstCaseCallMs(tool) == 10750);
  tool.timeouts.max_ms = 10749;
  const std::vector<std::string> problems = keel::ValidateToolPolicy(tool);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].find("6 attempts × 1000 ms + backoffs 250 + 500 + 1000 + 1500 + 1500 = "
                         "10750 ms exceeds timeouts.max_ms (10749)") != std::string::npos);
  tool.timeouts.max_ms = 10750;
  CHECK(keel::ValidateToolPolicy(tool).empty());
}

TEST_CASE("rule 4: a backoff cap below the base is refused", "[policy]") {
  CHECK(OnlyProblem({{"defaults", {{"retry", {{"base_ms", 500}, {"cap_ms", 400}}}}}}) ==
        "defaults: retry.cap_ms (400) must be at least retry.base_ms (500)");
}

TEST_CASE("rule 5: a useful attempt longer than any attempt is refused", "[policy]") {
  CHECK(OnlyProblem({{"tools", {{"t", {{"retry", {{"min_useful_attempt_ms", 10001}}}}}}}}) ==
        "tools.t: retry.min_useful_attempt_ms (10001) must not exceed timeouts.attempt_ms "
        "(10000): no attempt can use more time than that");
}

TEST_CASE("rule 6: a retry-after cap that leaves no time for the retry is refused", "[policy]") {
  CHECK(OnlyProblem({{"defaults", {{"retry", {{"retry_after_cap_ms", 54900}}}}}}) ==
        "defaults: retry.retry_after_cap_ms (54900) + retry.min_useful_attempt_ms (200) = 55100 "
        "exceeds timeouts.max_ms (55000): a retry-after wait that long leaves no time for the "
        "retry");
}

TEST_CASE("rule 7: a breaker window shorter than two attempts is refused", "[policy]") {
  CHECK(OnlyProblem({{"tools", {{"search_orders", {{"breaker", {{"window_ms", 19999}}}}}}}}) ==
        "tools.search_orders: breaker.window_ms (19999) must be at least 2 × "
        "timeouts.attempt_ms (2 × 10000 = 20000): a shorter window cannot see enough outcomes "
        "to judge");
}

TEST_CASE("rule 8: a slow-call threshold above the attempt timeout is refused", "[policy]") {
  CHECK(Problems({{"defaults", {{"breaker", {{"slow_call_ms", 10000}}}}}}).empty());
  CHECK(OnlyProblem({{"defaults", {{"breaker", {{"slow_call_ms", 10001}}}}}}) ==
        "defaults: breaker.slow_call_ms (10001) must not exceed timeouts.attempt_ms (10000): "
        "an attempt is cut off before it could count as slow");
}

TEST_CASE("rule 9: a half-open wait shorter than one attempt is refused", "[policy]") {
  CHECK(OnlyProblem({{"tools", {{"t", {{"breaker", {{"half_open_max_wait_ms", 9999}}}}}}}}) ==
        "tools.t: breaker.half_open_max_wait_ms (9999) must be at least timeouts.attempt_ms "
        "(10000): a probe must be able to finish before half-open gives up");
}

TEST_CASE("rule 10: an open-duration cap below the open duration is refused", "[policy]") {
  CHECK(Problems({{"defaults", {{"breaker", {{"max_open_ms", 30000}}}}}}).empty());
  CHECK(OnlyProblem({{"tools", {{"t", {{"breaker", {{"max_open_ms", 20000}}}}}}}}) ==
        "tools.t: breaker.max_open_ms (20000) must be at least breaker.open_ms (30000): it caps "
        "how far the open duration grows on repeated trips");
}

TEST_CASE("rule 11: a probe timeout shorter than one attempt is refused", "[policy]") {
  CHECK(Problems({{"defaults", {{"breaker", {{"probe_timeout_ms", 10000}}}}}}).empty());
  CHECK(OnlyProblem({{"defaults", {{"breaker", {{"probe_timeout_ms", 9999}}}}}}) ==
        "defaults: breaker.probe_timeout_ms (9999) must be at least timeouts.attempt_ms "
        "(10000): a probe still inside its attempt timeout is not hung");
}

TEST_CASE("every problem is reported together, not only the first", "[policy]") {
  const std::vector<std::string> problems =
      Problems({{"version", ""},
                {"defaults", {{"breaker", {{"failure_rate_percent", 0}}}}},
                {"tools",
                 {{"charge_account", {{"retry", {{"max_atempts", 1}}}}},
                  {"search_orders", {{"timeouts", {{"attempt_ms", 20000}}}}}}},
                {"retry_budget", {{"ratio", 2}}}});
  INFO(json(problems).dump(2));
  CHECK(problems == std::vector<std::string>{
                        "defaults.breaker.failure_rate_percent: must be between 1 and 100, got 0",
                        "retry_budget.ratio: must be greater than 0.0 and at most 1.0, got 2",
                        "tools.charge_account.retry.max_atempts: unknown field",
                        "version: missing or empty; a policy must say which version it is",
                    });
}

TEST_CASE("cross-field rules are checked for every tool while the defaults are valid", "[policy]") {
  const std::vector<std::string> problems =
      Problems({{"tools",
                 {{"a", {{"timeouts", {{"attempt_ms", 35000}}}}},
                  {"b", {{"retry", {{"max_atempts", 1}}}, {"timeouts", {{"attempt_ms", 99999}}}}},
                  {"c", {{"retry", {{"base_ms", 2000}}}}}}}});
  INFO(json(problems).dump(2));
  REQUIRE(problems.size() == 6);
  CHECK(problems[0] == "tools.b.retry.max_atempts: unknown field");  // b: its fields only
  CHECK(problems[1].rfind("tools.a: worst case 3 attempts × 35000 ms + backoffs 250 + 500 = "
                          "105750 ms exceeds timeouts.max_ms (55000)",
                          0) == 0);
  CHECK(problems[2].rfind("tools.a: breaker.window_ms (60000) must be at least 2 × "
                          "timeouts.attempt_ms (2 × 35000 = 70000)",
                          0) == 0);
  CHECK(problems[3].rfind("tools.a: breaker.half_open_max_wait_ms (10000) must be at least "
                          "timeouts.attempt_ms (35000)",
                          0) == 0);
  CHECK(problems[4].rfind("tools.a: breaker.probe_timeout_ms (10000) must be at least "
                          "timeouts.attempt_ms (35000)",
                          0) == 0);
  CHECK(problems[5] == "tools.c: retry.cap_ms (1500) must be at least retry.base_ms (2000)");
}

TEST_CASE("a problem a tool inherits from the defaults is reported once, under defaults",
          "[policy]") {
  keel::Policy policy = keel::DefaultPolicy();
  policy.defaults.retry.cap_ms = 100;
  policy.tools["a"] = policy.defaults;
  policy.tools["b"] = policy.defaults;
  policy.tools["b"].retry.base_ms = 300;
  const std::vector<std::string> problems = keel::ValidatePolicy(policy);
  INFO(json(problems).dump(2));
  CHECK(problems == std::vector<std::string>{
                        "defaults: retry.cap_ms (100) must be at least retry.base_ms (250)",
                        "tools.b: retry.cap_ms (100) must be at least retry.base_ms (300)",
                    });
}

}  // namespace policy_test
