// Session: lifecycle, dispatch and the tools/call path. Proves DC-1 and DC-2 at unit
// level; the same rules run against the real binary in conformance/.
#include <catch2/catch.hpp>

#include "server/session/session_harness.h"

namespace keel::session_test {
namespace {

TEST_CASE("ping is answered before initialize") {
  SessionHarness h;
  h.Send(R"({"jsonrpc":"2.0","id":0,"method":"ping"})");
  REQUIRE(h.sink().ForId(0).size() == 1);
  CHECK(h.sink().ForId(0)[0]["result"] == Json::object());
}

TEST_CASE("known methods before initialize get -32600 and unknown ones -32601") {
  SessionHarness h;
  h.Send(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
  h.Send(R"({"jsonrpc":"2.0","id":2,"method":"foo/bar"})");
  // server/discover is modern whatever came before: without its envelope it is -32602.
  h.Send(R"({"jsonrpc":"2.0","id":3,"method":"server/discover"})");
  CHECK(h.sink().ForId(1)[0]["error"]["code"] == -32600);
  CHECK(h.sink().ForId(2)[0]["error"]["code"] == -32601);
  CHECK(h.sink().ForId(3)[0]["error"]["code"] == -32602);
}

TEST_CASE("initialize echoes a supported version and offers the latest otherwise") {
  SessionHarness a;
  a.Send(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}})");
  CHECK(a.sink().ForId(1)[0]["result"]["protocolVersion"] == "2025-06-18");
  SessionHarness b;
  b.Send(
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01"}})");
  const Json result = b.sink().ForId(1)[0]["result"];
  CHECK(result["protocolVersion"] == "2025-11-25");
  CHECK(result["serverInfo"]["name"] == "keel");
  CHECK(result["capabilities"].contains("tools"));
  CHECK(result["capabilities"].contains("logging"));
  CHECK_FALSE(result["capabilities"].contains("tasks"));
}

TEST_CASE("a second initialize is an error") {
  SessionHarness h;
  h.Initialize();
  h.Send(
      R"({"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-11-25"}})");
  CHECK(h.sink().ForId(9)[0]["error"]["code"] == -32600);
}

TEST_CASE("tools/list pages with an opaque cursor and refuses a bad one") {
  SessionOptions options;
  options.page_size = 4;
  SessionHarness h(0, options);
  h.Initialize();
  h.Send(R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})");
  const Json first = h.sink().ForId(1)[0]["result"];
  CHECK(first["tools"].size() == 4);
  REQUIRE(first.contains("nextCursor"));
  // Following the cursors lists all the tools (echo + the test tools), then stops.
  size_t listed = first["tools"].size();
  Json cursor = first["nextCursor"];
  for (int id = 10; !cursor.is_null(); ++id) {
    REQUIRE(id < 20);
    h.Send(Json{
        {"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/list"}, {"params", {{"cursor", cursor}}}}
               .dump());
    const Json page = h.sink().ForId(id)[0]["result"];
    CHECK(page["tools"].size() <= 4);
    CHECK_FALSE(page["tools"].empty());
    listed += page["tools"].size();
    cursor = page.value("nextCursor", Json());
  }
  CHECK(listed == 1 + MakeTestTools().size());
  h.Send(R"({"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"zz"}})");
  CHECK(h.sink().ForId(3)[0]["error"]["code"] == -32602);
}

TEST_CASE("tools/call runs the tool and answers with its result") {
  SessionHarness h;
  h.Initialize();
  h.Send(h.Call(7, "echo", {{"text", "hello"}}));
  REQUIRE(h.sink().ForId(7).size() == 1);
  CHECK(h.sink().ForId(7)[0]["result"]["content"][0]["text"] == "hello");
}

TEST_CASE("an unknown tool or a malformed call is a JSON-RPC -32602") {
  SessionHarness h;
  h.Initialize();
  h.Send(h.Call(1, "nope", Json::object()));
  h.Send(R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"arguments":{}}})");
  h.Send(
      R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":[1]}})");
  for (int id : {1, 2, 3}) CHECK(h.sink().ForId(id)[0]["error"]["code"] == -32602);
}

TEST_CASE("arguments that break the schema are a tool error naming the field") {
  SessionHarness h;
  h.Initialize();
  h.Send(h.Call(1, "echo", {{"text", 5}}));
  const Json result = h.sink().ForId(1)[0]["result"];
  CHECK(result["isError"] == true);
  CHECK(result["content"][0]["text"].get<std::string>().find("text") != std::string::npos);
  CHECK(result["structuredContent"]["error"]["type"] == "invalid_arguments");
}

TEST_CASE("progress goes out with the client's token, before the result (PRG-1)") {
  SessionOptions options;
  options.progress_interval = Duration::zero();  // no rate limit: every step is sent
  SessionHarness h(0, options);
  h.Initialize();
  h.Send(h.Call(1, "progress", {{"steps", 3}}, {{"progressToken", "p"}}));
  const auto& all = h.sink().messages();
  REQUIRE(all.size() == 4);
  for (int i = 0; i < 3; ++i) {
    CHECK(all[i]["method"] == "notifications/progress");
    CHECK(all[i]["params"]["progressToken"] == "p");
    CHECK(all[i]["params"]["progress"] == i + 1);
  }
  CHECK(all[3]["id"] == 1);
}

TEST_CASE("progress reported faster than 20/s reaches the client rate-limited (PRG-1)") {
  SessionHarness h;
  h.Initialize();
  h.Send(h.Call(1, "progress", {{"steps", 100}}, {{"progressToken", 7}}));
  // All 100 steps happen at one instant of the fake clock: the first goes out, the rest are
  // held back as one newest value, which the completion makes moot.
  REQUIRE(h.sink().WithMethod("notifications/progress").size() == 1);
  CHECK(h.sink().ForId(1).size() == 1);
}

TEST_CASE("a call without a progress token gets no progress notifications") {
  SessionHarness h;
  h.Initialize();
  h.Send(h.Call(1, "progress", {{"steps", 3}}));
  CHECK(h.sink().WithMethod("notifications/progress").empty());
  CHECK(h.sink().ForId(1).size() == 1);
}

TEST_CASE(
    "responses from the client, unknown notifications and stray cancels are silent "
    "(CAN-3)") {
  SessionHarness h;
  h.Initialize();
  h.Send(R"({"jsonrpc":"2.0","id":99,"result":{}})");
  h.Send(R"({"jsonrpc":"2.0","method":"notifications/whatever"})");
  h.Send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":123}})");
  h.Send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{}})");
  h.Send(R"({"jsonrpc":"2.0","method":"notifications/cancelled"})");
  h.Send(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":[123]})");
  h.Send(R"({"jsonrpc":"2.0","method":"notifications/initialized","params":"x"})");
  h.Send("   ");
  CHECK(h.sink().messages().empty());
}

TEST_CASE("logging/setLevel accepts RFC 5424 levels and rejects others") {
  SessionHarness h;
  h.Initialize();
  h.Send(R"({"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"debug"}})");
  h.Send(R"({"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"loud"}})");
  CHECK(h.sink().ForId(1)[0]["result"] == Json::object());
  CHECK(h.sink().ForId(2)[0]["error"]["code"] == -32602);
}

TEST_CASE("shutdown with nothing in flight finishes at once") {
  SessionHarness h;
  h.Initialize();
  h.session().BeginShutdown("test");
  CHECK(h.finished());
}

TEST_CASE("calls accepted together are answered once the loop runs") {
  SessionHarness h;
  h.Initialize();
  h.session().HandleLine(h.Call(1, "echo", {{"text", "a"}}));
  h.session().HandleLine(h.Call(2, "echo", {{"text", "b"}}));
  CHECK(h.sink().ForId(1).empty());  // handed to the pool before the loop waits
  h.Pump();
  REQUIRE(h.sink().ForId(1).size() == 1);
  REQUIRE(h.sink().ForId(2).size() == 1);
  CHECK(h.sink().ForId(2)[0]["result"]["content"][0]["text"] == "b");
}

TEST_CASE("a call cancelled before it reached a worker never runs and frees its slot (CAN-2)") {
  SessionHarness h;
  h.Initialize();
  h.session().HandleLine(h.Call(1, "echo", {{"text", "a"}}));
  h.session().HandleLine(
      R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})");
  h.Pump();
  CHECK(h.sink().ForId(1).empty());
  CHECK(h.session().coordinator().draining() == 0);
  CHECK(h.session().coordinator().stats().never_started == 1);
  CHECK(h.session().coordinator().stats().late_results_dropped == 0);
}

Json ModernMeta() {
  return Json{{"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
              {"io.modelcontextprotocol/clientCapabilities", Json::object()}};
}

TEST_CASE("a modern request is served without initialize and opens no session", "[ERA-1]") {
  SessionHarness h;
  h.Send(h.Call(1, "echo", {{"text", "a"}}, ModernMeta()));
  REQUIRE(h.sink().ForId(1).size() == 1);
  const Json result = h.sink().ForId(1)[0]["result"];
  CHECK(result["resultType"] == "complete");
  CHECK(result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "keel");
  CHECK_FALSE(h.session().initialized());
  // A legacy request still needs initialize.
  h.Send(h.Call(2, "echo", {{"text", "b"}}));
  CHECK(h.sink().ForId(2)[0]["error"]["code"] == -32600);
}

TEST_CASE("a modern call's busy refusal is a modern result", "[ERA-4]") {
  SessionOptions options;
  options.max_inflight = 1;
  SessionHarness h(1, options);
  h.Send(h.Call(1, "latch_wait", {{"name", "busy"}}, ModernMeta()));
  h.Send(h.Call(2, "echo", {{"text", "x"}}, ModernMeta()));
  const Json busy = h.sink().ForId(2)[0]["result"];
  CHECK(busy["structuredContent"]["error"]["type"] == "server_busy");
  CHECK(busy["resultType"] == "complete");
  h.Send(h.Call(3, "latch_release", {{"name", "busy"}}, ModernMeta()));
  REQUIRE(h.WaitFor(1));
  CHECK(h.sink().ForId(1)[0]["result"]["resultType"] == "complete");
}

}  // namespace
}  // namespace keel::session_test
