#include "server/tools/conformance_task_tools.h"

#include <chrono>
#include <stdexcept>
#include <string>
#include <utility>

#include "protocol/tool_result.h"
#include "server/tools/fn_tool.h"
#include "server/tools/input_questions.h"

namespace keel {
namespace {

std::unique_ptr<Tool> TaskFixture(std::string name, std::string description, TaskSupport support,
                                  FnTool::Fn fn,
                                  const char* schema = R"({"type":"object","properties":{}})",
                                  bool asks = false) {
  ToolSpec spec;
  spec.name = std::move(name);
  spec.description = "Conformance fixture (tasks): " + std::move(description);
  spec.input_schema = Json::parse(schema);
  spec.task_support = support;
  spec.asks_for_input = asks;
  return std::make_unique<FnTool>(std::move(spec), std::move(fn));
}

// Waits `delay`, or less if the call is cancelled, and then stops there if it was.
void WaitOrStop(const ToolContext& ctx, Millis delay) {
  if (delay > Millis(0)) ctx.token().WaitUntil(std::chrono::steady_clock::now() + delay);
  ctx.checkpoint();
}

Json SlowCompute(ToolContext& ctx) {
  const double seconds = ctx.arguments().value("seconds", 0.0);
  const std::string label = ctx.arguments().value("label", std::string("work"));
  if (seconds > 0) ctx.BecomeTask();
  WaitOrStop(ctx, Millis(static_cast<int64_t>(seconds * 1000)));
  return TextResult("Computed " + label + " in " + ctx.arguments().at("seconds").dump() + " s");
}

Json GreetThenTask(ToolContext& ctx) {
  const Json* answer = ctx.InputResponse("user_name");
  if (answer == nullptr) {
    return AskForInput(Json{{"user_name", ElicitString("What is your name?", "name")}});
  }
  std::string refused;
  const std::optional<std::string> name = AcceptedString(*answer, "name", &refused);
  if (!name) {
    if (refused.rfind("accepted", 0) == 0) {
      return AskForInput(Json{{"user_name", ElicitString("What is your name?", "name")}});
    }
    return ErrorResult("The user did not give a name (" + refused + "); nothing was done.",
                       Json{{"type", "input_declined"}, {"action", refused}});
  }
  // The answers are in: the rest of the work is the task's.
  ctx.BecomeTask();
  return TextResult("Hello, " + *name + "! (done as a task)");
}

Json ConfirmForm(const std::string& message) {
  return ElicitForm(message, Json{{"type", "object"},
                                  {"properties", {{"confirm", {{"type", "boolean"}}}}},
                                  {"required", Json::array({"confirm"})}});
}

// confirm_delete: a task at once, whose work asks one confirmation.
Json ConfirmDelete(ToolContext& ctx) {
  ctx.BecomeTask();
  const std::string filename = ctx.arguments().value("filename", std::string());
  const Json* answer = ctx.InputResponse("confirm");
  if (answer == nullptr)
    return AskForInput(Json{{"confirm", ConfirmForm("Delete " + filename + "?")}});
  const Json content = answer->value("content", Json::object());
  const bool confirmed = answer->value("action", std::string()) == "accept" &&
                         content.is_object() && content.value("confirm", false);
  return TextResult((confirmed ? "Deleted " : "Kept ") + filename +
                    " (a fixture: no file is touched)");
}

// multi_input: a task at once, whose work asks two questions at the same time.
Json MultiInput(ToolContext& ctx) {
  ctx.BecomeTask();
  const Json form =
      Json{{"type", "object"},
           {"properties", {{"name", {{"type", "string"}}}, {"confirm", {{"type", "boolean"}}}}},
           {"required", Json::array({"name", "confirm"})}};
  Json missing = Json::object();
  for (const char* key : {"first", "second"}) {
    if (ctx.InputResponse(key) == nullptr)
      missing[key] = ElicitForm(std::string("Input ") + key, form);
  }
  if (!missing.empty()) return AskForInput(std::move(missing));
  return TextResult("first: " + ElicitationText(*ctx.InputResponse("first")) +
                    "; second: " + ElicitationText(*ctx.InputResponse("second")));
}

}  // namespace

std::vector<std::unique_ptr<Tool>> MakeConformanceTaskTools(Millis failure_delay) {
  std::vector<std::unique_ptr<Tool>> tools;
  tools.push_back(TaskFixture(
      "greet", "greets by name, never as a task.", TaskSupport::kForbidden,
      [](ToolContext& ctx) {
        return TextResult("Hello, " + ctx.arguments().value("name", std::string()) + "!");
      },
      R"({"type":"object","properties":{"name":{"type":"string"}},"required":["name"]})"));
  tools.push_back(TaskFixture(
      "slow_compute",
      "waits `seconds` (a task when the client declares the tasks extension and seconds > 0).",
      TaskSupport::kOptional, SlowCompute,
      R"({"type":"object","properties":{"seconds":{"type":"number","minimum":0,"maximum":3600},
          "label":{"type":"string"}},"required":["seconds"]})"));
  tools.push_back(TaskFixture(
      "failing_job", "always a task; fails with a tool error (isError) after a second.",
      TaskSupport::kRequired, [failure_delay](ToolContext& ctx) {
        WaitOrStop(ctx, failure_delay);
        return ErrorResult("failing_job failed, as it always does", Json{{"type", "tool_failed"}});
      }));
  tools.push_back(TaskFixture(
      "protocol_error_job", "always a task; fails with an internal error after a second.",
      TaskSupport::kRequired, [failure_delay](ToolContext& ctx) -> Json {
        WaitOrStop(ctx, failure_delay);
        throw std::runtime_error("protocol_error_job failed outside its result, as it always does");
      }));
  tools.push_back(TaskFixture(
      "test_tool_with_task",
      "asks the user's name first (MRTR), then finishes as a task that greets them.",
      TaskSupport::kRequired, GreetThenTask, R"({"type":"object","properties":{}})", true));
  tools.push_back(TaskFixture(
      "confirm_delete", "always a task; its work asks to confirm deleting `filename`.",
      TaskSupport::kRequired, ConfirmDelete,
      R"({"type":"object","properties":{"filename":{"type":"string"}},"required":["filename"]})",
      true));
  tools.push_back(TaskFixture("multi_input", "always a task; its work asks two questions at once.",
                              TaskSupport::kRequired, MultiInput,
                              R"({"type":"object","properties":{}})", true));
  return tools;
}

}  // namespace keel
