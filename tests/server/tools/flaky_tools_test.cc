// The flaky test tools (behind --test-tools): a named counter scripts which attempts fail
// and how, so retry behaviour can be driven end to end. Called directly, no session.
#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "protocol/schema_validator.h"
#include "server/policy/failure_classify.h"
#include "server/tools/test_tools.h"

namespace keel::flaky_tools_test {
namespace {

class TestTools {
 public:
  TestTools() : tools_(MakeTestTools()) {}

  Tool& Find(const std::string& name) {
    for (auto& tool : tools_) {
      if (tool->spec().name == name) return *tool;
    }
    FAIL("no tool " << name);
    throw std::logic_error("unreachable");
  }

  Json Call(const std::string& name, Json args, CancellationToken token = CancellationToken(),
            TimePoint deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10)) {
    ToolContext ctx(std::move(args), std::move(token), nullptr);
    ctx.set_deadline(deadline);
    return Find(name).Call(ctx);
  }

 private:
  std::vector<std::unique_ptr<Tool>> tools_;
};

TEST_CASE("a flaky tool fails as scripted per attempt, then succeeds", "[retry][test-tools]") {
  TestTools t;
  const Json args = {{"counter", "c1"},
                     {"fail", {"backend_503", "transport_unavailable"}},
                     {"retry_after_ms", 700}};
  const Json first = t.Call("flaky_read", args);
  CHECK(first["isError"] == true);
  CHECK(first["content"][0]["text"] == "flaky: scripted failure backend_503 on attempt 1");
  CHECK(first["structuredContent"]["error"] ==
        Json{{"type", "backend_503"}, {"retry_after_ms", 700}});
  const auto failure = ClassifyResult(first);
  REQUIRE(failure.has_value());
  CHECK(failure->failure == FailureClass::kRejectedTransient);
  CHECK(failure->retry_after_ms == std::optional<int64_t>(700));

  const Json second = t.Call("flaky_read", args);
  CHECK(second["structuredContent"]["error"]["type"] == "transport_unavailable");

  const Json third = t.Call("flaky_read", args);
  CHECK_FALSE(third.contains("isError"));
  CHECK(third["content"][0]["text"] == "flaky: ok on attempt 3");
  CHECK(third["structuredContent"] == Json{{"attempt", 3}});
  CHECK_FALSE(ClassifyResult(third).has_value());
}

TEST_CASE("the three flaky tools share counters by name and declare their effects",
          "[retry][test-tools]") {
  TestTools t;
  CHECK(t.Find("flaky_read").spec().effect == EffectClass::kRead);
  CHECK(t.Find("flaky_write").spec().effect == EffectClass::kUnsafeWrite);
  CHECK(t.Find("flaky_idempotent").spec().effect == EffectClass::kIdempotentWrite);
  for (const char* name : {"flaky_read", "flaky_write", "flaky_idempotent"}) {
    CHECK(t.Find(name).spec().description.rfind("Test tool:", 0) == 0);
  }

  const Json args = {{"counter", "shared"}, {"fail", {"attempt_timeout"}}};
  CHECK(t.Call("flaky_write", args)["structuredContent"]["error"]["type"] == "attempt_timeout");
  CHECK(t.Call("flaky_idempotent", args)["structuredContent"]["attempt"] == 2);
  CHECK(t.Call("flaky_read", {{"counter", "other"}})["structuredContent"]["attempt"] == 1);
}

TEST_CASE("only flaky_idempotent accepts an idempotency key in its arguments",
          "[retry][test-tools]") {
  TestTools t;
  const Json keyed = {{"counter", "k"}, {"idempotencyKey", "key-1"}};
  const auto accepts = [&](const char* name, const Json& args) {
    return !ValidateSchema(t.Find(name).spec().input_schema, args).has_value();
  };
  for (const char* name : {"flaky_read", "flaky_write", "flaky_idempotent"}) {
    CHECK_FALSE(CheckSchemaWellFormed(t.Find(name).spec().input_schema).has_value());
  }
  CHECK(accepts("flaky_idempotent", keyed));
  CHECK_FALSE(accepts("flaky_write", keyed));
  CHECK_FALSE(accepts("flaky_read", keyed));
  CHECK_FALSE(accepts("flaky_read", Json{{"counter", ""}}));
  CHECK_FALSE(accepts("flaky_read", Json{{"fail", Json::array()}}));
  CHECK_FALSE(accepts("flaky_read", Json{{"counter", "c"}, {"retry_after_ms", -1}}));
  CHECK_FALSE(accepts("flaky_read",
                      Json{{"counter", "c"}, {"fail", Json(std::vector<std::string>(11, "x"))}}));
  CHECK(accepts(
      "flaky_read",
      Json{{"counter", "c"}, {"fail", {"backend_503"}}, {"retry_after_ms", 0}, {"hang", true}}));
}

TEST_CASE("a hanging flaky timeout waits until cancelled and then stops at its checkpoint",
          "[retry][test-tools]") {
  TestTools t;
  CancellationToken token;
  token.Cancel();  // the wait returns at once; the checkpoint then stops the tool
  CHECK_THROWS_AS(t.Call("flaky_read",
                         {{"counter", "h"}, {"fail", {"attempt_timeout"}}, {"hang", true}}, token),
                  CallCancelled);
}

TEST_CASE("a hanging flaky timeout returns its failure once the call deadline passes",
          "[retry][test-tools]") {
  TestTools t;
  const Json result =
      t.Call("flaky_read", {{"counter", "h"}, {"fail", {"attempt_timeout"}}, {"hang", true}},
             CancellationToken(), std::chrono::steady_clock::now());  // already due
  CHECK(result["structuredContent"]["error"]["type"] == "attempt_timeout");
}

}  // namespace
}  // namespace keel::flaky_tools_test
