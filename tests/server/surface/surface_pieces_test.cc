// Unit tests for the pure pieces of server/surface/: text substitution, completion from a
// list, and how a reader's result becomes the method's answer (surface_answer.h).
#include <string>
#include <variant>

#include <catch2/catch.hpp>

#include "protocol/tool_result.h"
#include "server/surface/completion.h"
#include "server/surface/surface_answer.h"
#include "server/surface/text_substitution.h"

using keel::Json;

namespace surface_pieces_test {

TEST_CASE("a reference is replaced by its value and a missing one by nothing") {
  const Json values = {{"service", "api"}};
  CHECK(keel::SubstituteArguments("restart {service} now", values) == "restart api now");
  CHECK(keel::SubstituteArguments("sev={severity}.", values) == "sev=.");
}

TEST_CASE("doubled braces are literal and other braces stay as they are") {
  const Json values = {{"id", "7"}};
  CHECK(keel::SubstituteArguments("{{\"id\":\"{id}\"}}", values) == "{\"id\":\"7\"}");
  CHECK(keel::SubstituteArguments("{\"a\": 1}", values) == "{\"a\": 1}");
  CHECK(keel::SubstituteArguments("open { and }", values) == "open { and }");
}

TEST_CASE("a substituted value is never substituted again") {
  CHECK(keel::SubstituteArguments("{a}", Json{{"a", "{b}"}, {"b", "x"}}) == "{b}");
}

TEST_CASE("a static completion keeps the values starting with what was typed") {
  const keel::CompleteResult result = keel::CompleteFromList({"API", "apex", "web"}, "ap");
  CHECK(result.values == std::vector<std::string>{"API", "apex"});
  CHECK(result.total == std::optional<size_t>(2));
  CHECK_FALSE(result.has_more);
}

TEST_CASE("a completion holds at most 100 values and says there are more") {
  std::vector<std::string> many;
  for (int i = 0; i < 150; ++i) many.push_back("v" + std::to_string(i));
  const keel::CompleteResult result = keel::CompleteFromList(many, "v");
  CHECK(result.values.size() == 100);
  CHECK(result.total == std::optional<size_t>(150));
  CHECK(result.has_more);
}

TEST_CASE("a reader's contents are the read result") {
  const keel::WireForm wire = keel::ModernWireForm(false);
  const Json contents = {{"contents", {{{"uri", "a"}, {"text", "x"}}}}};
  const auto answer = keel::SurfaceAnswer(wire, keel::AnswerAs::kResource,
                                          keel::StructuredResult("1", contents), "a", "");
  REQUIRE(std::holds_alternative<Json>(answer));
  const Json& read = std::get<Json>(answer);
  CHECK(read["contents"] == contents["contents"]);
  // A 2026-07-28 read carries the caching hints (rule 4): never reused, the same for all.
  CHECK(read["ttlMs"] == 0);
  CHECK(read["cacheScope"] == "public");
}

TEST_CASE("a command's output becomes one content item of the read uri and mime type") {
  const auto answer =
      keel::SurfaceAnswer(keel::ModernWireForm(false), keel::AnswerAs::kResource,
                          keel::TextResult("status: up"), "deploy://api/status", "text/markdown");
  REQUIRE(std::holds_alternative<Json>(answer));
  const Json& item = std::get<Json>(answer)["contents"][0];
  CHECK(item["uri"] == "deploy://api/status");
  CHECK(item["mimeType"] == "text/markdown");
  CHECK(item["text"] == "status: up");
}

TEST_CASE("a completion command's lines become values") {
  const auto answer = keel::SurfaceAnswer(keel::ModernWireForm(false), keel::AnswerAs::kCompletion,
                                          keel::TextResult("api\r\n\nweb\n"), "", "");
  REQUIRE(std::holds_alternative<Json>(answer));
  CHECK(std::get<Json>(answer)["completion"]["values"] == Json{"api", "web"});
}

TEST_CASE("a reader's not found is the era's resource not found error") {
  const Json result = keel::ResourceNotFoundResult("test://gone");
  const auto modern = keel::SurfaceAnswer(keel::ModernWireForm(false), keel::AnswerAs::kResource,
                                          result, "test://gone", "");
  REQUIRE(std::holds_alternative<keel::RpcError>(modern));
  CHECK(std::get<keel::RpcError>(modern).code == -32602);
  CHECK(std::get<keel::RpcError>(modern).data["uri"] == "test://gone");
  const auto legacy = keel::SurfaceAnswer(keel::NegotiateWireForm("2025-11-25", false),
                                          keel::AnswerAs::kResource, result, "test://gone", "");
  CHECK(std::get<keel::RpcError>(legacy).code == -32002);
}

TEST_CASE("any other failure of a reader is an internal error with its text") {
  const auto answer = keel::SurfaceAnswer(
      keel::ModernWireForm(false), keel::AnswerAs::kResource,
      keel::ErrorResult("command exited 3", Json{{"type", "tool_error"}}), "deploy://x", "");
  REQUIRE(std::holds_alternative<keel::RpcError>(answer));
  CHECK(std::get<keel::RpcError>(answer).code == -32603);
  CHECK(std::get<keel::RpcError>(answer).message == "command exited 3");
}

TEST_CASE("invalid arguments of a prompt are invalid params") {
  const auto answer =
      keel::SurfaceAnswer(keel::ModernWireForm(false), keel::AnswerAs::kPrompt,
                          keel::ErrorResult("bad", Json{{"type", "invalid_arguments"}}), "", "");
  REQUIRE(std::holds_alternative<keel::RpcError>(answer));
  CHECK(std::get<keel::RpcError>(answer).code == -32602);
}

}  // namespace surface_pieces_test
