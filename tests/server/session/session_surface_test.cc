// Session tests for resources, prompts and completion (session.h invariant 13): lists, reads
// through the reader tools, the era's not-found error, prompts/get with its argument checks,
// completion, the capabilities declared, and the change notifications.
#include <memory>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "server/session/session.h"
#include "server/session/session_harness.h"
#include "server/surface/surface.h"

using keel::Json;

namespace session_surface_test {
namespace {

constexpr const char* kModernMeta =
    R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}})";

std::shared_ptr<keel::Surface> TestSurface(const std::string& note_text = "hello") {
  keel::ResourceEntry note;
  note.uri = "test://note";
  note.name = "note";
  note.text = note_text;
  keel::ResourceTemplateEntry item;
  item.uri_template = "test://items/{id}";
  item.name = "item";
  item.mime_type = "application/json";
  item.text = "{{\"id\":\"{id}\"}}";
  keel::CompletionSpec ids;
  ids.values = {"alpha", "beta", "alps"};
  item.completions.emplace_back("id", ids);
  keel::PromptEntry prompt;
  prompt.name = "greet";
  prompt.description = "Greets someone";
  keel::PromptArgument who;
  who.name = "who";
  who.required = true;
  prompt.arguments.push_back(who);
  keel::PromptMessage text;
  text.text = "Hello, {who}!";
  prompt.messages.push_back(text);
  keel::PromptMessage embedded;
  embedded.kind = keel::PromptMessage::Kind::kResource;
  embedded.resource_uri = "test://note";
  prompt.messages.push_back(embedded);
  return std::make_shared<keel::Surface>(std::vector<keel::ResourceEntry>{note},
                                         std::vector<keel::ResourceTemplateEntry>{item},
                                         std::vector<keel::PromptEntry>{prompt}, nullptr);
}

std::string Modern(const std::string& id, const std::string& method, const std::string& params) {
  std::string body = params.empty() ? std::string("{") + kModernMeta + "}"
                                    : "{" + params + "," + kModernMeta + "}";
  return R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":")" + method + R"(","params":)" + body +
         "}";
}

Json Answer(keel::SessionHarness& h, const Json& id) {
  REQUIRE(h.WaitFor(id));
  return h.sink().ForId(id).back();
}

}  // namespace

TEST_CASE("without a surface resources prompts and completion are unknown methods") {
  keel::SessionHarness h;
  h.Send(Modern("1", "resources/list", ""));
  CHECK(Answer(h, 1)["error"]["code"] == -32601);
  h.Send(Modern("2", "prompts/list", ""));
  CHECK(Answer(h, 2)["error"]["code"] == -32601);
  h.Send(Modern("3", "server/discover", ""));
  const Json capabilities = Answer(h, 3)["result"]["capabilities"];
  CHECK_FALSE(capabilities.contains("resources"));
  CHECK_FALSE(capabilities.contains("prompts"));
  CHECK_FALSE(capabilities.contains("completions"));
}

TEST_CASE("discover declares resources prompts and completions when the surface has them") {
  keel::SessionHarness h;
  h.session().SetSurface(TestSurface());
  h.Send(Modern("1", "server/discover", ""));
  const Json capabilities = Answer(h, 1)["result"]["capabilities"];
  CHECK(capabilities["resources"] == Json{{"subscribe", true}, {"listChanged", true}});
  CHECK(capabilities["prompts"] == Json{{"listChanged", true}});
  CHECK(capabilities["completions"] == Json::object());
}

TEST_CASE("resources and templates are listed with the caching hints of the era") {
  keel::SessionHarness h;
  h.session().SetSurface(TestSurface());
  h.Send(Modern("1", "resources/list", ""));
  const Json list = Answer(h, 1)["result"];
  REQUIRE(list["resources"].size() == 1);
  CHECK(list["resources"][0]["uri"] == "test://note");
  CHECK(list["resources"][0]["mimeType"] == "text/plain");
  CHECK(list.contains("ttlMs"));
  CHECK(list["resultType"] == "complete");
  h.Send(Modern("2", "resources/templates/list", ""));
  CHECK(Answer(h, 2)["result"]["resourceTemplates"][0]["uriTemplate"] == "test://items/{id}");
  h.Initialize();
  h.Send(R"({"jsonrpc":"2.0","id":3,"method":"resources/list"})");
  CHECK_FALSE(Answer(h, 3)["result"].contains("ttlMs"));
}

TEST_CASE("a read goes through its reader and a template substitutes the uri's variables") {
  keel::SessionHarness h;
  h.session().SetSurface(TestSurface());
  h.Send(Modern("1", "resources/read", R"("uri":"test://note")"));
  const Json note = Answer(h, 1)["result"]["contents"][0];
  CHECK(note["text"] == "hello");
  h.Send(Modern("2", "resources/read", R"("uri":"test://items/42")"));
  const Json item = Answer(h, 2)["result"]["contents"][0];
  CHECK(item["uri"] == "test://items/42");
  CHECK(item["mimeType"] == "application/json");
  CHECK(item["text"] == R"({"id":"42"})");
}

TEST_CASE("an unknown uri is -32602 with the uri on the modern path and -32002 on a legacy one") {
  keel::SessionHarness h;
  h.session().SetSurface(TestSurface());
  h.Send(Modern("1", "resources/read", R"("uri":"test://none")"));
  const Json modern = Answer(h, 1)["error"];
  CHECK(modern["code"] == -32602);
  CHECK(modern["data"]["uri"] == "test://none");
  h.Initialize();
  h.Send(R"({"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"test://none"}})");
  CHECK(Answer(h, 2)["error"]["code"] == -32002);
}

TEST_CASE("prompts/get substitutes arguments and embeds a resource of keel's own") {
  keel::SessionHarness h;
  h.session().SetSurface(TestSurface());
  h.Send(Modern("1", "prompts/get", R"("name":"greet","arguments":{"who":"Ada"})"));
  const Json result = Answer(h, 1)["result"];
  CHECK(result["description"] == "Greets someone");
  REQUIRE(result["messages"].size() == 2);
  CHECK(result["messages"][0]["content"]["text"] == "Hello, Ada!");
  CHECK(result["messages"][1]["content"]["type"] == "resource");
  CHECK(result["messages"][1]["content"]["resource"]["text"] == "hello");
}

TEST_CASE("prompts/get of an unknown prompt or without a required argument is -32602") {
  keel::SessionHarness h;
  h.session().SetSurface(TestSurface());
  h.Send(Modern("1", "prompts/get", R"("name":"nope")"));
  CHECK(Answer(h, 1)["error"]["code"] == -32602);
  h.Send(Modern("2", "prompts/get", R"("name":"greet")"));
  const Json error = Answer(h, 2)["error"];
  CHECK(error["code"] == -32602);
  CHECK(error["message"].get<std::string>().find("who") != std::string::npos);
}

TEST_CASE("completion filters a template variable's list and answers nothing for a bare one") {
  keel::SessionHarness h;
  h.session().SetSurface(TestSurface());
  h.Send(Modern(
      "1", "completion/complete",
      R"("ref":{"type":"ref/resource","uri":"test://items/{id}"},"argument":{"name":"id","value":"al"})"));
  const Json completion = Answer(h, 1)["result"]["completion"];
  CHECK(completion["values"] == Json{"alpha", "alps"});
  CHECK(completion["total"] == 2);
  CHECK(completion["hasMore"] == false);
  h.Send(Modern(
      "2", "completion/complete",
      R"("ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"A"})"));
  CHECK(Answer(h, 2)["result"]["completion"]["values"] == Json::array());
  h.Send(
      Modern("3", "completion/complete",
             R"("ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"x","value":""})"));
  CHECK(Answer(h, 3)["error"]["code"] == -32602);
  h.Send(Modern(
      "4", "completion/complete",
      R"("ref":{"type":"ref/resource","uri":"test://other/{id}"},"argument":{"name":"id","value":""})"));
  CHECK(Answer(h, 4)["error"]["code"] == -32602);
}

TEST_CASE("a listener that asked hears that the prompts changed when a new surface comes") {
  keel::SessionHarness h;
  h.session().SetSurface(TestSurface());
  h.Send(Modern(
      "\"L\"", "subscriptions/listen",
      R"("notifications":{"promptsListChanged":true,"resourceSubscriptions":["test://note"]})"));
  const std::vector<Json> acks = h.sink().WithMethod("notifications/subscriptions/acknowledged");
  REQUIRE(acks.size() == 1);
  CHECK(acks[0]["params"]["notifications"] ==
        Json{{"promptsListChanged", true}, {"resourceSubscriptions", {"test://note"}}});
  auto next = TestSurface();
  next->prompts().Add(Json{{"name", "extra"}, {"description", "d"}}, nullptr);
  h.session().SetSurface(next);
  const std::vector<Json> changed = h.sink().WithMethod("notifications/prompts/list_changed");
  REQUIRE(changed.size() == 1);
  CHECK(changed[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "L");
  CHECK(h.sink().WithMethod("notifications/resources/list_changed").empty());
  h.session().NotifyResourceUpdated("test://note");
  const std::vector<Json> updated = h.sink().WithMethod("notifications/resources/updated");
  REQUIRE(updated.size() == 1);
  CHECK(updated[0]["params"]["uri"] == "test://note");
}

TEST_CASE("a legacy peer subscribed to a uri hears its updates until it unsubscribes") {
  keel::SessionHarness h;
  h.session().SetSurface(TestSurface());
  h.Initialize();
  h.Send(
      R"({"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://note"}})");
  CHECK(Answer(h, 1)["result"] == Json::object());
  h.session().NotifyResourceUpdated("test://note");
  h.session().NotifyResourceUpdated("test://other");
  CHECK(h.sink().WithMethod("notifications/resources/updated").size() == 1);
  h.Send(
      R"({"jsonrpc":"2.0","id":2,"method":"resources/unsubscribe","params":{"uri":"test://note"}})");
  h.session().NotifyResourceUpdated("test://note");
  CHECK(h.sink().WithMethod("notifications/resources/updated").size() == 1);
}

}  // namespace session_surface_test
