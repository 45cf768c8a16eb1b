// What a call keeps of its request's _meta: only the keys keel reads,
// each bounded; a queued call does not hold whatever else the client sent.
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "server/session/session_harness.h"
#include "server/tools/fn_tool.h"

namespace keel::session_meta_test {
namespace {

// Records the _meta its call carried (what the call's job held until a worker ran it).
class MetaProbe {
 public:
  std::unique_ptr<Tool> MakeTool() {
    ToolSpec spec;
    spec.name = "meta_probe";
    spec.description = "test: records ctx.meta()";
    spec.input_schema = Json{{"type", "object"}};
    return std::make_unique<FnTool>(std::move(spec), [this](ToolContext& ctx) {
      std::lock_guard<std::mutex> lock(mu_);
      seen_ = ctx.meta();
      return TextResult("ok");
    });
  }
  Json seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

 private:
  std::mutex mu_;
  Json seen_;
};

constexpr const char* kTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

}  // namespace

TEST_CASE("a queued call keeps only the _meta keys keel reads and drops the rest the client sent") {
  SessionHarness h(1);
  MetaProbe probe;
  REQUIRE(h.Register(probe.MakeTool()).empty());
  h.Initialize();
  h.Send(h.Call(1, "latch_wait", {{"name", "gate"}}));
  REQUIRE(h.WaitUntilRunning(1));
  Json bulk = Json::array();
  for (int i = 0; i < 100000; ++i) bulk.push_back(i);
  h.Send(h.Call(2, "meta_probe", Json::object(),
                {{"progressToken", "p"},
                 {"dev.keel/idempotency-key", "k-1"},
                 {"traceparent", kTraceparent},
                 {"bulk", std::move(bulk)},
                 {"vendor.example/extra", {{"nested", Json::array({1, 2, 3})}}}}));
  CHECK(h.session().coordinator().StateOf(2) == CallState::kQueued);

  h.Send(h.Call(3, "latch_release", {{"name", "gate"}}));
  REQUIRE(h.WaitFor(2));
  CHECK(h.sink().ForId(2)[0]["result"]["content"][0]["text"] == "ok");
  const Json seen = probe.seen();
  std::vector<std::string> keys;
  for (const auto& [key, value] : seen.items()) keys.push_back(key);
  CHECK(keys ==
        std::vector<std::string>{"dev.keel/idempotency-key", "progressToken", "traceparent"});
  CHECK(seen.value("progressToken", "") == "p");
  CHECK(seen.value("dev.keel/idempotency-key", "") == "k-1");
  CHECK(seen.value("traceparent", "") == kTraceparent);
}

TEST_CASE("a _meta key keel reads with a value over its bound is refused with -32602 naming it") {
  SessionHarness h;
  MetaProbe probe;
  REQUIRE(h.Register(probe.MakeTool()).empty());
  h.Initialize();
  h.Send(h.Call(1, "meta_probe", Json::object(), {{"progressToken", std::string(5000, 't')}}));
  REQUIRE(h.sink().ForId(1).size() == 1);
  const Json answer = h.sink().ForId(1)[0];
  CHECK(answer["error"]["code"] == -32602);
  CHECK(answer["error"]["message"].get<std::string>().find("_meta.progressToken") !=
        std::string::npos);
  CHECK(probe.seen().is_null());  // nothing ran
}

}  // namespace keel::session_meta_test
