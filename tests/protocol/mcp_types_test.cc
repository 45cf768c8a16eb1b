// The typed MCP requests: each decoder takes what keel reads and answers every malformed
// shape with the error keel sends for it, text included; what a request encodes to decodes
// back to the same request.
#include "protocol/mcp_types.h"

#include <cstdint>
#include <limits>
#include <string>

#include <catch2/catch.hpp>

#include "protocol/cursor.h"
#include "protocol/error_codes.h"

namespace keel::mcp_types_test {
namespace {

// The error of a decoding that must fail.
template <typename T>
RpcError ErrorOf(const Decoded<T>& decoded) {
  REQUIRE_FALSE(decoded.ok());
  return decoded.error();
}

RpcError Params(const std::string& what) { return RpcError{kInvalidParams, what, Json()}; }

const KnownTool kOnlyEcho = [](const std::string& name) { return name == "echo"; };

}  // namespace

TEST_CASE("initialize decodes the requested version and keeps capabilities and client info") {
  const auto decoded = DecodeInitializeRequest({{"protocolVersion", "2025-06-18"},
                                                {"capabilities", {{"roots", Json::object()}}},
                                                {"clientInfo", {{"name", "c"}, {"version", "1"}}}});
  REQUIRE(decoded.ok());
  CHECK(decoded.value().protocol_version == "2025-06-18");
  CHECK(decoded.value().capabilities == Json{{"roots", Json::object()}});
  CHECK(decoded.value().client_info == Json{{"name", "c"}, {"version", "1"}});
}

TEST_CASE("initialize without a non-empty string protocolVersion is -32602 naming the field") {
  const RpcError expected =
      Params("Invalid params: initialize needs params.protocolVersion (a string)");
  CHECK(ErrorOf(DecodeInitializeRequest(Json())) == expected);
  CHECK(ErrorOf(DecodeInitializeRequest(Json::object())) == expected);
  CHECK(ErrorOf(DecodeInitializeRequest({{"protocolVersion", 20251125}})) == expected);
  CHECK(ErrorOf(DecodeInitializeRequest({{"protocolVersion", ""}})) == expected);
  CHECK(ErrorOf(DecodeInitializeRequest({{"protocolVersion", nullptr}})) == expected);
}

TEST_CASE("a tools/list cursor decodes to its offset and a missing or null one to the first") {
  CHECK(DecodeListToolsRequest(Json()).value().offset == 0);
  CHECK(DecodeListToolsRequest({{"cursor", nullptr}}).value().offset == 0);
  CHECK(DecodeListToolsRequest({{"cursor", EncodeCursor("tools", 40)}}).value().offset == 40);
}

TEST_CASE("a tools/list cursor keel did not mint for tools is -32602 invalid cursor") {
  const RpcError expected = Params("Invalid params: invalid cursor");
  CHECK(InvalidToolsCursor() == expected);
  for (const Json& cursor : {Json(7), Json("zz"), Json(""), Json(EncodeCursor("tasks", 1)),
                             Json::array({EncodeCursor("tools", 1)})}) {
    CHECK(ErrorOf(DecodeListToolsRequest({{"cursor", cursor}})) == expected);
  }
}

TEST_CASE("tools/call decodes its name, arguments, the kept _meta and the progress token") {
  const Json params = {{"name", "echo"},
                       {"arguments", {{"text", "hi"}}},
                       {"_meta", {{"progressToken", 0}, {"vendor/bulk", Json::array({1, 2})}}},
                       {"task", {{"ttl", 5}}}};
  const auto decoded = DecodeCallToolRequest(params, kOnlyEcho);
  REQUIRE(decoded.ok());
  const CallToolRequest& request = decoded.value();
  CHECK(request.name == "echo");
  CHECK(request.arguments == Json{{"text", "hi"}});
  CHECK(request.meta == Json{{"progressToken", 0}});  // what keel does not read is gone
  CHECK(request.progress_token == Json(0));
  REQUIRE(request.task);
  CHECK(*request.task == Json{{"ttl", 5}});
}

TEST_CASE("tools/call without arguments, _meta or task gets an empty object and nulls") {
  for (const Json& params : {Json{{"name", "echo"}},
                             Json{{"name", "echo"}, {"arguments", nullptr}, {"task", nullptr}}}) {
    const auto decoded = DecodeCallToolRequest(params, nullptr);
    REQUIRE(decoded.ok());
    CHECK(decoded.value().arguments == Json::object());
    CHECK(decoded.value().meta.is_null());
    CHECK(decoded.value().progress_token.is_null());
    CHECK_FALSE(decoded.value().task);
  }
  // A _meta that is not an object is no _meta.
  CHECK(DecodeCallToolRequest({{"name", "echo"}, {"_meta", 7}}, nullptr).value().meta.is_null());
}

TEST_CASE("tools/call checks the name, then the tool, then the arguments, then _meta") {
  const RpcError no_name = Params("Invalid params: tools/call needs a string name");
  CHECK(ErrorOf(DecodeCallToolRequest(Json(), kOnlyEcho)) == no_name);
  CHECK(ErrorOf(DecodeCallToolRequest({{"arguments", 1}}, kOnlyEcho)) == no_name);
  CHECK(ErrorOf(DecodeCallToolRequest({{"name", 7}}, kOnlyEcho)) == no_name);

  // An unknown tool is reported before arguments that are wrong too.
  CHECK(ErrorOf(DecodeCallToolRequest({{"name", "nope"}, {"arguments", 1}}, kOnlyEcho)) ==
        Params("Unknown tool: nope"));
  const RpcError bad_arguments = Params("Invalid params: arguments must be an object");
  CHECK(ErrorOf(DecodeCallToolRequest(
            {{"name", "echo"}, {"arguments", "x"}, {"_meta", {{"progressToken", true}}}},
            kOnlyEcho)) == bad_arguments);
  CHECK(ErrorOf(DecodeCallToolRequest({{"name", "echo"}, {"_meta", {{"progressToken", true}}}},
                                      kOnlyEcho)) ==
        Params("Invalid params: _meta.progressToken must be a string or a number, got boolean"));
  // Without a registry to ask, any name is taken.
  CHECK(DecodeCallToolRequest({{"name", "nope"}}, nullptr).ok());
}

TEST_CASE("tools/call keeps inputResponses and requestState, and refuses them mistyped",
          "[MRTR-1]") {
  const auto decoded = DecodeCallToolRequest({{"name", "echo"},
                                              {"inputResponses", {{"a", {{"action", "accept"}}}}},
                                              {"requestState", "s"}},
                                             kOnlyEcho);
  REQUIRE(decoded.ok());
  CHECK(decoded.value().input_responses == Json{{"a", {{"action", "accept"}}}});
  CHECK(decoded.value().request_state == "s");
  const auto none =
      DecodeCallToolRequest({{"name", "echo"}, {"inputResponses", nullptr}}, kOnlyEcho);
  REQUIRE(none.ok());
  CHECK(none.value().input_responses.is_null());
  CHECK_FALSE(none.value().request_state);
  CHECK(ErrorOf(DecodeCallToolRequest({{"name", "echo"}, {"inputResponses", 12345}}, kOnlyEcho)) ==
        Params("Invalid params: inputResponses must be an object"));
  CHECK(ErrorOf(DecodeCallToolRequest({{"name", "echo"}, {"requestState", 7}}, kOnlyEcho)) ==
        Params("Invalid params: requestState must be a string"));
}

TEST_CASE("an unknown tool's name is quoted at most 80 bytes long") {
  const std::string name(100, 'n');
  CHECK(ErrorOf(DecodeCallToolRequest({{"name", name}}, kOnlyEcho)).message ==
        "Unknown tool: " + std::string(80, 'n') + "...");
}

TEST_CASE("task metadata decodes its ttl, saturated, and null or absent means none") {
  CHECK(DecodeTaskMetadata(Json::object()).value().ttl_ms == std::nullopt);
  CHECK(DecodeTaskMetadata({{"ttl", nullptr}}).value().ttl_ms == std::nullopt);
  CHECK(DecodeTaskMetadata({{"ttl", 0}}).value().ttl_ms == 0);
  CHECK(DecodeTaskMetadata({{"ttl", 60000}}).value().ttl_ms == 60000);
  CHECK(DecodeTaskMetadata({{"ttl", std::numeric_limits<uint64_t>::max()}}).value().ttl_ms ==
        std::numeric_limits<int64_t>::max());
}

TEST_CASE("task metadata of the wrong shape is -32602 saying what is expected") {
  const RpcError not_object = Params("Invalid params: task must be an object ({\"ttl\"?: ms})");
  CHECK(ErrorOf(DecodeTaskMetadata("x")) == not_object);
  CHECK(ErrorOf(DecodeTaskMetadata(Json::array())) == not_object);
  const RpcError bad_ttl =
      Params("Invalid params: task.ttl must be a non-negative integer (milliseconds) or null");
  for (const Json& ttl : {Json(-1), Json(1.5), Json("5"), Json(true)}) {
    CHECK(ErrorOf(DecodeTaskMetadata({{"ttl", ttl}})) == bad_ttl);
  }
}

TEST_CASE("logging/setLevel takes the eight MCP levels and nothing else") {
  CHECK(DecodeSetLevelRequest({{"level", "debug"}}).value().level == LoggingLevel::kDebug);
  CHECK(DecodeSetLevelRequest({{"level", "emergency"}}).value().level == LoggingLevel::kEmergency);
  for (int i = 0; i <= static_cast<int>(LoggingLevel::kEmergency); ++i) {
    const auto level = static_cast<LoggingLevel>(i);
    CHECK(ParseLoggingLevel(LoggingLevelName(level)) == level);
  }
  const RpcError expected = Params(
      "Invalid params: level must be one of debug, info, notice, warning, error, critical, "
      "alert, emergency");
  for (const Json& params :
       {Json(), Json::object(), Json{{"level", "verbose"}}, Json{{"level", 1}}}) {
    CHECK(ErrorOf(DecodeSetLevelRequest(params)) == expected);
  }
}

TEST_CASE("tasks/get, tasks/result and tasks/cancel need a non-empty string taskId") {
  CHECK(DecodeGetTaskRequest({{"taskId", "t1"}}).value().task_id == "t1");
  CHECK(DecodeTaskResultRequest({{"taskId", "t2"}}).value().task_id == "t2");
  CHECK(DecodeCancelTaskRequest({{"taskId", "0"}}).value().task_id == "0");
  const RpcError expected = Params("Invalid params: taskId (a non-empty string) is required");
  for (const Json& params : {Json(), Json::object(), Json{{"taskId", ""}}, Json{{"taskId", 0}}}) {
    CHECK(ErrorOf(DecodeGetTaskRequest(params)) == expected);
    CHECK(ErrorOf(DecodeTaskResultRequest(params)) == expected);
    CHECK(ErrorOf(DecodeCancelTaskRequest(params)) == expected);
  }
}

TEST_CASE("a tasks/list cursor decodes to its row and a forged or foreign one is -32602") {
  CHECK(DecodeListTasksRequest(Json()).value().after == 0);
  CHECK(DecodeListTasksRequest({{"cursor", EncodeCursor("tasks", 12)}}).value().after == 12);
  const RpcError expected = Params("Failed to list tasks: Invalid cursor");
  const size_t past_int64 = static_cast<size_t>(std::numeric_limits<int64_t>::max()) + 1;
  for (const Json& cursor : {Json(3), Json("nothex"), Json(EncodeCursor("tools", 1)),
                             Json(EncodeCursor("tasks", past_int64))}) {
    CHECK(ErrorOf(DecodeListTasksRequest({{"cursor", cursor}})) == expected);
  }
}

TEST_CASE("notifications/cancelled keeps requestId as sent, so 0 and \"0\" stay apart") {
  const auto number = DecodeCancelledNotification({{"requestId", 0}, {"reason", "user"}});
  REQUIRE(number);
  CHECK(number->request_id == Json(0));
  CHECK(number->request_id.is_number_integer());
  CHECK(number->reason == "user");
  const auto text = DecodeCancelledNotification({{"requestId", "0"}, {"reason", 5}});
  REQUIRE(text);
  CHECK(text->request_id == Json("0"));
  CHECK_FALSE(text->reason);  // a reason that is not a string is no reason
  // Malformed ids are kept too: the coordinator counts and ignores them (CAN-3).
  CHECK(DecodeCancelledNotification({{"requestId", nullptr}})->request_id.is_null());
}

TEST_CASE("notifications/cancelled without params or requestId is nothing to act on") {
  CHECK_FALSE(DecodeCancelledNotification(Json()));
  CHECK_FALSE(DecodeCancelledNotification(Json::object()));
  CHECK_FALSE(DecodeCancelledNotification({{"reason", "x"}}));
}

TEST_CASE("every request encodes to params that decode to the same request") {
  const InitializeRequest initialize{"2025-11-25", Json::object(), {{"name", "c"}}};
  CHECK(DecodeInitializeRequest(Json(initialize)).value() == initialize);
  CHECK(DecodeListToolsRequest(Json(ListToolsRequest{})).value() == ListToolsRequest{});
  CHECK(DecodeListToolsRequest(Json(ListToolsRequest{100})).value() == ListToolsRequest{100});
  CallToolRequest call{"echo", {{"text", "t"}}, {{"progressToken", "p"}}, "p", Json::object()};
  CHECK(DecodeCallToolRequest(Json(call), nullptr).value() == call);
  CHECK(DecodeTaskMetadata(Json(TaskMetadata{42})).value() == TaskMetadata{42});
  CHECK(DecodeTaskMetadata(Json(TaskMetadata{})).value() == TaskMetadata{});
  const SetLevelRequest level{LoggingLevel::kWarning};
  CHECK(DecodeSetLevelRequest(Json(level)).value() == level);
  CHECK(DecodeGetTaskRequest(Json(GetTaskRequest{"t"})).value() == GetTaskRequest{"t"});
  CHECK(DecodeTaskResultRequest(Json(TaskResultRequest{"t"})).value() == TaskResultRequest{"t"});
  CHECK(DecodeCancelTaskRequest(Json(CancelTaskRequest{"t"})).value() == CancelTaskRequest{"t"});
  CHECK(DecodeListTasksRequest(Json(ListTasksRequest{9})).value() == ListTasksRequest{9});
  const CancelledNotification cancelled{"0", "late"};
  CHECK(DecodeCancelledNotification(Json(cancelled)) == cancelled);
  CHECK(Json(PingRequest{}) == Json::object());
}

}  // namespace keel::mcp_types_test
