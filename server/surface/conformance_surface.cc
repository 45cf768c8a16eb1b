#include "server/surface/conformance_surface.h"

#include <cstdlib>
#include <utility>

#include "protocol/tool_result.h"

namespace keel {
namespace {

// The fixtures as a catalog file would say them (docs/catalog.md).
constexpr const char* kFixtureCatalog = R"json({
  "resources": [
    {"uri": "test://static-text", "name": "static-text", "mimeType": "text/plain",
     "description": "A static text resource",
     "text": "This is the content of the static text resource."},
    {"uri": "test://static-binary", "name": "static-binary", "mimeType": "image/png",
     "description": "A static binary resource (a 1x1 red PNG)",
     "blob": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC"},
    {"uri": "test://watched-resource", "name": "watched-resource", "mimeType": "text/plain",
     "description": "A resource to subscribe to", "text": "Watched resource content."}
  ],
  "resourceTemplates": [
    {"uriTemplate": "test://template/{id}/data", "name": "template-data",
     "mimeType": "application/json", "description": "Data for an id",
     "text": "{{\"id\":\"{id}\",\"templateTest\":true,\"data\":\"Data for ID: {id}\"}}"}
  ],
  "prompts": [
    {"name": "test_simple_prompt", "description": "A simple prompt without arguments",
     "messages": [{"role": "user", "text": "This is a simple prompt for testing."}]},
    {"name": "test_prompt_with_arguments", "description": "A prompt with two arguments",
     "arguments": [
       {"name": "arg1", "description": "First argument", "required": true,
        "complete": ["test", "testValue1", "testing", "other"]},
       {"name": "arg2", "description": "Second argument", "required": true}],
     "messages": [{"role": "user",
                   "text": "Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"}]},
    {"name": "test_prompt_with_embedded_resource",
     "description": "A prompt embedding a resource",
     "arguments": [{"name": "resourceUri", "description": "The resource's URI",
                    "required": true}],
     "messages": [
       {"role": "user", "resource": {"uri": "{resourceUri}", "mimeType": "text/plain",
                                     "text": "Embedded resource content for testing."}},
       {"role": "user", "text": "Please process the embedded resource above."}]},
    {"name": "test_prompt_with_image", "description": "A prompt with an image",
     "messages": [
       {"role": "user", "image": {"mimeType": "image/png",
        "data": "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC"}},
       {"role": "user", "text": "Please analyze the image above."}]}
  ]
})json";

// test_input_required_result_prompt: asks what context to use, then renders it.
class AskingPrompt final : public Tool {
 public:
  AskingPrompt() {
    spec_.name = "prompt:test_input_required_result_prompt";
    spec_.description = "renders test_input_required_result_prompt";
    spec_.input_schema = {{"type", "object"}};
    spec_.asks_for_input = true;
  }
  const ToolSpec& spec() const override { return spec_; }
  Json Call(ToolContext& ctx) override {
    const Json* answer = ctx.InputResponse("user_context");
    const Json* content = answer != nullptr && answer->is_object() && answer->contains("content")
                              ? &(*answer)["content"]
                              : nullptr;
    if (content == nullptr || !content->is_object() || !content->contains("context") ||
        !(*content)["context"].is_string()) {
      return AskForInput(Json{{"user_context",
                               {{"method", "elicitation/create"},
                                {"params",
                                 {{"message", "What context should the prompt use?"},
                                  {"requestedSchema",
                                   {{"type", "object"},
                                    {"properties", {{"context", {{"type", "string"}}}}},
                                    {"required", {"context"}}}}}}}}});
    }
    const std::string context = (*content)["context"].get<std::string>();
    return StructuredResult(
        "prompt",
        Json{{"description", "A prompt that asked for its context first"},
             {"messages",
              {{{"role", "user"},
                {"content", {{"type", "text"}, {"text", "Use this context: " + context}}}}}}});
  }

 private:
  ToolSpec spec_;
};

}  // namespace

void AddConformanceSurfaceEntries(Catalog& catalog) {
  CatalogLoad load = LoadCatalog(kFixtureCatalog);
  if (!load.ok()) std::abort();  // a bug in the text above: tests load it
  for (ResourceEntry& entry : load.catalog->resources) {
    catalog.resources.push_back(std::move(entry));
  }
  for (ResourceTemplateEntry& entry : load.catalog->resource_templates) {
    catalog.resource_templates.push_back(std::move(entry));
  }
  for (PromptEntry& entry : load.catalog->prompts) catalog.prompts.push_back(std::move(entry));
}

void AddConformancePrompts(Surface& surface) {
  surface.prompts().Add(
      Json{{"name", "test_input_required_result_prompt"},
           {"description", "A prompt that asks the client for its context first (MRTR)"}},
      std::make_unique<AskingPrompt>());
}

}  // namespace keel
