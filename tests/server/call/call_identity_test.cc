// CallIdentity (call_identity.h) through a real Session: the facts admission computed are the
// ones the tool reads, for a call and for a task's work.
#include <memory>
#include <mutex>
#include <string>

#include <catch2/catch.hpp>

#include "server/session/session_harness.h"
#include "server/tools/fn_tool.h"

namespace keel::call_identity_test {
namespace {

// Records the identity its call carried.
class IdentityProbe {
 public:
  std::unique_ptr<Tool> MakeTool() {
    ToolSpec spec;
    spec.name = "identity_probe";
    spec.description = "test: records ctx.identity()";
    spec.input_schema = Json{{"type", "object"}};
    return std::make_unique<FnTool>(std::move(spec), [this](ToolContext& ctx) {
      std::lock_guard<std::mutex> lock(mu_);
      seen_ = ctx.identity();
      attempt_id_ = ctx.attempt_id();
      return TextResult("ok");
    });
  }
  CallIdentity seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }
  std::string attempt_id() {
    std::lock_guard<std::mutex> lock(mu_);
    return attempt_id_;
  }

 private:
  std::mutex mu_;
  CallIdentity seen_;
  std::string attempt_id_;
};

}  // namespace

TEST_CASE("the idempotency key a tool reads is the one admission computed", "[call][identity]") {
  SessionHarness h;
  IdentityProbe probe;
  REQUIRE(h.Register(probe.MakeTool()).empty());
  h.Initialize();
  h.Send(h.Call(0, "identity_probe", {{"approval_id", "ap-9"}},
                {{"dev.keel/idempotency-key", "k-1"}}));
  REQUIRE(h.sink().ForId(0).size() == 1);
  const CallIdentity seen = probe.seen();
  CHECK(seen.idempotency_key == "k-1|approval:ap-9");
  CHECK(seen.key_problem.empty());
  CHECK(seen.tool_name == "identity_probe");
  CHECK(seen.request_id == Json(0));  // a request id may be 0
  CHECK(seen.task_id.empty());
  CHECK(seen.correlation_id.rfind("k-", 0) == 0);
  CHECK(probe.attempt_id() == seen.correlation_id + "/1");
}

TEST_CASE("a call whose key is invalid reaches its tool with the problem, not a key",
          "[call][identity]") {
  SessionHarness h;
  IdentityProbe probe;
  REQUIRE(h.Register(probe.MakeTool()).empty());
  h.Initialize();
  h.Send(h.Call(1, "identity_probe", {{"idempotencyKey", 5}}));
  REQUIRE(h.sink().ForId(1).size() == 1);
  CHECK(probe.seen().idempotency_key.empty());
  CHECK(probe.seen().key_problem ==
        "arguments.idempotencyKey must be a string of 1 to 255 "
        "characters");
}

}  // namespace keel::call_identity_test
