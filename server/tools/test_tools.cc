#include "server/tools/test_tools.h"

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "server/runtime/clock.h"
#include "server/tools/asking_tools.h"
#include "server/tools/fn_tool.h"
#include "server/tools/latch_registry.h"

namespace keel {
namespace {

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

// The flaky tools' attempt counters, by name, shared by the three tools of one server.
class FlakyCounters {
 public:
  // The 1-based number of this call on `name`, or 0 when no new counter fits.
  int Next(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = counts_.find(name);
    if (it == counts_.end()) {
      if (counts_.size() >= kMaxCounters) return 0;
      it = counts_.emplace(name, 0).first;
    }
    return ++it->second;
  }

 private:
  // A test names a handful; the bound keeps a runaway client from growing the map forever.
  static constexpr size_t kMaxCounters = 10000;
  std::mutex mu_;
  std::map<std::string, int> counts_;
};

// flaky_read, flaky_write, flaky_idempotent: one schema; the idempotent one also takes a key.
ToolSpec FlakySpec(std::string name, std::string description, EffectClass effect) {
  Json schema = Json::parse(R"({"type":"object",
      "properties":{
        "counter":{"type":"string","minLength":1,"maxLength":128},
        "fail":{"type":"array","maxItems":10,"items":{"type":"string","minLength":1,"maxLength":64}},
        "retry_after_ms":{"type":"integer","minimum":0,"maximum":60000},
        "hang":{"type":"boolean"}},
      "required":["counter"],"additionalProperties":false})");
  if (effect == EffectClass::kIdempotentWrite) {
    schema["properties"]["idempotencyKey"] = Json::parse(R"({"type":"string","minLength":1})");
  }
  ToolSpec spec;
  spec.name = std::move(name);
  spec.description = std::move(description);
  spec.input_schema = std::move(schema);
  spec.effect = effect;
  return spec;
}

// Call n on a counter fails with fail[n-1] while n <= fail.size(), then succeeds.
Json Flaky(FlakyCounters& counters, ToolContext& ctx) {
  const Json& args = ctx.arguments();
  const int n = counters.Next(args.at("counter").get<std::string>());
  if (n == 0) {
    return ErrorResult("flaky: too many counters", Json{{"type", "invalid_arguments"}});
  }
  const Json fail = args.value("fail", Json::array());
  if (static_cast<size_t>(n) <= fail.size()) {
    const auto type = fail[static_cast<size_t>(n) - 1].get<std::string>();
    if (type == "attempt_timeout" && args.value("hang", false)) {
      // A real timeout: hold the attempt until its deadline (or a cancel) ends it.
      ctx.token().WaitUntil(ctx.deadline());
      ctx.checkpoint();
    }
    Json error = Json{{"type", type}};
    if (args.contains("retry_after_ms")) error["retry_after_ms"] = args.at("retry_after_ms");
    return ErrorResult("flaky: scripted failure " + type + " on attempt " + std::to_string(n),
                       error);
  }
  Json result = TextResult("flaky: ok on attempt " + std::to_string(n));
  result["structuredContent"] = Json{{"attempt", n}};
  return result;
}

// Reports progress 1..steps, interval_ms apart, stopping at a cancel.
Json ReportSteps(ToolContext& ctx) {
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
}

// sleep, task_sleep, progress: the tools that take time.
void AddWaitingTools(std::vector<std::unique_ptr<Tool>>& tools) {
  tools.push_back(std::make_unique<FnTool>(
      Optional(Spec(
          "sleep", "Test tool: waits ms milliseconds; stops early when cancelled.",
          R"({"type":"object","properties":{"ms":{"type":"integer","minimum":0,"maximum":600000}},
               "required":["ms"],"additionalProperties":false})")),
      Sleep));

  ToolSpec task_sleep = Spec(
      "task_sleep", "Test tool: like sleep, but only as a task (execution.taskSupport required).",
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
      ReportSteps));
}

// latch_wait, latch_release: one LatchRegistry for both.
void AddLatchTools(std::vector<std::unique_ptr<Tool>>& tools) {
  auto latches = std::make_shared<LatchRegistry>();
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

  ToolSpec release =
      Spec("latch_release", "Test tool: opens the named latch for good (takes no worker slot).",
           kNameSchema);
  release.runs_on_loop = true;
  tools.push_back(std::make_unique<FnTool>(std::move(release), [latches](ToolContext& ctx) {
    const auto name = ctx.arguments().at("name").get<std::string>();
    const bool first = latches->Release(name);
    return TextResult((first ? "released " : "already released ") + name);
  }));
}

// flaky_read, flaky_write, flaky_idempotent: one FlakyCounters for the three.
void AddFlakyTools(std::vector<std::unique_ptr<Tool>>& tools) {
  auto counters = std::make_shared<FlakyCounters>();
  const auto flaky = [counters](ToolContext& ctx) { return Flaky(*counters, ctx); };
  constexpr const char* kFlakyDoc =
      " Call n on the named counter returns the scripted failure fail[n-1] (with "
      "retry_after_ms when given; with hang, an attempt_timeout first waits out the call's "
      "deadline), then succeeds.";
  tools.push_back(std::make_unique<FnTool>(
      FlakySpec("flaky_read", std::string("Test tool: a flaky read.") + kFlakyDoc,
                EffectClass::kRead),
      flaky));
  tools.push_back(std::make_unique<FnTool>(
      FlakySpec("flaky_write", std::string("Test tool: a flaky unsafe write.") + kFlakyDoc,
                EffectClass::kUnsafeWrite),
      flaky));
  tools.push_back(std::make_unique<FnTool>(
      FlakySpec(
          "flaky_idempotent",
          std::string("Test tool: a flaky idempotent write (optional idempotencyKey).") + kFlakyDoc,
          EffectClass::kIdempotentWrite),
      flaky));
}

}  // namespace

std::vector<std::unique_ptr<Tool>> MakeTestTools() {
  std::vector<std::unique_ptr<Tool>> tools;
  AddWaitingTools(tools);
  AddLatchTools(tools);
  tools.push_back(std::make_unique<FnTool>(
      Spec("fail", "Test tool: returns an error result with the given message.",
           R"({"type":"object","properties":{"message":{"type":"string"}},
               "required":["message"],"additionalProperties":false})"),
      [](ToolContext& ctx) {
        return ErrorResult(ctx.arguments().at("message").get<std::string>(),
                           Json{{"type", "tool_failed"}});
      }));
  AddFlakyTools(tools);
  AddAskingTools(tools);
  return tools;
}

}  // namespace keel
