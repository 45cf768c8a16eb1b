#include "server/surface/prompt_set.h"

#include <utility>

#include "protocol/base64.h"
#include "protocol/tool_result.h"
#include "server/surface/file_source.h"
#include "server/surface/resource_set.h"
#include "server/surface/text_substitution.h"

namespace keel {
namespace {

Json PromptFailed(const std::string& text) {
  return ErrorResult(text, Json{{"type", "prompt_failed"}});
}

// A catalog prompt, rendered on a worker.
class CatalogPrompt final : public Tool {
 public:
  CatalogPrompt(PromptEntry entry, const ResourceSet* resources)
      : entry_(std::move(entry)), resources_(resources) {
    spec_.name = "prompt:" + entry_.name;
    spec_.description = "renders prompt " + entry_.name;
    Json properties = Json::object();
    for (const PromptArgument& argument : entry_.arguments) {
      properties[argument.name] = {{"type", "string"}};
    }
    spec_.input_schema = {{"type", "object"}, {"properties", properties}};
    spec_.effect = EffectClass::kRead;
  }
  const ToolSpec& spec() const override { return spec_; }

  Json Call(ToolContext& ctx) override {
    Json messages = Json::array();
    for (const PromptMessage& message : entry_.messages) {
      ctx.checkpoint();
      Json content = Render(message, ctx);
      if (content.value("isError", false)) return content;
      messages.push_back({{"role", message.role}, {"content", std::move(content)}});
    }
    Json result = {{"messages", std::move(messages)}};
    if (!entry_.description.empty()) result["description"] = entry_.description;
    return StructuredResult(entry_.name, std::move(result));
  }

 private:
  Json Render(const PromptMessage& message, ToolContext& ctx) const {
    const Json& values = ctx.arguments();
    switch (message.kind) {
      case PromptMessage::Kind::kText:
        return {{"type", "text"}, {"text", SubstituteArguments(message.text, values)}};
      case PromptMessage::Kind::kImage:
        return Image(message);
      case PromptMessage::Kind::kResource:
        return Resource(message, ctx);
    }
    return PromptFailed("unknown message kind");
  }

  static Json Image(const PromptMessage& message) {
    if (message.image_file.empty()) {
      return {{"type", "image"}, {"data", message.image_data}, {"mimeType", message.mime_type}};
    }
    const FileBytes file = ReadResourceFile(message.image_file, kMaxResourceBytes);
    if (file.status != FileBytes::Status::kOk) {
      return PromptFailed("the prompt's image " + message.image_file +
                          " could not be read: " + file.error);
    }
    return {{"type", "image"},
            {"data", Base64Encode(file.bytes)},
            {"mimeType", message.mime_type.empty() ? file.mime_type : message.mime_type}};
  }

  Json Resource(const PromptMessage& message, ToolContext& ctx) const {
    const std::string uri = SubstituteArguments(message.resource_uri, ctx.arguments());
    if (message.resource_text) {
      return {{"type", "resource"},
              {"resource",
               {{"uri", uri},
                {"mimeType", message.mime_type.empty() ? "text/plain" : message.mime_type},
                {"text", SubstituteArguments(*message.resource_text, ctx.arguments())}}}};
    }
    const std::optional<ResourceSet::Read> read =
        resources_ != nullptr ? resources_->Resolve(uri) : std::nullopt;
    if (!read) return PromptFailed("the prompt's resource " + uri + " does not exist");
    ToolContext inner(read->arguments, ctx.token(), nullptr);
    inner.set_deadline(ctx.deadline());
    const Json result = read->reader->Call(inner);
    const Json* contents = nullptr;
    if (const auto s = result.find("structuredContent"); s != result.end() && s->is_object()) {
      if (const auto c = s->find("contents"); c != s->end() && c->is_array() && !c->empty()) {
        contents = &(*c)[0];
      }
    }
    if (result.value("isError", false) || contents == nullptr) {
      return PromptFailed("the prompt's resource " + uri + " could not be read");
    }
    return {{"type", "resource"}, {"resource", *contents}};
  }

  PromptEntry entry_;
  const ResourceSet* resources_;
  ToolSpec spec_;
};

}  // namespace

PromptSet::PromptSet(std::vector<PromptEntry> prompts, const ResourceSet* resources) {
  for (PromptEntry& entry : prompts) {
    Json item = {{"name", entry.name}};
    if (!entry.title.empty()) item["title"] = entry.title;
    if (!entry.description.empty()) item["description"] = entry.description;
    if (!entry.arguments.empty()) {
      Json arguments = Json::array();
      for (const PromptArgument& argument : entry.arguments) {
        Json a = {{"name", argument.name}, {"required", argument.required}};
        if (!argument.description.empty()) a["description"] = argument.description;
        arguments.push_back(std::move(a));
      }
      item["arguments"] = std::move(arguments);
    }
    items_.push_back(std::move(item));
    Prompt prompt{entry.name, entry.arguments, nullptr};
    prompt.tool = std::make_unique<CatalogPrompt>(std::move(entry), resources);
    prompts_.push_back(std::move(prompt));
  }
}

void PromptSet::Add(Json item, std::unique_ptr<Tool> tool) {
  Prompt prompt{item.value("name", ""), {}, std::move(tool)};
  if (const auto arguments = item.find("arguments"); arguments != item.end()) {
    for (const Json& a : *arguments) {
      PromptArgument argument;
      argument.name = a.value("name", "");
      argument.required = a.value("required", false);
      prompt.arguments.push_back(std::move(argument));
    }
  }
  prompts_.push_back(std::move(prompt));
  items_.push_back(std::move(item));
}

Tool* PromptSet::Find(const std::string& name) const {
  for (const Prompt& prompt : prompts_) {
    if (prompt.name == name) return prompt.tool.get();
  }
  return nullptr;
}

std::optional<std::string> PromptSet::MissingArgument(
    const std::string& name, const std::map<std::string, std::string>& arguments) const {
  for (const Prompt& prompt : prompts_) {
    if (prompt.name != name) continue;
    for (const PromptArgument& argument : prompt.arguments) {
      if (argument.required && arguments.count(argument.name) == 0) return argument.name;
    }
  }
  return std::nullopt;
}

const CompletionSpec* PromptSet::CompletionOf(const std::string& name,
                                              const std::string& argument) const {
  for (const Prompt& prompt : prompts_) {
    if (prompt.name != name) continue;
    for (const PromptArgument& a : prompt.arguments) {
      if (a.name == argument && a.completion) return &*a.completion;
    }
  }
  return nullptr;
}

bool PromptSet::HasArgument(const std::string& name, const std::string& argument) const {
  for (const Prompt& prompt : prompts_) {
    if (prompt.name != name) continue;
    for (const PromptArgument& a : prompt.arguments) {
      if (a.name == argument) return true;
    }
  }
  return false;
}

std::vector<std::pair<std::string, const CompletionSpec*>> PromptSet::Completions() const {
  std::vector<std::pair<std::string, const CompletionSpec*>> all;
  for (const Prompt& prompt : prompts_) {
    for (const PromptArgument& a : prompt.arguments) {
      if (a.completion) all.emplace_back(prompt.name + " " + a.name, &*a.completion);
    }
  }
  return all;
}

bool PromptSet::completes() const {
  for (const Prompt& prompt : prompts_) {
    for (const PromptArgument& a : prompt.arguments) {
      if (a.completion) return true;
    }
  }
  return false;
}

}  // namespace keel
