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

// Waits `ms`; a cancel ends the wait and stops the tool at its checkpoint.
Json Sleep(ToolContext& ctx) {
  const auto ms = ctx.arguments().at("ms").get<long long>();
  ctx.token().WaitUntil(std::chrono::steady_clock::now() + Millis(ms));
  ctx.checkpoint();
  return TextResult("slept " + std::to_string(ms) + " ms");
}

ToolSpec Optional(ToolSpec spec) {
  spec.task_support = TaskSupport::kOptional;
  return spec;
}

}  // namespace

std::vector<std::unique_ptr<Tool>> MakeTestTools() {
  auto latches = std::make_shared<LatchRegistry>();
  std::vector<std::unique_ptr<Tool>> tools;

  tools.push_back(std::make_unique<FnTool>(
      Optional(Spec("sleep", "Test tool: waits ms milliseconds; stops early when cancelled.",
           R"({"type":"object","properties":{"ms":{"type":"integer","minimum":0,"maximum":600000}},
               "required":["ms"],"additionalProperties":false})")),
      Sleep));

  ToolSpec task_sleep =
      Spec("task_sleep",
           "Test tool: like sleep, but only as a task (execution.taskSupport required).",
           R"({"type":"object","properties":{"ms":{"type":"integer","minimum":0,"maximum":600000}},
               "required":["ms"],"additionalProperties":false})");
  task_sleep.task_support = TaskSupport::kRequired;
  tools.push_back(std::make_unique<FnTool>(std::move(task_sleep), Sleep));

  tools.push_back(std::make_unique<FnTool>(
      Optional(Spec("progress",
           "Test tool: reports progress 1..steps, interval_ms apart (sent when the call "
           "carries a progress token).",
           R"({"type":"object","properties":{
                 "steps":{"type":"integer","minimum":1,"maximum":10000},
                 "interval_ms":{"type":"integer","minimum":0,"maximum":60000}},
               "required":["steps"],"additionalProperties":false})")),
      [](ToolContext& ctx) {
        const auto steps = ctx.arguments().at("steps").get<int>();
        const auto interval = Millis(ctx.arguments().value("interval_ms", 0));
        for (int i = 1; i <= steps; ++i) {
          if (interval.count() > 0) {
            ctx.token().WaitUntil(std::chrono::steady_clock::now() + interval);
          }
          ctx.checkpoint();
          ctx.ReportProgress(i, steps, "step " + std::to_string(i));
        }
        return TextResult("done " + std::to_string(steps) + " steps");
      }));

  tools.push_back(std::make_unique<FnTool>(
      Optional(Spec("latch_wait",
           "Test tool: blocks until latch_release opens the named latch, then reaches a "
           "checkpoint. With ignore_cancel the wait ignores cancellation (a tool busy "
           "between checkpoints); with checkpoint false as well it never stops early (a "
           "non-cooperative tool that finishes after a cancel).",
           R"({"type":"object",
               "properties":{"name":{"type":"string","minLength":1,"maxLength":128},
                             "ignore_cancel":{"type":"boolean"},
                             "checkpoint":{"type":"boolean"}},
               "required":["name"],"additionalProperties":false})")),
      [latches](ToolContext& ctx) {
        const auto name = ctx.arguments().at("name").get<std::string>();
        const bool stubborn = ctx.arguments().value("ignore_cancel", false);
        const CancellationToken never_cancelled;
        latches->Wait(name, stubborn ? never_cancelled : ctx.token());
        // A cancel seen here stops the work (TASK-1: cancel_observed).
        if (ctx.arguments().value("checkpoint", true)) ctx.checkpoint();
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
