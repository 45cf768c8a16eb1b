// Unit tests for protocol/mcp_surface_types.h and the era rules of mcp_era.h that concern
// resources, prompts and completion (rule 6).
#include "protocol/mcp_surface_types.h"

#include <string>

#include <catch2/catch.hpp>

#include "protocol/cursor.h"
#include "protocol/mcp_era.h"

using keel::Json;

namespace mcp_surface_types_test {

TEST_CASE("a list request without a cursor or with an empty one starts at the first page") {
  CHECK(keel::DecodeListResourcesRequest(Json()).value().offset == 0);
  CHECK(keel::DecodeListPromptsRequest(Json{{"cursor", ""}}).value().offset == 0);
  const std::string cursor = keel::EncodeCursor(keel::kTemplatesCursor, 7);
  CHECK(keel::DecodeListResourceTemplatesRequest(Json{{"cursor", cursor}}).value().offset == 7);
}

TEST_CASE("a cursor minted for another list is invalid params") {
  const std::string cursor = keel::EncodeCursor(keel::kPromptsCursor, 3);
  const auto decoded = keel::DecodeListResourcesRequest(Json{{"cursor", cursor}});
  REQUIRE_FALSE(decoded.ok());
  CHECK(decoded.error().code == -32602);
  CHECK_FALSE(keel::DecodeListPromptsRequest(Json{{"cursor", 5}}).ok());
}

TEST_CASE("resources/read needs a non-empty uri and keeps the retry members") {
  CHECK_FALSE(keel::DecodeReadResourceRequest(Json::object()).ok());
  CHECK_FALSE(keel::DecodeReadResourceRequest(Json{{"uri", ""}}).ok());
  CHECK_FALSE(keel::DecodeReadResourceRequest(Json{{"uri", 3}}).ok());
  const auto read = keel::DecodeReadResourceRequest(
      Json{{"uri", "test://a"}, {"inputResponses", {{"k", 1}}}, {"requestState", "s"}});
  REQUIRE(read.ok());
  CHECK(read.value().uri == "test://a");
  CHECK(read.value().retry.input_responses == Json{{"k", 1}});
  CHECK(read.value().retry.request_state == std::optional<std::string>("s"));
  CHECK_FALSE(keel::DecodeReadResourceRequest(Json{{"uri", "x"}, {"inputResponses", 1}}).ok());
}

TEST_CASE("prompts/get takes string arguments only") {
  const auto get =
      keel::DecodeGetPromptRequest(Json{{"name", "p"}, {"arguments", {{"a", "1"}, {"b", "two"}}}});
  REQUIRE(get.ok());
  CHECK(get.value().arguments.at("b") == "two");
  const auto bad = keel::DecodeGetPromptRequest(Json{{"name", "p"}, {"arguments", {{"a", 1}}}});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("arguments.a") != std::string::npos);
  CHECK_FALSE(keel::DecodeGetPromptRequest(Json{{"arguments", Json::object()}}).ok());
}

TEST_CASE("completion/complete reads a prompt or resource ref, the argument and the context") {
  const auto prompt =
      keel::DecodeCompleteRequest(Json{{"ref", {{"type", "ref/prompt"}, {"name", "p"}}},
                                       {"argument", {{"name", "arg1"}, {"value", "te"}}},
                                       {"context", {{"arguments", {{"arg2", "x"}}}}}});
  REQUIRE(prompt.ok());
  CHECK(prompt.value().ref == keel::CompleteRequest::Ref::kPrompt);
  CHECK(prompt.value().ref_name == "p");
  CHECK(prompt.value().value == "te");
  CHECK(prompt.value().context.at("arg2") == "x");
  const auto resource =
      keel::DecodeCompleteRequest(Json{{"ref", {{"type", "ref/resource"}, {"uri", "x://{id}"}}},
                                       {"argument", {{"name", "id"}, {"value", ""}}}});
  REQUIRE(resource.ok());
  CHECK(resource.value().ref == keel::CompleteRequest::Ref::kResource);
  CHECK(resource.value().ref_name == "x://{id}");
  CHECK_FALSE(keel::DecodeCompleteRequest(Json{{"ref", {{"type", "ref/tool"}, {"name", "p"}}},
                                               {"argument", {{"name", "a"}, {"value", ""}}}})
                  .ok());
  CHECK_FALSE(
      keel::DecodeCompleteRequest(Json{{"ref", {{"type", "ref/prompt"}, {"name", "p"}}}}).ok());
}

TEST_CASE("a resource not found is -32602 in 2026-07-28 and -32002 before, with the uri") {
  const keel::RpcError modern = keel::ResourceNotFound(keel::ModernWireForm(false), "test://x");
  CHECK(modern.code == -32602);
  CHECK(modern.data == Json{{"uri", "test://x"}});
  const keel::RpcError legacy =
      keel::ResourceNotFound(keel::NegotiateWireForm("2025-11-25", false), "test://x");
  CHECK(legacy.code == -32002);
  CHECK(legacy.data == Json{{"uri", "test://x"}});
}

TEST_CASE("resources/subscribe exists only in a legacy era, the rest in both") {
  const keel::WireForm modern = keel::ModernWireForm(false);
  const keel::WireForm legacy = keel::NegotiateWireForm("2025-11-25", false);
  CHECK_FALSE(keel::MethodOf(modern, "resources/subscribe").has_value());
  CHECK(keel::MethodOf(legacy, "resources/subscribe") == keel::McpMethod::kSubscribe);
  for (const char* method : {"resources/list", "resources/templates/list", "resources/read",
                             "prompts/list", "prompts/get", "completion/complete"}) {
    INFO(method);
    CHECK(keel::MethodOf(modern, method).has_value());
    CHECK(keel::MethodOf(legacy, method).has_value());
  }
}

TEST_CASE("a legacy prompts/get leaves the multi round-trip members unread") {
  const keel::WireForm legacy = keel::NegotiateWireForm("2025-11-25", false);
  auto decoded = keel::DecodeRequest(legacy, keel::McpMethod::kGetPrompt,
                                     Json{{"name", "p"}, {"requestState", 5}});
  REQUIRE(decoded.ok());
  CHECK_FALSE(std::get<keel::GetPromptRequest>(decoded.value()).retry.request_state.has_value());
}

TEST_CASE("a list page carries nextCursor and, when given, the caching hints") {
  keel::ListItemsResult page;
  page.items = {Json{{"uri", "a"}}};
  page.next_offset = 1;
  page.cache = keel::CacheHints{1000, "public"};
  const Json wire = keel::ListPageToWire(page, "resources", keel::kResourcesCursor);
  CHECK(wire["resources"].size() == 1);
  CHECK(keel::DecodeCursor(keel::kResourcesCursor, wire["nextCursor"].get<std::string>()) ==
        std::optional<size_t>(1));
  CHECK(wire["ttlMs"] == 1000);
  CHECK(wire["cacheScope"] == "public");
  page.cache.reset();
  CHECK_FALSE(keel::ListPageToWire(page, "resources", keel::kResourcesCursor).contains("ttlMs"));
}

}  // namespace mcp_surface_types_test
