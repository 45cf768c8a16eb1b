// A malformed request sent to a Session is answered byte for byte as the era (mcp_era.h)
// and the typed decoders answer it alone: the Session adds only what is its own (the
// lifecycle and in-flight checks, which come first). The texts are the ones the transcripts
// in conformance/ compare.
#include <string>

#include <catch2/catch.hpp>

#include "protocol/cursor.h"
#include "protocol/mcp_era.h"
#include "server/session/session_harness.h"
#include "server/tasks/task_harness.h"

namespace keel::mcp_session_parity_test {
namespace {

const KnownTool kAllButNope = [](const std::string& name) { return name != "nope"; };

std::string Line(const Json& id, const std::string& method, const Json& params) {
  Json message = {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
  if (!params.is_null()) message["params"] = params;
  return message.dump();
}

// The error line the typed path answers for this request in `wire`'s era.
std::string Typed(const WireForm& wire, const Json& id, const std::string& method,
                  const Json& params) {
  const std::optional<McpMethod> known = MethodOf(wire, method);
  if (!known) return EncodeRpcError(id, MethodNotFound(method));
  const auto decoded = DecodeRequest(wire, *known, params, kAllButNope);
  REQUIRE_FALSE(decoded.ok());
  return EncodeRpcError(id, decoded.error());
}

template <typename Harness>
std::string Answer(Harness& h, const Json& id, const std::string& method, const Json& params) {
  h.sink().Clear();
  h.Send(Line(id, method, params));
  REQUIRE(h.WaitFor(id));
  REQUIRE(h.sink().lines().size() == 1);
  return h.sink().lines().front();
}

}  // namespace

TEST_CASE("malformed legacy requests are answered alike by the Session and the typed decoders") {
  SessionHarness h;
  const WireForm wire = NegotiateWireForm("2025-11-25", false);  // no task store here
  h.Initialize();
  struct Case {
    std::string method;
    Json params;
  };
  const Case cases[] = {
      {"tools/list", {{"cursor", "zz"}}},
      {"tools/list", {{"cursor", EncodeCursor("tasks", 1)}}},
      {"tools/call", Json()},
      {"tools/call", {{"name", 7}}},
      {"tools/call", {{"name", "nope"}, {"arguments", "x"}}},
      {"tools/call", {{"name", "echo"}, {"arguments", "x"}}},
      {"tools/call", {{"name", "echo"}, {"_meta", {{"progressToken", true}}}}},
      {"tools/call", {{"name", "echo"}, {"_meta", {{"traceparent", std::string(2000, 't')}}}}},
      {"logging/setLevel", {{"level", "verbose"}}},
      {"logging/setLevel", Json()},
      {"tasks/get", {{"taskId", "t"}}},  // no tasks here: an unknown method
      {std::string(100, 'm'), Json()},
  };
  int n = 0;
  for (const Case& c : cases) {
    // Ids 0 and "0" in turn: each is answered with its own type.
    const Json id = n++ % 2 == 0 ? Json(0) : Json("0");
    INFO(c.method << " " << c.params.dump());
    CHECK(Answer(h, id, c.method, c.params) == Typed(wire, id, c.method, c.params));
  }
}

TEST_CASE("lifecycle errors are answered alike by the Session and the typed errors") {
  SessionHarness h;
  CHECK(Answer(h, 0, "tools/list", Json()) == EncodeRpcError(Json(0), NotInitialized()));
  const Json no_version = {{"capabilities", Json::object()}};
  CHECK(Answer(h, "0", "initialize", no_version) ==
        Typed(WireForm{}, "0", "initialize", no_version));
  h.Initialize();
  CHECK(Answer(h, 1, "initialize", {{"protocolVersion", "2025-11-25"}}) ==
        EncodeRpcError(Json(1), AlreadyInitialized()));
  // A cursor that decodes but lies past the end is the handler's: the same error.
  CHECK(Answer(h, 2, "tools/list", {{"cursor", EncodeCursor("tools", 100000)}}) ==
        EncodeRpcError(Json(2), InvalidToolsCursor()));
}

TEST_CASE("malformed task requests are answered alike by the Session and the typed decoders",
          "[tasks]") {
  TaskHarness h;
  h.Initialize();
  const WireForm wire = NegotiateWireForm("2025-11-25", true);
  for (const char* method : {"tasks/get", "tasks/result", "tasks/cancel"}) {
    for (const Json& params : {Json(), Json{{"taskId", ""}}, Json{{"taskId", 0}}}) {
      INFO(method << " " << params.dump());
      CHECK(Answer(h, 0, method, params) == Typed(wire, 0, method, params));
    }
  }
  for (const Json& cursor : {Json("zz"), Json(EncodeCursor("tools", 1)), Json(5)}) {
    const Json params = {{"cursor", cursor}};
    CHECK(Answer(h, "0", "tasks/list", params) == Typed(wire, "0", "tasks/list", params));
  }
  // params.task is decoded once the tool is known to take tasks (task_sleep requires them).
  for (const Json& task : {Json("x"), Json{{"ttl", -1}}, Json{{"ttl", 1.5}}}) {
    const Json params = {{"name", "task_sleep"}, {"arguments", {{"ms", 1}}}, {"task", task}};
    INFO(task.dump());
    const auto decoded = DecodeRequest(wire, McpMethod::kCallTool, params, kAllButNope);
    const auto metadata = DecodeTaskMetadata(*std::get<CallToolRequest>(decoded.value()).task);
    REQUIRE_FALSE(metadata.ok());
    CHECK(Answer(h, 0, "tools/call", params) == EncodeRpcError(Json(0), metadata.error()));
  }
}

}  // namespace keel::mcp_session_parity_test
