#include "server/tools/test_tools.h"

#include <chrono>
#include <string>

#include "server/clock.h"
#include "server/tools/latch_registry.h"

namespace keel {
namespace {

// A tool defined by its spec and a function; enough for the small test tools.
class FnTool final : public Tool {
 public:
  using Fn = std::function<Json(ToolContext&)>;
  FnTool(ToolSpec spec, Fn fn) : spec_(std::move(spec)), fn_(std::move(fn)) {}
  const ToolSpec& spec() const override { return spec_; }
  Json Call(ToolContext& ctx) override { return fn_(ctx); }

 private:
  ToolSpec spec_;
  Fn fn_;
};

ToolSpec Spec(std::string name, std::string description, const char* schema) {
  ToolSpec spec;
  spec.name = std::move(name);
  spec.description = std::move(description);
  spec.input_schema = Json::parse(schema);
  return spec;
}

constexpr const char* kNameSchema = R"({"type":"object",
  "properties":{"name":{"type":"string","minLength":1,"maxLength":128}},
  "required":["name"],"additionalProperties":false})";

}  // namespace

std::vector<std::unique_ptr<Tool>> MakeTestTools() {
  auto latches = std::make_shared<LatchRegistry>();
  std::vector<std::unique_ptr<Tool>> tools;

  tools.push_back(std::make_unique<FnTool>(
      Spec("sleep", "Test tool: waits ms milliseconds; stops early when cancelled.",
           R"({"type":"object","properties":{"ms":{"type":"integer","minimum":0,"maximum":600000}},
               "required":["ms"],"additionalProperties":false})"),
      [](ToolContext& ctx) {
        const auto ms = ctx.arguments().at("ms").get<long long>();
        const TimePoint until = std::chrono::steady_clock::now() + Millis(ms);
        if (ctx.token().WaitUntil(until)) return TextResult("cancelled");
        return TextResult("slept " + std::to_string(ms) + " ms");
      }));

  tools.push_back(std::make_unique<FnTool>(
      Spec("progress",
           "Test tool: reports progress 1..steps, interval_ms apart (sent when the call "
           "carries a progress token).",
           R"({"type":"object","properties":{
                 "steps":{"type":"integer","minimum":1,"maximum":10000},
                 "interval_ms":{"type":"integer","minimum":0,"maximum":60000}},
               "required":["steps"],"additionalProperties":false})"),
      [](ToolContext& ctx) {
        const auto steps = ctx.arguments().at("steps").get<int>();
        const auto interval = Millis(ctx.arguments().value("interval_ms", 0));
        for (int i = 1; i <= steps; ++i) {
          if (interval.count() > 0 &&
              ctx.token().WaitUntil(std::chrono::steady_clock::now() + interval)) {
            return TextResult("cancelled");
          }
          if (ctx.cancelled()) return TextResult("cancelled");
          ctx.ReportProgress(i, steps, "step " + std::to_string(i));
        }
        return TextResult("done " + std::to_string(steps) + " steps");
      }));

  tools.push_back(std::make_unique<FnTool>(
      Spec("latch_wait",
           "Test tool: blocks until latch_release opens the named latch. With "
           "ignore_cancel it also ignores cancellation (a non-cooperative tool).",
           R"({"type":"object",
               "properties":{"name":{"type":"string","minLength":1,"maxLength":128},
                             "ignore_cancel":{"type":"boolean"}},
               "required":["name"],"additionalProperties":false})"),
      [latches](ToolContext& ctx) {
        const auto name = ctx.arguments().at("name").get<std::string>();
        const bool stubborn = ctx.arguments().value("ignore_cancel", false);
        const CancellationToken never_cancelled;
        if (!latches->Wait(name, stubborn ? never_cancelled : ctx.token())) {
          return TextResult("cancelled");
        }
        return TextResult("released " + name);
      }));

  ToolSpec release = Spec("latch_release",
                          "Test tool: opens the named latch for good (takes no worker slot).",
                          kNameSchema);
  release.runs_on_loop = true;
  tools.push_back(std::make_unique<FnTool>(std::move(release), [latches](ToolContext& ctx) {
    const auto name = ctx.arguments().at("name").get<std::string>();
    const bool first = latches->Release(name);
    return TextResult((first ? "released " : "already released ") + name);
  }));

  tools.push_back(std::make_unique<FnTool>(
      Spec("fail", "Test tool: returns an error result with the given message.",
           R"({"type":"object","properties":{"message":{"type":"string"}},
               "required":["message"],"additionalProperties":false})"),
      [](ToolContext& ctx) {
        return ErrorResult(ctx.arguments().at("message").get<std::string>(),
                           Json{{"type", "tool_failed"}});
      }));
  return tools;
}

}  // namespace keel
