#include "server/tools/conformance_tools.h"

#include <chrono>
#include <functional>
#include <string>
#include <utility>

#include "server/tools/fn_tool.h"

namespace keel {
namespace {

// The suite checks only that the blocks are there with their fields; real, decodable media
// keep a client that renders them happy. A 1x1 red RGB PNG (69 bytes):
constexpr const char* kRedPixelPng =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC";
// A PCM WAV, mono, 8 bit, 8 kHz, 8 samples of silence (52 bytes):
constexpr const char* kSilentWav =
    "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

constexpr const char* kNoArguments =
    R"({"type":"object","properties":{},"additionalProperties":false})";

std::unique_ptr<Tool> Fixture(std::string name, std::string description, FnTool::Fn fn,
                              const char* schema = kNoArguments) {
  ToolSpec spec;
  spec.name = std::move(name);
  spec.description = "Conformance fixture: " + std::move(description);
  spec.input_schema = Json::parse(schema);
  return std::make_unique<FnTool>(std::move(spec), std::move(fn));
}

// `blocks` is a JSON array. Callers write Json::array({...}): a one-element braced list
// `{block}` is an array under g++ but a copy of `block` under clang.
Json Content(Json blocks) { return Json{{"content", std::move(blocks)}}; }

Json Text(std::string_view text) { return Json{{"type", "text"}, {"text", text}}; }

Json Image() { return Json{{"type", "image"}, {"data", kRedPixelPng}, {"mimeType", "image/png"}}; }

Json Resource(std::string_view uri, std::string_view mime_type, std::string_view text) {
  return Json{{"type", "resource"},
              {"resource", {{"uri", uri}, {"mimeType", mime_type}, {"text", text}}}};
}

// Waits `delay`, or less if the call is cancelled, and then stops there if it was.
void Pause(ToolContext& ctx, Millis delay) {
  if (delay > Millis(0)) ctx.token().WaitUntil(std::chrono::steady_clock::now() + delay);
  ctx.checkpoint();
}

// The schema of the suite's json-schema-2020-12 scenario (suite 0.2.0-alpha.12), verbatim:
// $schema, $defs with an $anchor, $ref, enum, allOf over anyOf, if/then/else.
constexpr const char* kSchemaDraft202012 = R"({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "$defs": {
    "address": {
      "$anchor": "addressDef",
      "type": "object",
      "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
    }
  },
  "properties": {
    "name": {"type": "string"},
    "address": {"$ref": "#/$defs/address"},
    "contactMethod": {"type": "string", "enum": ["phone", "email"]},
    "phone": {"type": "string"},
    "email": {"type": "string"}
  },
  "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
  "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
  "then": {"required": ["phone"]},
  "else": {"required": ["email"]},
  "additionalProperties": false
})";

}  // namespace

std::vector<std::unique_ptr<Tool>> MakeConformanceTools(Millis step_delay) {
  std::vector<std::unique_ptr<Tool>> tools;
  tools.push_back(Fixture("test_simple_text", "returns one text block.", [](ToolContext&) {
    return TextResult("This is a simple text response for testing.");
  }));
  tools.push_back(Fixture("test_image_content", "returns a 1x1 red PNG image.",
                          [](ToolContext&) { return Content(Json::array({Image()})); }));
  tools.push_back(
      Fixture("test_audio_content", "returns a short silent WAV audio clip.", [](ToolContext&) {
        return Content(
            Json::array({{{"type", "audio"}, {"data", kSilentWav}, {"mimeType", "audio/wav"}}}));
      }));
  tools.push_back(
      Fixture("test_embedded_resource", "returns an embedded text resource.", [](ToolContext&) {
        return Content(Json::array({Resource("test://embedded-resource", "text/plain",
                                             "This is an embedded resource content.")}));
      }));
  tools.push_back(Fixture(
      "test_multiple_content_types",
      "returns a text block, an image and an embedded JSON resource.", [](ToolContext&) {
        return Content(Json::array({Text("Multiple content types test:"), Image(),
                                    Resource("test://mixed-content-resource", "application/json",
                                             R"({"test":"data","value":123})")}));
      }));
  tools.push_back(Fixture("test_tool_with_logging", "sends three info log messages while it runs.",
                          [step_delay](ToolContext& ctx) {
                            ctx.Log(LoggingLevel::kInfo, "Tool execution started");
                            Pause(ctx, step_delay);
                            ctx.Log(LoggingLevel::kInfo, "Tool processing data");
                            Pause(ctx, step_delay);
                            ctx.Log(LoggingLevel::kInfo, "Tool execution completed");
                            return TextResult("Tool with logging executed successfully");
                          }));
  tools.push_back(
      Fixture("test_error_handling", "always returns an error result.", [](ToolContext&) {
        return ErrorResult("This tool intentionally returns an error for testing");
      }));
  tools.push_back(Fixture("test_tool_with_progress", "reports progress 0, 50 and 100 of 100.",
                          [step_delay](ToolContext& ctx) {
                            ctx.ReportProgress(0, 100);
                            Pause(ctx, step_delay);
                            ctx.ReportProgress(50, 100);
                            Pause(ctx, step_delay);
                            ctx.ReportProgress(100, 100);
                            // keel sends at most one progress notification per request every 50 ms
                            // and drops a value still held back when the call completes (the answer
                            // says it finished): the last step gets its turn before the tool
                            // returns.
                            Pause(ctx, step_delay);
                            return TextResult("Tool with progress executed successfully");
                          }));
  tools.push_back(Fixture(
      "json_schema_2020_12_tool",
      "an inputSchema with JSON Schema 2020-12 keywords ($schema, $defs, $anchor, $ref, "
      "allOf, anyOf, if/then/else); says which arguments it got.",
      [](ToolContext& ctx) {
        return TextResult("Received arguments: " +
                          ctx.arguments().dump(-1, ' ', false, Json::error_handler_t::replace));
      },
      kSchemaDraft202012));
  return tools;
}

}  // namespace keel
