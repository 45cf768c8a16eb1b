// A tool's result passes the depth bound of bounded_json.h before anything copies or encodes
// it: whatever the tool, a result nested deeper than 128 levels becomes a
// tool error naming the limit, and the session keeps serving.
#include <catch2/catch.hpp>

#include "server/session/session_harness.h"
#include "server/tools/fn_tool.h"

namespace keel::result_depth_test {
namespace {

// {"deep": [[...]]} nested `depth` levels in all, built without recursion.
Json DeepObject(int depth) {
  Json value = Json::array();
  for (int i = 2; i < depth; ++i) {
    Json outer = Json::array();
    outer.push_back(std::move(value));
    value = std::move(outer);
  }
  Json object = Json::object();
  object["deep"] = std::move(value);
  return object;
}

std::unique_ptr<Tool> DeepTool(const char* name, int depth, bool on_loop) {
  ToolSpec spec;
  spec.name = name;
  spec.input_schema = Json{{"type", "object"}};
  spec.runs_on_loop = on_loop;
  return std::make_unique<FnTool>(std::move(spec), [depth](ToolContext&) {
    return StructuredResult("deep", DeepObject(depth));
  });
}

}  // namespace

TEST_CASE("a tool result nested deeper than 128 levels becomes a tool error naming the limit") {
  SessionHarness h;
  REQUIRE(h.Register(DeepTool("deep_worker", 100000, false)).empty());
  REQUIRE(h.Register(DeepTool("deep_loop", 100000, true)).empty());
  h.Initialize();
  for (const char* tool : {"deep_worker", "deep_loop"}) {
    INFO("tool " << tool);
    const Json id = tool;
    h.Send(h.Call(id, tool, Json::object()));
    REQUIRE(h.sink().ForId(id).size() == 1);
    Json result = h.sink().ForId(id)[0]["result"];
    CHECK(result["isError"] == true);
    CHECK(result["structuredContent"]["error"]["type"] == "result_too_deep");
    CHECK_THAT(result["content"][0]["text"].get<std::string>(),
               Catch::Contains("nested deeper than 128 levels"));
  }
  h.Send(R"({"jsonrpc":"2.0","id":9,"method":"ping"})");
  CHECK(h.sink().ForId(9).size() == 1);
}

TEST_CASE("a tool result at the depth limit is sent as the tool returned it") {
  SessionHarness h;
  // The result object, structuredContent and 126 more levels: 128.
  REQUIRE(h.Register(DeepTool("at_limit", 127, false)).empty());
  h.Initialize();
  h.Send(h.Call(1, "at_limit", Json::object()));
  REQUIRE(h.sink().ForId(1).size() == 1);
  Json result = h.sink().ForId(1)[0]["result"];
  CHECK_FALSE(result.contains("isError"));
  CHECK(result["structuredContent"].contains("deep"));
}

}  // namespace keel::result_depth_test
