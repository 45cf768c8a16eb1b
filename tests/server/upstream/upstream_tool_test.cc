// UpstreamTool and ForwardToUpstream (WRAP-1, WRAP-2, WRAP-4) against the scripted upstream
// (scripted_upstream.mjs): the effect class from annotations, keyed writes at most once
// through the ledger (a replay never reaches the upstream; an upstream crash mid-write is
// ambiguous and the key is never sent again), a read's loss is transient, what is forwarded
// of keel's key, errors, progress, cancel, and the upstream's questions carried to the client
// and back (AskForInput, then the parked question answered).
#include "server/upstream/upstream_tool.h"

#include <atomic>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "fakes/temp_ledger.h"
#include "protocol/tool_result.h"
#include "server/catalog/catalog_overlay.h"
#include "server/input/input_round.h"
#include "server/policy/failure_classify.h"
#include "server/upstream/scripted_upstream.h"
#include "server/upstream/upstream_call.h"

namespace keel::upstream_tool_test {
namespace {

constexpr const char* kKeyMeta = "dev.keel/idempotency-key";

ToolSpec SpecOf(const std::string& name, const Json& annotations,
                Json input_schema = Json{{"type", "object"}}) {
  ToolSpec spec;
  spec.name = name;
  spec.input_schema = std::move(input_schema);
  spec.annotations = annotations;
  spec.effect = EffectFromAnnotations(annotations);
  return spec;
}

const Json kRead = {{"readOnlyHint", true}};
const Json kUnsafe = Json::object();

// One call of `tool` as keel's pipeline makes it: the identity (and key) from the arguments
// and _meta, a deadline.
Json CallTool(UpstreamTool& tool, const Json& arguments, const Json& meta = Json()) {
  ToolContext ctx(arguments, CancellationToken(), nullptr);
  ctx.set_meta(meta);
  ctx.set_identity(NewCallIdentity(tool, arguments, meta));
  ctx.set_deadline(SecondsFromNow(10));
  return tool.Call(ctx);
}

Json ErrorOf(const Json& result) {
  const Json* error = StructuredErrorOf(result);
  return error != nullptr ? *error : Json();
}

std::string TextOf(const Json& result) {
  return result.at("content").at(0).at("text").get<std::string>();
}

ForwardSpec Forward(const std::string& tool) {
  ForwardSpec spec;
  spec.method = "tools/call";
  spec.params = Json{{"name", tool}, {"arguments", Json::object()}};
  spec.label = tool;
  return spec;
}

// The identity of a 2026-07-28 call whose client declared `capabilities`, in the round that
// carries `answers` and `tool_state` (the round before's requestState, unsealed).
CallIdentity ModernCall(const Json& capabilities, Json answers = Json::object(),
                        std::string tool_state = std::string()) {
  auto round = std::make_shared<InputRound>();
  round->client_capabilities = capabilities;
  round->answers = std::move(answers);
  round->tool_state = std::move(tool_state);
  CallIdentity identity;
  identity.tool_name = "ask";
  identity.modern = true;
  identity.input = std::move(round);
  return identity;
}

// The tools/call requests and cancels the instance in service has received.
Json Received(UpstreamLink& link) {
  std::string why;
  auto client = link.Acquire(SecondsFromNow(10), CancellationToken(), &why);
  REQUIRE(client != nullptr);
  return CallScripted(*client, "received").value("received", Json::array());
}

}  // namespace

TEST_CASE("an upstream tool's effect class follows its annotations, whatever destructiveHint says",
          "[upstream][WRAP-2]") {
  // The whole mapping is catalog_overlay_test.cc's; these are the cases the wrap contract
  // spells out.
  CHECK(EffectFromAnnotations(Json{{"readOnlyHint", true}, {"idempotentHint", true}}) ==
        EffectClass::kRead);
  CHECK(EffectFromAnnotations(Json{{"idempotentHint", true}}) == EffectClass::kIdempotentWrite);
  CHECK(EffectFromAnnotations(Json{{"destructiveHint", true}}) == EffectClass::kUnsafeWrite);
  CHECK(EffectFromAnnotations(Json{{"destructiveHint", true}, {"idempotentHint", true}}) ==
        EffectClass::kIdempotentWrite);
  CHECK(EffectFromAnnotations(Json{{"destructiveHint", false}, {"readOnlyHint", false}}) ==
        EffectClass::kUnsafeWrite);
}

TEST_CASE(
    "a keyed write runs once: the second call with the same key replays without reaching the "
    "upstream",
    "[upstream][WRAP-2]") {
  TempDir dir;
  TempLedger ledger;
  auto link = StartedLink(ScriptedUpstream(dir));
  UpstreamTool tool(SpecOf("write", kUnsafe), link, ledger.service(), UpstreamToolOptions{});
  const Json meta = {{kKeyMeta, "order-1"}};
  const Json first = CallTool(tool, Json{{"item", "a"}}, meta);
  const Json second = CallTool(tool, Json{{"item", "a"}}, meta);
  CHECK(first["structuredContent"]["run"] == 1);
  CHECK(second["content"] == first["content"]);
  CHECK(second["structuredContent"] == first["structuredContent"]);
  CHECK(second["_meta"]["dev.keel/replayed"] == true);
  CHECK(LinesIn(dir, "runs.log") == 1);

  CHECK(CallTool(tool, Json{{"item", "a"}},
                 Json{{kKeyMeta, "order-2"}})["structuredContent"]["run"] ==
        2);  // another key runs
  std::vector<Json> calls;
  for (const Json& message : Received(*link)) {
    if (message["method"] == "tools/call" && message["params"]["name"] == "write") {
      calls.push_back(message);
    }
  }
  CHECK(calls.size() == 2);
}

TEST_CASE(
    "an upstream crash mid-write is upstream_lost and ambiguous, and the key is not run again on "
    "retry",
    "[upstream][WRAP-2][WRAP-3]") {
  TempDir dir;
  TempLedger ledger;
  auto link = StartedLink(ScriptedUpstream(dir));
  UpstreamTool tool(SpecOf("crash", kUnsafe), link, ledger.service(), UpstreamToolOptions{});
  const Json meta = {{kKeyMeta, "pay-7"}};
  const Json lost = CallTool(tool, Json::object(), meta);
  CHECK(lost["isError"] == true);
  CHECK(ErrorOf(lost)["type"] == "upstream_lost");
  CHECK(ErrorOf(lost)["failure_class"] == "ambiguous");
  CHECK(ErrorOf(lost)["needs_reconciliation"] == true);
  CHECK(TextOf(lost).find("may have taken effect") != std::string::npos);
  CHECK(LinesIn(dir, "runs.log") == 1);

  // The upstream is back (a write without a key reaches it), but the key is never re-sent.
  UpstreamTool writer(SpecOf("write", kUnsafe), link, ledger.service(), UpstreamToolOptions{});
  CHECK(CallTool(writer, Json::object())["structuredContent"]["run"] == 2);
  const Json retried = CallTool(tool, Json::object(), meta);
  CHECK(retried["isError"] == true);
  CHECK(ErrorOf(retried)["type"] == "needs_reconciliation");
  CHECK(LinesIn(dir, "runs.log") == 2);
}

TEST_CASE("a read that loses its upstream mid-call is upstream_lost, rejected_transient",
          "[upstream][WRAP-2][WRAP-3]") {
  TempDir dir;
  auto link = StartedLink(ScriptedUpstream(dir));
  UpstreamTool tool(SpecOf("crash", kRead), link, nullptr, UpstreamToolOptions{});
  const Json lost = CallTool(tool, Json::object());
  CHECK(lost["isError"] == true);
  CHECK(ErrorOf(lost)["type"] == "upstream_lost");
  CHECK(ErrorOf(lost)["failure_class"] == "rejected_transient");
  CHECK(ErrorOf(lost)["effect"] == "none");
  CHECK(ErrorOf(lost)["message"] == "exited with status 1");
}

TEST_CASE(
    "keel's idempotency key and approval_id are not forwarded unless the upstream declares or "
    "takes them",
    "[upstream][WRAP-2]") {
  TempDir dir;
  TempLedger ledger;
  auto link = StartedLink(ScriptedUpstream(dir));
  const Json arguments = {{"idempotencyKey", "k-1"}, {"approval_id", "CHG-1"}, {"q", 1}};
  const Json meta = {{kKeyMeta, "k-1"},
                     {"progressToken", "client-token"},
                     {"io.modelcontextprotocol/protocolVersion", "2026-07-28"},
                     {"example.com/trace", "t-1"}};

  UpstreamTool plain(SpecOf("echo", kRead), link, nullptr, UpstreamToolOptions{});
  const Json seen = CallTool(plain, arguments, meta)["structuredContent"];
  CHECK(seen["arguments"] == Json{{"q", 1}});
  CHECK(seen["meta"]["example.com/trace"] == "t-1");
  CHECK_FALSE(seen["meta"].contains(kKeyMeta));
  CHECK_FALSE(seen["meta"].contains("io.modelcontextprotocol/protocolVersion"));
  CHECK(seen["meta"]["progressToken"].get<std::string>().rfind("keel-", 0) == 0);  // keel's own

  UpstreamToolOptions takes;  // the upstream's own schema declares both, and takes the key
  takes.upstream_takes_key = true;
  takes.upstream_has_key = true;
  takes.upstream_has_approval_id = true;
  UpstreamTool taking(SpecOf("echo", kUnsafe), link, ledger.service(), takes);
  const Json taken = CallTool(taking, arguments, meta)["structuredContent"];
  CHECK(taken["arguments"]["q"] == 1);
  CHECK(taken["arguments"]["approval_id"] == "CHG-1");
  // The key keel runs the call under (approval-scoped: OPS-3), in _meta and as the argument.
  const std::string key = NewCallIdentity(taking, arguments, meta).idempotency_key;
  CHECK(key.rfind("k-1", 0) == 0);
  CHECK(taken["meta"][kKeyMeta] == key);
  CHECK(taken["arguments"]["idempotencyKey"] == key);
}

TEST_CASE("the upstream's JSON-RPC error is upstream_error with its code", "[upstream][WRAP-1]") {
  TempDir dir;
  auto link = StartedLink(ScriptedUpstream(dir));
  UpstreamTool failing(SpecOf("fail", kRead), link, nullptr, UpstreamToolOptions{});
  const Json failed = CallTool(failing, Json::object());
  CHECK(ErrorOf(failed)["type"] == "upstream_error");
  CHECK(ErrorOf(failed)["failure_class"] == "rejected_permanent");
  CHECK(ErrorOf(failed)["code"] == -32000);
  CHECK(ErrorOf(failed)["message"] == "the backend is down");
  CHECK_FALSE(ErrorOf(failed).contains("effect"));  // it may have run

  UpstreamTool unknown(SpecOf("no_such_tool", kRead), link, nullptr, UpstreamToolOptions{});
  const Json refused = CallTool(unknown, Json::object());
  CHECK(ErrorOf(refused)["code"] == -32602);
  CHECK(ErrorOf(refused)["effect"] == "none");  // -32602: the upstream did not run it
}

TEST_CASE(
    "an HTTP transport's failed delivery is classed by whether the upstream can have run it: "
    "nothing sent is not_sent, a refusal is backend_N with no effect, a lost answer is "
    "upstream_lost",
    "[upstream][WRAP-1]") {
  TempDir dir;
  auto link = StartedLink(ScriptedUpstream(dir));
  UpstreamTool read(SpecOf("fail", kRead), link, nullptr, UpstreamToolOptions{});
  UpstreamTool write(SpecOf("fail", kUnsafe), link, nullptr, UpstreamToolOptions{});
  const auto transport = [](const std::string& what, Json data) {
    return Json{{"message", "upstream HTTP: " + what}, {"data", std::move(data)}};
  };

  const Json unreachable = CallTool(
      write, transport("connection refused", Json{{"transport", "refused"}, {"sent", false}}));
  CHECK(ErrorOf(unreachable)["type"] == "upstream_unavailable");
  CHECK(ErrorOf(unreachable)["failure_class"] == "not_sent");
  CHECK(ErrorOf(unreachable)["effect"] == "none");

  const Json limited =
      CallTool(write, transport("HTTP 429", Json{{"http_status", 429}, {"sent", true}}));
  CHECK(ErrorOf(limited)["type"] == "backend_429");
  CHECK(ErrorOf(limited)["effect"] == "none");
  CHECK(ClassifyResult(limited)->failure == FailureClass::kRejectedTransient);
  const Json forbidden =
      CallTool(write, transport("HTTP 403", Json{{"http_status", 403}, {"sent", true}}));
  CHECK(ErrorOf(forbidden)["type"] == "backend_403");
  CHECK(ClassifyResult(forbidden)->failure == FailureClass::kRejectedPermanent);

  // A 502, or a response cut before the answer: the upstream may have run it.
  const Json bad_gateway =
      CallTool(write, transport("HTTP 502", Json{{"http_status", 502}, {"sent", true}}));
  CHECK(ErrorOf(bad_gateway)["type"] == "upstream_lost");
  CHECK(ErrorOf(bad_gateway)["failure_class"] == "ambiguous");
  const Json cut = CallTool(read, transport("the response ended without the answer",
                                            Json{{"transport", "cut"}, {"sent", true}}));
  CHECK(ErrorOf(cut)["type"] == "upstream_lost");
  CHECK(ErrorOf(cut)["failure_class"] == "rejected_transient");  // a read: retried

  // The same code from the upstream itself, without the transport's marks, is its own error.
  const Json own = CallTool(read, Json{{"message", "upstream HTTP: but no data"}});
  CHECK(ErrorOf(own)["type"] == "upstream_error");
}

namespace {

UpstreamToolOptions Tasked() {
  UpstreamToolOptions options;
  options.upstream_requires_task = true;
  return options;
}

}  // namespace

TEST_CASE(
    "a tool the upstream runs only as a task is called as one: keel asks tasks/result at once "
    "and answers with it, and the task's progress under the call's token is the call's",
    "[upstream][WRAP-1]") {
  TempDir dir;
  auto link = StartedLink(ScriptedUpstream(dir));
  UpstreamTool tool(SpecOf("tasked", kRead), link, nullptr, Tasked());
  std::vector<double> reported;
  const Json arguments = Json::object();
  ToolContext ctx(arguments, CancellationToken(),
                  [&](double progress, std::optional<double>, const std::string&) {
                    reported.push_back(progress);
                  });
  ctx.set_identity(NewCallIdentity(tool, arguments, Json()));
  ctx.set_deadline(SecondsFromNow(10));
  const Json result = tool.Call(ctx);
  CHECK(TextOf(result) == "tasked done");
  CHECK_FALSE(result.contains("_meta"));  // the related-task member is the upstream's
  CHECK(reported == std::vector<double>{1});

  Json call;
  Json awaited;
  for (const Json& message : Received(*link)) {
    if (message["method"] == "tools/call" && message["params"]["name"] == "tasked") call = message;
    if (message["method"] == "tasks/result") awaited = message;
  }
  REQUIRE(call.is_object());
  CHECK(call["params"]["task"]["ttl"].get<int64_t>() > 0);
  REQUIRE(awaited.is_object());
  CHECK(awaited["params"]["taskId"] == "task-" + call["id"].dump());

  // Called as a plain tools/call, the same upstream refuses it: why keel makes it a task.
  UpstreamTool plain(SpecOf("tasked", kRead), link, nullptr, UpstreamToolOptions{});
  const Json refused = CallTool(plain, Json::object());
  CHECK(ErrorOf(refused)["code"] == -32601);
}

TEST_CASE(
    "a cancelled call whose upstream task runs on cancels the task too: tasks/cancel after "
    "notifications/cancelled for tasks/result",
    "[upstream][WRAP-1]") {
  TempDir dir;
  auto link = StartedLink(ScriptedUpstream(dir));
  UpstreamTool tool(SpecOf("tasked", kRead), link, nullptr, Tasked());
  CancellationToken token;
  std::latch working(1);
  const Json arguments = {{"hold", true}};
  ToolContext ctx(arguments, token, [&](double, std::optional<double>, const std::string&) {
    working.count_down();  // the upstream's task is working and keel waits on tasks/result
  });
  ctx.set_identity(NewCallIdentity(tool, arguments, Json()));
  ctx.set_deadline(SecondsFromNow(10));
  std::thread client([&] {
    working.wait();
    token.Cancel();
  });
  const Json result = tool.Call(ctx);
  client.join();
  CHECK(ErrorOf(result)["type"] == "cancelled");

  Json awaited_id;
  Json cancelled_task;
  Json cancelled_request;
  for (const Json& message : Received(*link)) {
    if (message["method"] == "tasks/result") awaited_id = message["id"];
    if (message["method"] == "tasks/cancel") cancelled_task = message["params"]["taskId"];
    if (message["method"] == "notifications/cancelled") {
      cancelled_request = message["params"]["requestId"];
    }
  }
  REQUIRE_FALSE(awaited_id.is_null());
  CHECK(cancelled_request == awaited_id);
  CHECK(cancelled_task.is_string());
}

TEST_CASE("the upstream's progress for a call becomes the call's progress", "[upstream][WRAP-1]") {
  TempDir dir;
  auto link = StartedLink(ScriptedUpstream(dir));
  std::vector<double> reported;  // the transport's thread writes, before the answer
  std::vector<std::optional<double>> totals;
  ToolContext ctx(Json::object(), CancellationToken(),
                  [&](double progress, std::optional<double> total, const std::string&) {
                    reported.push_back(progress);
                    totals.push_back(total);
                  });
  ctx.set_deadline(SecondsFromNow(10));
  const Json result = ForwardToUpstream(*link, ctx, Forward("progress"));
  CHECK(TextOf(result) == "done");
  CHECK(reported == std::vector<double>{1, 2});
  CHECK(totals == std::vector<std::optional<double>>{2.0, 2.0});
}

TEST_CASE(
    "a call cancelled while the upstream works ends at once and sends notifications/cancelled "
    "upstream",
    "[upstream][WRAP-1]") {
  TempDir dir;
  auto link = StartedLink(ScriptedUpstream(dir));
  CancellationToken token;
  std::latch working(1);
  std::atomic<bool> first_progress{true};
  ToolContext ctx(Json::object(), token, [&](double, std::optional<double>, const std::string&) {
    if (first_progress.exchange(false)) working.count_down();
  });
  ctx.set_deadline(SecondsFromNow(10));
  std::thread client([&] {
    working.wait();  // the upstream has the call
    token.Cancel();
  });
  const Json result = ForwardToUpstream(*link, ctx, Forward("hang"));
  client.join();
  CHECK(ErrorOf(result)["type"] == "cancelled");

  const Json received = Received(*link);
  Json hang_id;
  Json cancelled;
  for (const Json& message : received) {
    if (message["method"] == "tools/call" && message["params"]["name"] == "hang") {
      hang_id = message["id"];
    }
    if (message["method"] == "notifications/cancelled") cancelled = message["params"];
  }
  REQUIRE_FALSE(hang_id.is_null());
  CHECK(cancelled["requestId"] == hang_id);
}

TEST_CASE(
    "an upstream question reaches a client that can answer it as AskForInput, and the parked "
    "answer goes back upstream",
    "[upstream][WRAP-4]") {
  TempDir dir;
  auto link = StartedLink(ScriptedUpstream(dir));
  const Json capabilities = {{"elicitation", Json::object()}};
  ToolContext first(Json::object(), CancellationToken(), nullptr);
  first.set_identity(ModernCall(capabilities));
  first.set_deadline(SecondsFromNow(10));
  const Json asked = ForwardToUpstream(*link, first, Forward("ask"));
  REQUIRE(IsInputRequired(asked));
  REQUIRE(asked["inputRequests"].size() == 1);
  const std::string name = asked["inputRequests"].begin().key();
  const Json question = asked["inputRequests"][name];
  CHECK(question["method"] == "elicitation/create");
  CHECK(question["params"]["message"] == "Your name?");
  CHECK(asked["requestState"] == "p:" + name);

  const Json reply = {{"action", "accept"}, {"content", {{"name", "Ada"}}}};
  ToolContext second(Json::object(), CancellationToken(), nullptr);
  second.set_identity(ModernCall(capabilities, Json{{name, reply}}, "p:" + name));
  second.set_deadline(SecondsFromNow(10));
  const Json done = ForwardToUpstream(*link, second, Forward("ask"));
  CHECK(TextOf(done) == "answered: " + reply.dump());
  CHECK_FALSE(link->Take(name).has_value());  // the parked question was taken once
}

TEST_CASE(
    "an upstream question the call's client cannot answer is refused upstream, and the call goes "
    "on",
    "[upstream][WRAP-4]") {
  TempDir dir;
  auto link = StartedLink(ScriptedUpstream(dir));
  ToolContext legacy(Json::object(), CancellationToken(), nullptr);  // nothing can be asked
  legacy.set_deadline(SecondsFromNow(10));
  CHECK(TextOf(ForwardToUpstream(*link, legacy, Forward("ask"))) ==
        "refused: the client of this call cannot answer elicitation/create");

  ToolContext sampling_only(Json::object(), CancellationToken(), nullptr);
  sampling_only.set_identity(ModernCall(Json{{"sampling", Json::object()}}));
  sampling_only.set_deadline(SecondsFromNow(10));
  CHECK(TextOf(ForwardToUpstream(*link, sampling_only, Forward("ask"))) ==
        "refused: the client of this call cannot answer elicitation/create");
}

TEST_CASE("a parked answer whose question is gone is upstream_question_gone, nothing sent",
          "[upstream][WRAP-4]") {
  TempDir dir;
  auto link = StartedLink(ScriptedUpstream(dir));
  ToolContext ctx(Json::object(), CancellationToken(), nullptr);
  ctx.set_identity(
      ModernCall(Json{{"elicitation", Json::object()}}, Json{{"nope", Json::object()}}, "p:nope"));
  ctx.set_deadline(SecondsFromNow(10));
  const Json gone = ForwardToUpstream(*link, ctx, Forward("ask"));
  CHECK(ErrorOf(gone)["type"] == "upstream_question_gone");
  CHECK(ErrorOf(gone)["effect"] == "none");
}

TEST_CASE(
    "a 2026-07-28 upstream's result is passed on without resultType and its "
    "io.modelcontextprotocol/ _meta",
    "[upstream][WRAP-4]") {
  TempDir dir;
  auto link = StartedLink(ScriptedUpstream(dir, "modern"));
  ToolContext ctx(Json::object(), CancellationToken(), nullptr);
  ctx.set_deadline(SecondsFromNow(10));
  const Json result = ForwardToUpstream(*link, ctx, Forward("echo"));
  CHECK(TextOf(result) == "echo");
  CHECK_FALSE(result.contains("resultType"));
  CHECK(result["_meta"] == Json{{"example.com/kept", 1}});
}

}  // namespace keel::upstream_tool_test
