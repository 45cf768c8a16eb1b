// The typed MCP results keel answers on the loop, written in the shape keel has always sent,
// and the errors every request can earn before any work starts.
#include "protocol/mcp_results.h"

#include <string>

#include <catch2/catch.hpp>

#include "protocol/cursor.h"
#include "protocol/error_codes.h"
#include "protocol/mcp_error.h"

namespace keel::mcp_results_test {
namespace {

ToolDescription Echo() {
  ToolDescription tool;
  tool.name = "echo";
  tool.description = "Echoes";
  tool.input_schema = {{"type", "object"}};
  return tool;
}

}  // namespace

TEST_CASE("an initialize result is written with its capabilities, server info and instructions") {
  InitializeResult result;
  result.protocol_version = "2025-11-25";
  result.server_info = {"keel", "keel reliable MCP server", "1.2.3"};
  result.instructions = "Be careful.";
  CHECK(Json(result) == Json::parse(R"({"protocolVersion":"2025-11-25",
                        "capabilities":{"tools":{"listChanged":false},"logging":{}},
                        "serverInfo":{"name":"keel","title":"keel reliable MCP server",
                                      "version":"1.2.3"},
                        "instructions":"Be careful."})"));
  result.capabilities.tasks = true;
  CHECK(Json(result)["capabilities"]["tasks"] ==
        Json::parse(R"({"list":{},"cancel":{},"requests":{"tools":{"call":{}}}})"));
}

TEST_CASE("server info without a title and a result without instructions leave them out") {
  InitializeResult result;
  result.protocol_version = "2025-06-18";
  result.server_info = {"keel", "", "0.0.0"};
  const Json json = result;
  CHECK(json["serverInfo"] == Json{{"name", "keel"}, {"version", "0.0.0"}});
  CHECK_FALSE(json.contains("instructions"));
}

TEST_CASE("a tool description writes only the members the tool has") {
  ToolDescription tool = Echo();
  CHECK(Json(tool) ==
        Json{{"name", "echo"}, {"description", "Echoes"}, {"inputSchema", {{"type", "object"}}}});
  tool.title = "Echo";
  tool.output_schema = {{"type", "object"}};
  tool.annotations = {{"readOnlyHint", true}};
  tool.task_support = "optional";
  const Json json = tool;
  CHECK(json["title"] == "Echo");
  CHECK(json["outputSchema"] == Json{{"type", "object"}});
  CHECK(json["annotations"] == Json{{"readOnlyHint", true}});
  CHECK(json["execution"] == Json{{"taskSupport", "optional"}});
}

TEST_CASE("a tools/list page carries a tools cursor only when more tools follow") {
  ListToolsResult page{{Echo()}, std::nullopt};
  CHECK(Json(page) == Json{{"tools", Json::array({Json(Echo())})}});
  page.next_offset = 100;
  CHECK(Json(page)["nextCursor"] == EncodeCursor("tools", 100));
  CHECK(Json(ListToolsResult{})["tools"] == Json::array());
}

TEST_CASE("a tasks/list page carries a tasks cursor only when more tasks follow") {
  ListTasksResult page{{Json{{"taskId", "t"}}}, std::nullopt};
  CHECK(Json(page) == Json{{"tasks", Json::array({Json{{"taskId", "t"}}})}});
  page.next_after = 7;
  CHECK(Json(page)["nextCursor"] == EncodeCursor("tasks", 7));
}

TEST_CASE("dispatch errors carry keel's codes and texts, quoting at most 80 bytes") {
  CHECK(MethodNotFound("server/discover") ==
        RpcError{kMethodNotFound, "Method not found: server/discover", Json()});
  CHECK(MethodNotFound(std::string(81, 'm')).message ==
        "Method not found: " + std::string(80, 'm') + "...");
  CHECK(NotInitialized() ==
        RpcError{kInvalidRequest, "Server not initialized: send initialize first", Json()});
  CHECK(AlreadyInitialized() ==
        RpcError{kInvalidRequest, "Invalid Request: already initialized", Json()});
  CHECK(UnknownTool("x") == RpcError{kInvalidParams, "Unknown tool: x", Json()});
}

TEST_CASE("an id in flight is named with its type: 0 and \"0\" differ") {
  CHECK(IdInFlight(Json(0)).message == "Invalid Request: request id 0 is already in flight");
  CHECK(IdInFlight(Json("0")).message == "Invalid Request: request id \"0\" is already in flight");
  CHECK(IdInFlight(Json(0)).code == kInvalidRequest);
}

TEST_CASE("an error is encoded with its id, or without one when none could be read") {
  const RpcError error{kInvalidParams, "Invalid params: x", Json{{"type", "t"}}};
  CHECK(EncodeRpcError(Json(0), error) ==
        R"({"jsonrpc":"2.0","id":0,"error":{"code":-32602,"data":{"type":"t"},)"
        R"("message":"Invalid params: x"}})");
  CHECK(EncodeRpcError(std::nullopt, MethodNotFound("m")) ==
        R"({"jsonrpc":"2.0","error":{"code":-32601,"message":"Method not found: m"}})");
}

}  // namespace keel::mcp_results_test
