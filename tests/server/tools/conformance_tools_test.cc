// The conformance fixtures answer what the official MCP conformance suite's scenarios check
// (@modelcontextprotocol/conformance 0.1.16, dist/index.js, `server` scenarios).
#include "server/tools/conformance_tools.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "protocol/schema_validator.h"
#include "server/catalog/tool_registry.h"

namespace keel::conformance_tools_test {
namespace {

// The fixtures without delays, by name.
class Fixtures {
 public:
  Fixtures() {
    for (auto& tool : MakeConformanceTools(Millis(0))) {
      const std::string name = tool->spec().name;
      by_name_.emplace(name, std::move(tool));
    }
  }
  Tool& operator[](const std::string& name) { return *by_name_.at(name); }
  size_t size() const { return by_name_.size(); }
  std::vector<std::unique_ptr<Tool>> Release() {
    std::vector<std::unique_ptr<Tool>> tools;
    for (auto& [name, tool] : by_name_) tools.push_back(std::move(tool));
    return tools;
  }

 private:
  std::map<std::string, std::unique_ptr<Tool>> by_name_;
};

Json CallWithout(Tool& tool, Json arguments = Json::object()) {
  ToolContext ctx(std::move(arguments), CancellationToken(), nullptr);
  return tool.Call(ctx);
}

// The first block of `result` of `type`, or null.
Json Block(const Json& result, const std::string& type) {
  for (const Json& block : result.at("content")) {
    if (block.at("type") == type) return block;
  }
  return Json();
}

}  // namespace

TEST_CASE("every conformance fixture registers: valid name, described, well-formed schema") {
  Fixtures fixtures;
  CHECK(fixtures.size() == 9);
  ToolRegistry registry;
  for (auto& tool : fixtures.Release()) {
    INFO(tool->spec().name);
    CHECK_FALSE(tool->spec().description.empty());  // tools-list checks it
    CHECK(tool->spec().effect == EffectClass::kRead);
    CHECK(registry.Register(std::move(tool)).empty());
  }
}

TEST_CASE("test_simple_text returns the suite's text block") {
  Fixtures fixtures;
  const Json result = CallWithout(fixtures["test_simple_text"]);
  CHECK(result == Json::parse(R"({"content":[{"type":"text",
      "text":"This is a simple text response for testing."}]})"));
}

TEST_CASE("test_image_content returns a base64 PNG with its mime type") {
  Fixtures fixtures;
  const Json image = Block(CallWithout(fixtures["test_image_content"]), "image");
  REQUIRE(image.is_object());
  CHECK(image["mimeType"] == "image/png");
  // base64 of the PNG signature \x89PNG\r\n\x1a\n
  CHECK(image["data"].get<std::string>().rfind("iVBORw0KGgo", 0) == 0);
}

TEST_CASE("test_audio_content returns a base64 WAV as audio/wav") {
  Fixtures fixtures;
  const Json audio = Block(CallWithout(fixtures["test_audio_content"]), "audio");
  REQUIRE(audio.is_object());
  CHECK(audio["mimeType"] == "audio/wav");
  CHECK(audio["data"].get<std::string>().rfind("UklGR", 0) == 0);  // "RIFF"
}

TEST_CASE("test_embedded_resource returns a text resource with uri and mime type") {
  Fixtures fixtures;
  const Json block = Block(CallWithout(fixtures["test_embedded_resource"]), "resource");
  CHECK(block["resource"] == Json::parse(R"({"uri":"test://embedded-resource",
      "mimeType":"text/plain","text":"This is an embedded resource content."})"));
}

TEST_CASE("test_multiple_content_types returns text, image and resource blocks in order") {
  Fixtures fixtures;
  const Json result = CallWithout(fixtures["test_multiple_content_types"]);
  REQUIRE(result["content"].size() == 3);
  CHECK(result["content"][0] ==
        Json::parse(R"({"type":"text","text":"Multiple content types test:"})"));
  CHECK(result["content"][1]["type"] == "image");
  CHECK(result["content"][2]["resource"]["uri"] == "test://mixed-content-resource");
  CHECK(Json::parse(result["content"][2]["resource"]["text"].get<std::string>()) ==
        Json::parse(R"({"test":"data","value":123})"));
}

TEST_CASE("test_tool_with_logging logs three info messages before it returns") {
  Fixtures fixtures;
  ToolContext ctx(Json::object(), CancellationToken(), nullptr);
  std::vector<std::pair<LoggingLevel, std::string>> logged;
  ctx.set_log(
      [&](LoggingLevel level, std::string message) { logged.emplace_back(level, message); });
  const Json result = fixtures["test_tool_with_logging"].Call(ctx);
  REQUIRE(logged.size() == 3);
  CHECK(logged[0].second == "Tool execution started");
  CHECK(logged[1].second == "Tool processing data");
  CHECK(logged[2].second == "Tool execution completed");
  for (const auto& [level, message] : logged) CHECK(level == LoggingLevel::kInfo);
  CHECK_FALSE(result.contains("isError"));
}

TEST_CASE("test_error_handling returns isError with a message") {
  Fixtures fixtures;
  const Json result = CallWithout(fixtures["test_error_handling"]);
  CHECK(result["isError"] == true);
  CHECK(result["content"][0]["text"] == "This tool intentionally returns an error for testing");
}

TEST_CASE("test_tool_with_progress reports 0, 50 and 100 of 100") {
  Fixtures fixtures;
  std::vector<std::pair<double, double>> reported;
  ToolContext ctx(Json::object(), CancellationToken(),
                  [&](double progress, std::optional<double> total, std::string) {
                    reported.emplace_back(progress, total.value_or(-1));
                  });
  fixtures["test_tool_with_progress"].Call(ctx);
  CHECK(reported == std::vector<std::pair<double, double>>{{0, 100}, {50, 100}, {100, 100}});
}

TEST_CASE("a cancelled call of a fixture with steps stops at its first pause") {
  Fixtures fixtures;
  CancellationToken token;
  token.Cancel();
  int reports = 0;
  ToolContext ctx(Json::object(), token,
                  [&](double, std::optional<double>, std::string) { ++reports; });
  CHECK_THROWS_AS(fixtures["test_tool_with_progress"].Call(ctx), CallCancelled);
  CHECK(reports == 1);
}

TEST_CASE("json_schema_2020_12_tool lists its 2020-12 keywords unchanged and enforces them") {
  ToolRegistry registry;
  for (auto& tool : MakeConformanceTools(Millis(0)))
    REQUIRE(registry.Register(std::move(tool)).empty());
  const Tool* tool = registry.Find("json_schema_2020_12_tool");
  REQUIRE(tool != nullptr);
  const Json listed = Json(ToolRegistry::Describe(tool->spec()))["inputSchema"];
  // The suite's schema, member for member (key order aside: Json is an ordered map).
  CHECK(listed == Json::parse(R"({"$schema":"https://json-schema.org/draft/2020-12/schema",
      "type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object",
      "properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
      "properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},
      "contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},
      "email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],
      "if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},
      "then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false})"));
  CHECK_FALSE(ValidateCheckedSchema(
      listed, Json::parse(R"({"name":"n","address":{"city":"c"},"email":"e"})")));
  CHECK(ValidateCheckedSchema(listed, Json::parse(R"({"address":{"city":1},"email":"e"})"))
            .value_or("") == "arguments.address.city: expected string, got integer");
  CHECK(ValidateCheckedSchema(listed, Json::parse(R"({"contactMethod":"phone","email":"e"})"))
            .value_or("") == "arguments: missing required property 'phone'");
}

}  // namespace keel::conformance_tools_test
