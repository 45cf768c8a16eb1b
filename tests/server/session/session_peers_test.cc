// One Session, several peers (server/transport/exchange.h): JSON-RPC ids are scoped per peer,
// a legacy peer's lifecycle state is its own, and every line goes to the exchange of the
// request it answers (Session invariants 3, 8, 11). Two RecordingSinks behind a TestRouter
// stand for two HTTP exchanges; each exchange is its own peer unless a test says otherwise.
#include <memory>
#include <string>
#include <utility>

#include <catch2/catch.hpp>

#include "fakes/test_router.h"
#include "server/session/session_harness.h"
#include "server/tools/fn_tool.h"

namespace keel::session_peers_test {
namespace {

constexpr ExchangeId kA = 11;
constexpr ExchangeId kB = 12;

std::string Initialize(const Json& capabilities = Json::object()) {
  return Json{{"jsonrpc", "2.0"},
              {"id", "init"},
              {"method", "initialize"},
              {"params",
               {{"protocolVersion", "2025-11-25"},
                {"capabilities", capabilities},
                {"clientInfo", {{"name", "t"}, {"version", "1"}}}}}}
      .dump();
}

std::string Cancel(const Json& id) {
  return Json{
      {"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", id}}}}
      .dump();
}

// Logs "hi" at info for the client, then returns.
std::unique_ptr<Tool> SaysHiTool() {
  ToolSpec spec;
  spec.name = "says_hi";
  spec.description = "test: logs hi at info, then returns";
  spec.input_schema = Json{{"type", "object"}};
  return std::make_unique<FnTool>(std::move(spec), [](ToolContext& ctx) {
    ctx.Log(LoggingLevel::kInfo, "hi");
    return TextResult("done");
  });
}

// A harness whose exchanges kA and kB write to sinks a and b.
struct TwoPeers {
  explicit TwoPeers(size_t workers) : h(workers) {
    router.Add(kA, a);
    router.Add(kB, b);
    h.session().set_router(&router);
  }
  SessionHarness h;
  RecordingSink a;
  RecordingSink b;
  TestRouter router;
};

}  // namespace

TEST_CASE("the same id in flight from two peers is answered to each on its own exchange",
          "[session][peers]") {
  TwoPeers t(2);
  t.h.SendOn(kA, Initialize());
  t.h.SendOn(kB, Initialize());
  t.h.SendOn(kA, t.h.Call(1, "latch_wait", {{"name", "a"}}));
  t.h.SendOn(kB, t.h.Call(1, "latch_wait", {{"name", "b"}}));
  REQUIRE(t.h.WaitUntilRunning(1, kA));
  REQUIRE(t.h.WaitUntilRunning(1, kB));  // not refused as an id in flight
  t.h.SendOn(kB, t.h.Call(2, "latch_release", {{"name", "b"}}));
  REQUIRE(t.h.WaitUntil([&] { return !t.b.ForId(1).empty(); }));
  CHECK(t.b.ForId(1)[0]["result"]["content"][0]["text"] == "released b");
  CHECK(t.a.ForId(1).empty());
  t.h.SendOn(kA, t.h.Call(2, "latch_release", {{"name", "a"}}));
  REQUIRE(t.h.WaitUntil([&] { return !t.a.ForId(1).empty(); }));
  CHECK(t.a.ForId(1)[0]["result"]["content"][0]["text"] == "released a");
  CHECK(t.b.ForId(1).size() == 1);
  CHECK(t.h.sink().messages().empty());  // nothing went to the constructor's sink
}

TEST_CASE("notifications/cancelled from one peer leaves another peer's call with that id alone",
          "[session][peers][CAN-1]") {
  TwoPeers t(2);
  t.h.SendOn(kA, Initialize());
  t.h.SendOn(kB, Initialize());
  t.h.SendOn(kA, t.h.Call(1, "latch_wait", {{"name", "a"}}));
  t.h.SendOn(kB, t.h.Call(1, "latch_wait", {{"name", "b"}}));
  REQUIRE(t.h.WaitUntilRunning(1, kA));
  REQUIRE(t.h.WaitUntilRunning(1, kB));
  t.h.SendOn(kA, Cancel(1));
  CHECK_FALSE(t.h.session().coordinator().InFlight(Json(1), kA));
  CHECK(t.h.session().coordinator().StateOf(Json(1), kB) == CallState::kRunning);
  t.h.SendOn(kB, t.h.Call(2, "latch_release", {{"name", "b"}}));
  REQUIRE(t.h.WaitUntil([&] { return !t.b.ForId(1).empty(); }));
  CHECK(t.b.ForId(1)[0]["result"]["content"][0]["text"] == "released b");
  CHECK(t.a.ForId(1).empty());  // cancelled: never answered
}

TEST_CASE("a legacy peer's initialize and log level are its own", "[session][peers][ERA-1]") {
  TwoPeers t(0);
  REQUIRE(t.h.Register(SaysHiTool()).empty());
  t.h.SendOn(kA, Initialize());
  CHECK(t.h.session().PeerInitialized(kA));
  CHECK_FALSE(t.h.session().PeerInitialized(kB));
  t.h.SendOn(kB, t.h.Call(1, "says_hi", Json::object()));
  CHECK(t.b.ForId(1)[0]["error"]["code"] == -32600);  // B has not initialized
  t.h.SendOn(kB, Initialize());
  t.h.SendOn(kA,
             R"({"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}})");
  t.h.SendOn(kA, t.h.Call(3, "says_hi", Json::object()));
  t.h.SendOn(kB, t.h.Call(3, "says_hi", Json::object()));
  CHECK(t.a.WithMethod("notifications/message").size() == 1);  // at A's level, on A's exchange
  CHECK(t.b.WithMethod("notifications/message").empty());      // B set no level
  CHECK(t.a.ForId(3).size() == 1);
  CHECK(t.b.ForId(3).size() == 1);
}

TEST_CASE("forgetting a peer cancels its calls and its state, and no other peer's",
          "[session][peers][CAN-5]") {
  TwoPeers t(2);
  // One legacy HTTP session (peer 40) whose requests come on two exchanges.
  constexpr PeerId kSession = 40;
  t.h.SendOn(kA, Initialize(), kSession);
  t.h.SendOn(kB, Initialize());
  t.h.SendOn(kA, t.h.Call(1, "latch_wait", {{"name", "a"}}), kSession);
  t.h.SendOn(kB, t.h.Call(1, "latch_wait", {{"name", "b"}}));
  REQUIRE(t.h.WaitUntilRunning(1, kSession));
  REQUIRE(t.h.WaitUntilRunning(1, kB));
  CHECK(t.h.session().ForgetPeer(kSession) == 1);
  CHECK_FALSE(t.h.session().PeerInitialized(kSession));
  CHECK(t.h.session().PeerInitialized(kB));
  CHECK(t.h.session().coordinator().StateOf(Json(1), kB) == CallState::kRunning);
  // A legacy request from the forgotten peer meets the lifecycle again.
  t.h.SendOn(kA, t.h.Call(2, "echo", {{"text", "x"}}), kSession);
  CHECK(t.a.ForId(2)[0]["error"]["code"] == -32600);
  t.h.SendOn(kB, t.h.Call(2, "latch_release", {{"name", "b"}}));
  REQUIRE(t.h.WaitUntil([&] { return !t.b.ForId(1).empty(); }));
  CHECK(t.a.ForId(1).empty());
}

TEST_CASE("keel's question goes to the asking call's exchange and only its peer may answer",
          "[session][peers][MRTR-1]") {
  TwoPeers t(1);
  t.h.SendOn(kA, Initialize(Json{{"elicitation", Json::object()}}));
  t.h.SendOn(kB, Initialize(Json{{"elicitation", Json::object()}}));
  t.h.SendOn(kA, t.h.Call(1, "ask_name", Json::object()));
  REQUIRE(t.h.WaitUntil([&] { return !t.a.WithMethod("elicitation/create").empty(); }));
  CHECK(t.a.requests() == 1);  // written as a request, not a response
  const Json question = t.a.WithMethod("elicitation/create")[0]["id"];
  const auto answer = [&](const char* name) {
    return Json{{"jsonrpc", "2.0"},
                {"id", question},
                {"result", {{"action", "accept"}, {"content", {{"name", name}}}}}}
        .dump();
  };
  t.h.SendOn(kB, answer("Mallory"));  // not B's question: dropped
  t.h.SendOn(kA, answer("Ann"));
  REQUIRE(t.h.WaitUntil([&] { return !t.a.ForId(1).empty(); }));
  CHECK(t.a.ForId(1)[0]["result"]["content"][0]["text"] == "Hello, Ann!");
  CHECK(t.b.messages().size() == 1);  // its initialize answer only
}

TEST_CASE("an answer for an exchange that closed is dropped, not written elsewhere",
          "[session][peers]") {
  TwoPeers t(0);
  t.h.SendOn(kA, Initialize());
  t.router.Close(kA);
  t.h.SendOn(kA, t.h.Call(1, "echo", {{"text", "x"}}));
  t.h.SendOn(kA, t.h.Call(2, "nope", Json::object()));
  CHECK(t.a.ForId(1).empty());
  CHECK(t.b.messages().empty());
  CHECK(t.h.sink().messages().empty());
}

TEST_CASE(
    "with a per-client share one client's calls past it are server_busy while another client's are "
    "admitted",
    "[session][peers][HTTP-4]") {
  SessionOptions options;
  options.max_inflight = 8;
  options.max_inflight_per_client = 2;
  SessionHarness h(4, options);
  RecordingSink a;
  RecordingSink b;
  TestRouter router;
  router.Add(kA, a);
  router.Add(kB, b);
  h.session().set_router(&router);
  h.SendOn(kA, Initialize());
  h.SendOn(kB, Initialize());
  h.SendOn(kA, h.Call(1, "latch_wait", {{"name", "a1"}}));
  h.SendOn(kA, h.Call(2, "latch_wait", {{"name", "a2"}}));
  REQUIRE(h.WaitUntilRunning(1, kA));
  REQUIRE(h.WaitUntilRunning(2, kA));
  h.SendOn(kA, h.Call(3, "echo", {{"text", "third"}}));
  REQUIRE(h.WaitUntil([&] { return !a.ForId(3).empty(); }));
  CHECK(a.ForId(3)[0]["result"]["isError"] == true);
  CHECK(a.ForId(3)[0]["result"]["structuredContent"]["error"]["type"] == "server_busy");
  // Another client is not starved by the first one's calls.
  h.SendOn(kB, h.Call(1, "echo", {{"text", "other"}}));
  REQUIRE(h.WaitUntil([&] { return !b.ForId(1).empty(); }));
  CHECK(b.ForId(1)[0]["result"]["content"][0]["text"] == "other");
  // Once one of the first client's calls ends, it has room again.
  h.SendOn(kB, h.Call(2, "latch_release", {{"name", "a1"}}));
  REQUIRE(h.WaitUntil([&] { return !a.ForId(1).empty(); }));
  h.SendOn(kA, h.Call(4, "echo", {{"text", "fourth"}}));
  REQUIRE(h.WaitUntil([&] { return !a.ForId(4).empty(); }));
  CHECK(a.ForId(4)[0]["result"]["content"][0]["text"] == "fourth");
  h.SendOn(kB, h.Call(3, "latch_release", {{"name", "a2"}}));
  REQUIRE(h.WaitUntil([&] { return !a.ForId(2).empty(); }));
}

}  // namespace keel::session_peers_test
