// CB-2: while a breaker is open a read gets its last known good answer marked cached (with
// its time and age), or an error saying data is absent; a write gets no fallback; every
// rejection carries retry_after_ms, the incident and no_write_action_performed. The cache
// of last good results is bounded and keyed by tool and canonical arguments.
#include "server/call/degraded_answer.h"

#include <catch2/catch.hpp>

#include "server/policy/failure_classify.h"

namespace keel::degraded_answer_test {
namespace {

ToolSpec Spec(EffectClass effect) {
  ToolSpec spec;
  spec.name = effect == EffectClass::kRead ? "get_job" : "restart_job";
  spec.effect = effect;
  return spec;
}

const CircuitRejection kOpen{"open", "deployment-api", 1200, "cb-deployment-api-2"};

TEST_CASE("an open breaker answers a read with its last known good result marked cached",
          "[breaker][CB-2]") {
  Json fresh = TextResult("Job web-api is running.");
  fresh["structuredContent"] = {{"state", "running"}, {"freshness", "fresh"}};
  const CachedResult cached{fresh, 1'000'000};
  const Json answer = DegradedAnswer(Spec(EffectClass::kRead), kOpen, cached, 1'004'500);
  CHECK_FALSE(answer.value("isError", false));
  const Json& sc = answer["structuredContent"];
  CHECK(sc["freshness"] == "cached");
  CHECK(sc["age_ms"] == 4500);
  CHECK(sc["cached_at"] == "1970-01-01T00:16:40.000Z");
  CHECK(sc["data"]["state"] == "running");
  CHECK(sc["data"]["freshness"] == "cached");
  CHECK(sc["no_write_action_performed"] == true);
  CHECK(sc["circuit"]["incident"] == "cb-deployment-api-2");
  CHECK(sc["circuit"]["retry_after_ms"] == 1200);
  CHECK(answer["content"][0]["text"].get<std::string>().rfind("CACHED, not fresh", 0) == 0);
  CHECK(answer["content"][1]["text"] == "Job web-api is running.");
}

TEST_CASE("an open breaker answers a read without a cached result with freshness absent",
          "[breaker][CB-2]") {
  const Json answer = DegradedAnswer(Spec(EffectClass::kRead), kOpen, std::nullopt, 5);
  CHECK(answer["isError"] == true);
  const Json& error = answer["structuredContent"]["error"];
  CHECK(error["type"] == "circuit_open");
  CHECK(error["freshness"] == "absent");
  CHECK(error["no_write_action_performed"] == true);
  CHECK(error["retry_after_ms"] == 1200);
  CHECK(ClassifyResult(answer)->failure == FailureClass::kRejectedPermanent);
}

TEST_CASE("an open breaker gives a write no fallback, even with a cached result",
          "[breaker][CB-2]") {
  const CachedResult cached{TextResult("old"), 1};
  const Json answer = DegradedAnswer(Spec(EffectClass::kUnsafeWrite), kOpen, cached, 5);
  CHECK(answer["isError"] == true);
  const Json& error = answer["structuredContent"]["error"];
  CHECK(error["type"] == "circuit_open");
  CHECK_FALSE(error.contains("freshness"));
  CHECK_FALSE(answer["structuredContent"].contains("data"));
  CHECK(answer["content"][0]["text"].get<std::string>().find("no fallback") != std::string::npos);
}

TEST_CASE("last good results are keyed by tool and canonical arguments and bounded",
          "[breaker][CB-2]") {
  LastGoodResults cache(2);
  cache.Put("get_job", Json{{"a", 1}, {"b", 2}}, TextResult("one"), 10);
  REQUIRE(cache.Get("get_job", Json{{"b", 2}, {"a", 1}}));  // member order does not matter
  CHECK(cache.Get("get_job", Json{{"b", 2}, {"a", 1}})->stored_ms == 10);
  CHECK_FALSE(cache.Get("other", Json{{"a", 1}, {"b", 2}}));
  cache.Put("get_job", Json{{"a", 1}, {"b", 2}}, TextResult("newer"), 20);
  CHECK(cache.size() == 1);
  CHECK(cache.Get("get_job", Json{{"a", 1}, {"b", 2}})->stored_ms == 20);
  cache.Put("get_job", Json{{"a", 2}}, TextResult("two"), 30);
  cache.Put("get_job", Json{{"a", 3}}, TextResult("three"), 40);
  CHECK(cache.size() == 2);
  CHECK_FALSE(cache.Get("get_job", Json{{"a", 1}, {"b", 2}}));  // the oldest went first
  CHECK(cache.Get("get_job", Json{{"a", 3}}));
}

}  // namespace
}  // namespace keel::degraded_answer_test
