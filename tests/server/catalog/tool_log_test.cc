// A tool's log messages (ToolContext::Log) reach the client as MCP notifications/message
// through the session's ClientLog: at the client's level, before the call's answer, never
// after the call settled.
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include <catch2/catch.hpp>

#include "server/session/session_harness.h"
#include "server/tools/fn_tool.h"

namespace keel::tool_log_test {
namespace {

std::unique_ptr<Tool> TestTool(const char* name, const char* description, FnTool::Fn fn) {
  ToolSpec spec;
  spec.name = name;
  spec.description = description;
  spec.input_schema = Json{{"type", "object"}};
  return std::make_unique<FnTool>(std::move(spec), std::move(fn));
}

// Logs "one" (info), "two" (debug), "three" (error), then returns.
std::unique_ptr<Tool> ThreeLogsTool() {
  return TestTool("three_logs", "test: logs three messages", [](ToolContext& ctx) {
    ctx.Log(LoggingLevel::kInfo, "one");
    ctx.Log(LoggingLevel::kDebug, "two");
    ctx.Log(LoggingLevel::kError, "three");
    return TextResult("done");
  });
}

// Logs `before`, waits until the call is cancelled (at most 10 s), logs `after`, returns.
std::unique_ptr<Tool> LogAroundCancelTool() {
  return TestTool(
      "log_around_cancel", "test: logs, waits for a cancel, logs again", [](ToolContext& ctx) {
        ctx.Log(LoggingLevel::kInfo, "before");
        ctx.token().WaitUntil(std::chrono::steady_clock::now() + std::chrono::seconds(10));
        ctx.Log(LoggingLevel::kInfo, "after");
        return TextResult("done");
      });
}

}  // namespace

TEST_CASE("a tool's log messages reach the client before its answer, named after the tool") {
  SessionHarness h;
  REQUIRE(h.Register(ThreeLogsTool()).empty());
  h.Initialize();
  h.Send(R"({"jsonrpc":"2.0","id":"lvl","method":"logging/setLevel","params":{"level":"debug"}})");
  h.Send(h.Call(1, "three_logs", Json::object()));
  const auto& all = h.sink().messages();
  REQUIRE(all.size() == 5);  // setLevel's answer, three messages, the call's answer
  const char* levels[] = {"info", "debug", "error"};
  const char* texts[] = {"one", "two", "three"};
  for (int i = 0; i < 3; ++i) {
    CHECK(all[i + 1]["method"] == "notifications/message");
    CHECK(all[i + 1]["params"]["level"] == levels[i]);
    CHECK(all[i + 1]["params"]["logger"] == "three_logs");
    CHECK(all[i + 1]["params"]["data"] == texts[i]);
  }
  CHECK(all[4]["id"] == 1);
}

TEST_CASE("a tool's log messages wait for the client's level unless keel starts with one") {
  SECTION("no level: nothing is sent") {
    SessionHarness h;
    REQUIRE(h.Register(ThreeLogsTool()).empty());
    h.Initialize();
    h.Send(h.Call(1, "three_logs", Json::object()));
    CHECK(h.sink().WithMethod("notifications/message").empty());
    CHECK(h.sink().ForId(1).size() == 1);
  }
  SECTION("a start-up level lets them through, and setLevel replaces it") {
    SessionOptions options;
    options.client_log_level = LoggingLevel::kInfo;
    SessionHarness h(0, options);
    REQUIRE(h.Register(ThreeLogsTool()).empty());
    h.Initialize();
    h.Send(h.Call(1, "three_logs", Json::object()));
    CHECK(h.sink().WithMethod("notifications/message").size() == 2);  // not the debug one
    h.Send(
        R"({"jsonrpc":"2.0","id":"lvl","method":"logging/setLevel","params":{"level":"error"}})");
    h.Send(h.Call(2, "three_logs", Json::object()));
    CHECK(h.sink().WithMethod("notifications/message").size() == 3);  // only "three" more
  }
}

TEST_CASE("a log message a tool sends after its call was cancelled is dropped") {
  SessionOptions options;
  options.client_log_level = LoggingLevel::kDebug;
  SessionHarness h(1, options);
  REQUIRE(h.Register(LogAroundCancelTool()).empty());
  h.Initialize();
  h.Send(h.Call(1, "log_around_cancel", Json::object()));
  // Its "before" message is out before the cancel (bounded wait for the worker's post).
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (h.sink().WithMethod("notifications/message").empty() &&
         std::chrono::steady_clock::now() < until) {
    h.Pump();
    std::this_thread::yield();
  }
  REQUIRE(h.sink().WithMethod("notifications/message").size() == 1);
  h.Send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})");
  // The single worker runs the echo only after log_around_cancel returned, so its "after"
  // message was posted (and handled) before the echo's answer.
  h.Send(h.Call(2, "echo", {{"text", "next"}}));
  REQUIRE(h.WaitFor(2));
  const auto logs = h.sink().WithMethod("notifications/message");
  REQUIRE(logs.size() == 1);
  CHECK(logs[0]["params"]["data"] == "before");
  CHECK(h.sink().ForId(1).empty());
}

}  // namespace keel::tool_log_test
