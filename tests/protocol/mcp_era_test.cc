// The protocol era: initialize picks the wire form, and the wire form alone decides which
// methods exist, whether params.task counts, and what the era-dependent parts of a result
// say. Handlers get the same typed requests in every era.
#include "protocol/mcp_era.h"

#include <string>
#include <variant>

#include <catch2/catch.hpp>

#include "protocol/error_codes.h"
#include "protocol/mcp_envelope.h"

namespace keel::mcp_era_test {
namespace {

const WireForm kTasks = NegotiateWireForm("2025-11-25", true);
const WireForm kNoTasks = NegotiateWireForm("2025-06-18", true);

template <typename T>
const T& As(const Decoded<McpRequest>& decoded) {
  REQUIRE(decoded.ok());
  REQUIRE(std::holds_alternative<T>(decoded.value()));
  return std::get<T>(decoded.value());
}

ToolDescription Sleep() {
  ToolDescription tool;
  tool.name = "sleep";
  tool.description = "Sleeps";
  tool.input_schema = {{"type", "object"}};
  tool.task_support = "optional";
  return tool;
}

}  // namespace

TEST_CASE("initialize negotiates the era, and tasks only with 2025-11-25 and a task store") {
  CHECK(kTasks == WireForm{McpEra::kMcp20251125, "2025-11-25", true});
  CHECK(kNoTasks == WireForm{McpEra::kMcp20250618, "2025-06-18", false});
  CHECK(NegotiateWireForm("2025-11-25", false) ==
        WireForm{McpEra::kMcp20251125, "2025-11-25", false});
  // A version keel does not speak gets the latest (MCP lifecycle).
  CHECK(NegotiateWireForm("1900-01-01", true) == kTasks);
  CHECK(WireForm{}.era == McpEra::kUnnegotiated);
}

TEST_CASE("the tasks methods exist only where tasks are offered") {
  for (const char* name : {"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"}) {
    CHECK(MethodOf(kTasks, name));
    CHECK_FALSE(MethodOf(kNoTasks, name));
    CHECK_FALSE(MethodOf(NegotiateWireForm("2025-11-25", false), name));
    CHECK_FALSE(MethodOf(WireForm{}, name));  // before initialize
  }
  CHECK(MethodOf(kTasks, "tasks/result") == McpMethod::kTaskResult);
}

TEST_CASE("the tools, logging, ping and initialize methods exist in every legacy era") {
  for (const WireForm& wire : {WireForm{}, kNoTasks, kTasks}) {
    CHECK(MethodOf(wire, "initialize") == McpMethod::kInitialize);
    CHECK(MethodOf(wire, "ping") == McpMethod::kPing);
    CHECK(MethodOf(wire, "tools/list") == McpMethod::kListTools);
    CHECK(MethodOf(wire, "tools/call") == McpMethod::kCallTool);
    CHECK(MethodOf(wire, "logging/setLevel") == McpMethod::kSetLevel);
    CHECK_FALSE(MethodOf(wire, "server/discover"));
    CHECK_FALSE(MethodOf(wire, "Ping"));
  }
}

TEST_CASE("the cancelled and initialized notifications are known, any other is ignored") {
  CHECK(NotificationOf(kTasks, "notifications/cancelled") == McpNotification::kCancelled);
  CHECK(NotificationOf(kNoTasks, "notifications/initialized") == McpNotification::kInitialized);
  CHECK_FALSE(NotificationOf(kTasks, "notifications/progress"));
}

TEST_CASE("params.task of tools/call is kept with tasks and dropped unread without") {
  const Json params = {{"name", "sleep"}, {"arguments", {{"ms", 1}}}, {"task", "not an object"}};
  const auto with = DecodeRequest(kTasks, McpMethod::kCallTool, params);
  CHECK(As<CallToolRequest>(with).task == Json("not an object"));
  const auto without = DecodeRequest(kNoTasks, McpMethod::kCallTool, params);
  CHECK_FALSE(As<CallToolRequest>(without).task);
}

TEST_CASE("each method decodes to its typed request") {
  CHECK(As<InitializeRequest>(
            DecodeRequest(WireForm{}, McpMethod::kInitialize, {{"protocolVersion", "2025-11-25"}}))
            .protocol_version == "2025-11-25");
  CHECK(
      std::holds_alternative<PingRequest>(DecodeRequest(kTasks, McpMethod::kPing, Json()).value()));
  CHECK(As<ListToolsRequest>(DecodeRequest(kTasks, McpMethod::kListTools, Json())).offset == 0);
  CHECK(As<SetLevelRequest>(DecodeRequest(kTasks, McpMethod::kSetLevel, {{"level", "error"}}))
            .level == LoggingLevel::kError);
  const Json task = {{"taskId", "t"}};
  CHECK(As<GetTaskRequest>(DecodeRequest(kTasks, McpMethod::kGetTask, task)).task_id == "t");
  CHECK(As<TaskResultRequest>(DecodeRequest(kTasks, McpMethod::kTaskResult, task)).task_id == "t");
  CHECK(As<CancelTaskRequest>(DecodeRequest(kTasks, McpMethod::kCancelTask, task)).task_id == "t");
  CHECK(As<ListTasksRequest>(DecodeRequest(kTasks, McpMethod::kListTasks, Json())).after == 0);
}

TEST_CASE("a malformed request decodes to the error of its method's decoder") {
  const auto decoded = DecodeRequest(kTasks, McpMethod::kCallTool, {{"name", "nope"}},
                                     [](const std::string&) { return false; });
  REQUIRE_FALSE(decoded.ok());
  CHECK(decoded.error() == UnknownTool("nope"));
  const auto level = DecodeRequest(kNoTasks, McpMethod::kSetLevel, Json());
  REQUIRE_FALSE(level.ok());
  CHECK(level.error().code == kInvalidParams);
}

TEST_CASE("the initialize result offers the tasks capability only where tasks are offered") {
  const Implementation keel{"keel", "keel reliable MCP server", "1.0.0"};
  const InitializeResult with = InitializeResultFor(kTasks, keel, "hello");
  CHECK(with.protocol_version == "2025-11-25");
  CHECK(with.capabilities.tasks);
  CHECK(ToWire(kTasks, with)["capabilities"].contains("tasks"));
  const InitializeResult without = InitializeResultFor(kNoTasks, keel, "hello");
  CHECK(without.protocol_version == "2025-06-18");
  CHECK_FALSE(ToWire(kNoTasks, without)["capabilities"].contains("tasks"));
  CHECK(ToWire(kNoTasks, without)["instructions"] == "hello");
}

TEST_CASE("tools/list shows execution.taskSupport only where tasks are offered") {
  const ListToolsResult page{{Sleep()}, std::nullopt};
  CHECK(ToWire(kTasks, page)["tools"][0]["execution"] == Json{{"taskSupport", "optional"}});
  CHECK_FALSE(ToWire(kNoTasks, page)["tools"][0].contains("execution"));
  CHECK_FALSE(
      ToWire(NegotiateWireForm("2025-11-25", false), page)["tools"][0].contains("execution"));
}

TEST_CASE("a tasks/list result is written as it is in every era with tasks") {
  const ListTasksResult page{{Json{{"taskId", "t"}}}, 3};
  CHECK(ToWire(kTasks, page) == Json(page));
}

const WireForm kModern = ModernWireForm(false);
const Implementation kKeel{"keel", "", "1.2.3"};

TEST_CASE("a modern request's era is 2026-07-28 without tasks", "[ERA-1]") {
  CHECK(kModern == WireForm{McpEra::kMcp20260728, "2026-07-28", false});
  CHECK(IsModern(kModern));
  CHECK_FALSE(IsModern(kTasks));
}

TEST_CASE("the modern era has server/discover, tools/list and tools/call and nothing removed",
          "[ERA-3]") {
  CHECK(MethodOf(kModern, "server/discover") == McpMethod::kDiscover);
  CHECK(MethodOf(kModern, "tools/list") == McpMethod::kListTools);
  CHECK(MethodOf(kModern, "tools/call") == McpMethod::kCallTool);
  for (const char* removed :
       {"initialize", "ping", "logging/setLevel", "tasks/result", "tasks/list", "tasks/get",
        "tasks/cancel", "resources/subscribe", "resources/unsubscribe"}) {
    CHECK_FALSE(MethodOf(kModern, removed));
  }
}

const WireForm kModernTasks = ModernWireForm(true);

TEST_CASE("params.task of a modern tools/call is dropped unread, tasks extension or not",
          "[ERA-1][TASKX-1]") {
  for (const WireForm& wire : {kModern, kModernTasks}) {
    const auto decoded =
        DecodeRequest(wire, McpMethod::kCallTool, {{"name", "sleep"}, {"task", {{"ttl", 5}}}});
    CHECK_FALSE(As<CallToolRequest>(decoded).task);
  }
}

TEST_CASE("with a task store the modern era has tasks/get, tasks/update and tasks/cancel only",
          "[TASKX-1][ERA-3]") {
  CHECK(MethodOf(kModernTasks, "tasks/get") == McpMethod::kGetTask);
  CHECK(MethodOf(kModernTasks, "tasks/cancel") == McpMethod::kCancelTask);
  CHECK(MethodOf(kModernTasks, "tasks/update") == McpMethod::kUpdateTask);
  CHECK_FALSE(MethodOf(kModernTasks, "tasks/result"));
  CHECK_FALSE(MethodOf(kModernTasks, "tasks/list"));
  CHECK_FALSE(MethodOf(kModern, "tasks/update"));
  CHECK_FALSE(MethodOf(kTasks, "tasks/update"));  // legacy: SEP-1686 has no update
}

TEST_CASE("tasks/update needs a taskId and an inputResponses object", "[TASKX-1]") {
  const auto ok = DecodeRequest(kModernTasks, McpMethod::kUpdateTask,
                                {{"taskId", "t"}, {"inputResponses", {{"k", 1}}}});
  CHECK(As<UpdateTaskRequest>(ok) == UpdateTaskRequest{"t", {{"k", 1}}});
  CHECK_FALSE(
      DecodeRequest(kModernTasks, McpMethod::kUpdateTask, {{"inputResponses", Json::object()}})
          .ok());
  CHECK_FALSE(
      DecodeRequest(kModernTasks, McpMethod::kUpdateTask, {{"taskId", "t"}, {"inputResponses", 1}})
          .ok());
}

TEST_CASE("server/discover offers the tasks extension, never the legacy tasks capability",
          "[TASKX-1][ERA-2]") {
  const Json with = ToWire(kModernTasks, DiscoverResultFor(kModernTasks, "", CacheHints{}));
  CHECK(with["capabilities"]["extensions"] ==
        Json{{"io.modelcontextprotocol/tasks", Json::object()}});
  CHECK_FALSE(with["capabilities"].contains("tasks"));
  const Json without = ToWire(kModern, DiscoverResultFor(kModern, "", CacheHints{}));
  CHECK_FALSE(without["capabilities"].contains("extensions"));
  const Json legacy = ToWire(kTasks, InitializeResultFor(kTasks, Implementation{}, ""));
  CHECK_FALSE(legacy["capabilities"].contains("extensions"));
}

TEST_CASE("a legacy tools/call leaves inputResponses and requestState unread", "[MRTR-1]") {
  const Json params = {{"name", "sleep"}, {"inputResponses", "x"}, {"requestState", 7}};
  const Decoded<McpRequest> decoded = DecodeRequest(kTasks, McpMethod::kCallTool, params);
  const CallToolRequest& legacy = As<CallToolRequest>(decoded);
  CHECK(legacy.input_responses.is_null());
  CHECK_FALSE(legacy.request_state);
  CHECK_FALSE(DecodeRequest(kModern, McpMethod::kCallTool, params).ok());
}

TEST_CASE("a modern result gets resultType complete and the server in _meta, keeping its own",
          "[ERA-4]") {
  const Json finished = FinishResult(
      kModern, Json{{"content", Json::array()}, {"_meta", {{"dev.keel/x", 1}}}}, kKeel);
  CHECK(finished["resultType"] == "complete");
  CHECK(finished["_meta"]["dev.keel/x"] == 1);
  CHECK(finished["_meta"][std::string(kMetaServerInfo)] ==
        Json{{"name", "keel"}, {"version", "1.2.3"}});
  CHECK_FALSE(finished.contains("serverInfo"));
  CHECK(FinishResult(kModern, Json::object(), kKeel)["resultType"] == "complete");
  // One that says what it is keeps it (input_required, task).
  CHECK(FinishResult(kModern, Json{{"resultType", "task"}}, kKeel)["resultType"] == "task");
}

TEST_CASE("a legacy result goes out exactly as the handler made it", "[ERA-4]") {
  const Json result = {{"content", Json::array()}};
  CHECK(FinishResult(kTasks, result, kKeel) == result);
  CHECK(FinishResult(WireForm{}, result, kKeel) == result);
}

TEST_CASE("tools/list carries the caching hints and no task support in the modern era only",
          "[ERA-4]") {
  ListToolsResult page{{Sleep()}, std::nullopt, CacheHints{60000, "private"}};
  const Json modern = ToWire(kModern, page);
  CHECK(modern["ttlMs"] == 60000);
  CHECK(modern["cacheScope"] == "private");
  CHECK_FALSE(modern["tools"][0].contains("execution"));
  const Json legacy = ToWire(kTasks, page);
  CHECK_FALSE(legacy.contains("ttlMs"));
  CHECK_FALSE(legacy.contains("cacheScope"));
  CHECK(legacy["tools"][0].contains("execution"));
}

TEST_CASE(
    "server/discover lists every version keel speaks, no tasks, the caching hints, and tools "
    "listChanged for subscriptions/listen",
    "[ERA-2][SUB-1]") {
  const Json discovered = FinishResult(
      kModern, ToWire(kModern, DiscoverResultFor(kModern, "hi", CacheHints{5, "public"})), kKeel);
  CHECK(discovered["supportedVersions"] == Json{"2026-07-28", "2025-11-25", "2025-06-18"});
  CHECK(discovered["capabilities"] ==
        Json{{"tools", {{"listChanged", true}}}, {"logging", Json::object()}});
  CHECK(discovered["instructions"] == "hi");
  CHECK(discovered["ttlMs"] == 5);
  CHECK(discovered["cacheScope"] == "public");
  CHECK(discovered["resultType"] == "complete");
  CHECK(discovered["_meta"][std::string(kMetaServerInfo)]["name"] == "keel");
  CHECK_FALSE(discovered.contains("serverInfo"));
}

TEST_CASE("a modern response line says what FinishResult says, whatever the result holds",
          "[ERA-4]") {
  const ResultStamp stamp(kKeel);
  for (const Json& result : {Json{{"content", Json::array()}, {"isError", false}}, Json::object(),
                             Json{{"_meta", {{"dev.keel/x", 1}}}, {"content", Json::array()}},
                             Json{{"resultType", "task"}}, Json(7)}) {
    const Json line = Json::parse(EncodeResultAs(kModern, Json(3), result, stamp));
    CHECK(line == Json::parse(EncodeResult(Json(3), FinishResult(kModern, result, kKeel))));
    CHECK(line["id"] == 3);
  }
}

TEST_CASE("a legacy response line is the plain encoding", "[ERA-4]") {
  const ResultStamp stamp(kKeel);
  const Json result = {{"content", Json::array()}};
  CHECK(EncodeResultAs(kTasks, Json("a"), result, stamp) == EncodeResult(Json("a"), result));
}

}  // namespace keel::mcp_era_test
