// ReadPrompts (surface_catalog.h): prompt templates with arguments, whose messages are text,
// images or embedded resources.
#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <utility>

#include "protocol/tool_name.h"
#include "server/catalog/surface_catalog.h"

namespace keel {
namespace {

bool IsArgumentName(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::string ArgumentNamesOf(const std::vector<PromptArgument>& arguments) {
  std::string names;
  for (const PromptArgument& argument : arguments) {
    names += (names.empty() ? "" : ", ") + argument.name;
  }
  return names.empty() ? "none" : names;
}

// The {references} of `text` (a message's text or resource URI) name the prompt's arguments.
void CheckArgumentReferences(ObjectReader& message, std::string_view field, const std::string& text,
                             const std::vector<PromptArgument>& arguments) {
  const TemplateParse parse = ParseTemplate(text);
  if (!parse.problem.empty()) {
    message.Problem(field, parse.problem);
    return;
  }
  for (const std::string& ref : parse.refs) {
    const bool known = std::any_of(arguments.begin(), arguments.end(),
                                   [&](const PromptArgument& a) { return a.name == ref; });
    if (!known) {
      message.Problem(field, "{" + ref + "} is not an argument of this prompt (arguments: " +
                                 ArgumentNamesOf(arguments) + ")");
    }
  }
}

std::optional<PromptArgument> ReadPromptArgument(ObjectReader& owner, const Json& item,
                                                 size_t index) {
  std::string field = "arguments[" + std::to_string(index) + "]";
  if (!item.is_object()) {
    owner.Problem(field, "must be an object, got " + std::string(item.type_name()));
    return std::nullopt;
  }
  const auto name = item.find("name");
  if (name != item.end() && name->is_string() && IsArgumentName(name->get<std::string>())) {
    field += " (" + name->get<std::string>() + ")";
  }
  ObjectReader reader = owner.Nested(item, field);
  const size_t before = reader.problem_count();
  reader.OnlyFields({"name", "description", "required", "complete"});
  PromptArgument argument;
  if (auto text = reader.String("name", true)) {
    if (!IsArgumentName(*text)) {
      reader.Problem("name", Shown(Json(*text)) + " must match ^[A-Za-z_][A-Za-z0-9_]*$");
    }
    argument.name = std::move(*text);
  }
  if (auto description = reader.String("description", false)) {
    argument.description = std::move(*description);
  }
  if (const Json* required = reader.Find("required")) {
    if (!required->is_boolean()) reader.Problem("required", "must be true or false");
    argument.required = *required == true;
  }
  argument.completion = ReadCompletion(reader, "complete");
  // An argument with other problems still has its name: messages that reference it must not
  // be reported too (the prompt is refused anyway).
  if (reader.problem_count() != before && argument.name.empty()) return std::nullopt;
  return argument;
}

std::vector<PromptArgument> ReadPromptArguments(ObjectReader& reader) {
  std::vector<PromptArgument> arguments;
  const Json* list = reader.Find("arguments");
  if (list == nullptr) return arguments;
  if (!list->is_array()) {
    reader.Problem("arguments", "must be an array of arguments, got " + Shown(*list));
    return arguments;
  }
  for (size_t i = 0; i < list->size(); ++i) {
    auto argument = ReadPromptArgument(reader, (*list)[i], i);
    if (!argument) continue;
    const bool repeated =
        std::any_of(arguments.begin(), arguments.end(),
                    [&](const PromptArgument& a) { return a.name == argument->name; });
    if (repeated) {
      reader.Problem("arguments[" + std::to_string(i) + "].name",
                     Shown(Json(argument->name)) + " is already the name of another argument");
      continue;
    }
    arguments.push_back(std::move(*argument));
  }
  return arguments;
}

// `image`: {file | data, mimeType}.
void ReadPromptImage(ObjectReader& message, PromptMessage& out) {
  const Json* object = message.Object("image");
  if (object == nullptr) return;
  ObjectReader image = message.Nested(*object, "image");
  image.OnlyFields({"file", "data", "mimeType"});
  if ((image.Find("file") != nullptr) == (image.Find("data") != nullptr)) {
    image.Problem("file", "an image needs exactly one of file, data");
  }
  if (auto file = image.String("file", false)) {
    if (file->empty() || file->find('\0') != std::string::npos) {
      image.Problem("file", "must be a non-empty path without NUL characters");
    }
    out.image_file = std::move(*file);
  }
  if (auto data = image.String("data", false)) {
    if (!IsBase64(*data)) image.Problem("data", "must be standard base64 (RFC 4648), padded");
    out.image_data = std::move(*data);
  }
  if (image.Find("data") != nullptr && image.Find("mimeType") == nullptr) {
    image.Problem("mimeType", "is required with data (e.g. image/png)");
  }
  if (auto mime = ReadMimeType(image, "mimeType")) {
    if (mime->rfind("image/", 0) != 0) image.Problem("mimeType", "must be an image/ type");
    out.mime_type = std::move(*mime);
  }
}

// A URI a message embeds: a static resource's URI, or one under a mount's prefix. With
// {references}, the fixed text before the first one must already lead there.
bool IsKeelResourceUri(const std::string& uri, const std::vector<ResourceEntry>& resources) {
  const size_t brace = uri.find('{');
  const std::string head = uri.substr(0, brace);
  return std::any_of(resources.begin(), resources.end(), [&](const ResourceEntry& r) {
    if (r.is_mount()) {
      return head.rfind(r.uri_prefix, 0) == 0 &&
             (brace != std::string::npos || head.size() > r.uri_prefix.size());
    }
    return brace == std::string::npos ? uri == r.uri : r.uri.rfind(head, 0) == 0;
  });
}

// `resource`: a keel resource's URI (read when the prompt is got), or a literal
// {uri, mimeType?, text} whose uri and text may reference the arguments.
void ReadPromptResource(ObjectReader& message, PromptMessage& out,
                        const std::vector<PromptArgument>& arguments,
                        const std::vector<ResourceEntry>& resources) {
  const Json* value = message.Find("resource");
  if (value == nullptr) return;
  if (value->is_string()) {
    out.resource_uri = value->get<std::string>();
    const size_t before = message.problem_count();
    CheckArgumentReferences(message, "resource", out.resource_uri, arguments);
    if (message.problem_count() == before && !IsKeelResourceUri(out.resource_uri, resources)) {
      message.Problem("resource", Shown(*value) +
                                      " is not the URI of a resource of this catalog (a "
                                      "resources[].uri, or under a directory's uriPrefix)");
    }
    return;
  }
  const Json* object = message.Object("resource");
  if (object == nullptr) return;
  ObjectReader literal = message.Nested(*object, "resource");
  literal.OnlyFields({"uri", "mimeType", "text"});
  // Both may reference the prompt's arguments (substituted when the prompt is got); a URI
  // with no reference must be absolute as written.
  if (auto uri = literal.String("uri", true)) {
    const size_t before = literal.problem_count();
    CheckArgumentReferences(literal, "uri", *uri, arguments);
    if (literal.problem_count() == before && uri->find('{') == std::string::npos &&
        !IsAbsoluteUri(*uri)) {
      literal.Problem("uri", Shown(Json(*uri)) + " is not an absolute URI");
    }
    out.resource_uri = std::move(*uri);
  }
  if (auto mime = ReadMimeType(literal, "mimeType")) out.mime_type = std::move(*mime);
  out.resource_text = literal.String("text", true);
  if (out.resource_text) CheckArgumentReferences(literal, "text", *out.resource_text, arguments);
}

std::optional<PromptMessage> ReadPromptMessage(ObjectReader& owner, const Json& item, size_t index,
                                               const std::vector<PromptArgument>& arguments,
                                               const std::vector<ResourceEntry>& resources) {
  const std::string field = "messages[" + std::to_string(index) + "]";
  if (!item.is_object()) {
    owner.Problem(field, "must be an object, got " + std::string(item.type_name()));
    return std::nullopt;
  }
  ObjectReader reader = owner.Nested(item, field);
  const size_t before = reader.problem_count();
  reader.OnlyFields({"role", "text", "image", "resource"});
  PromptMessage message;
  if (auto role = reader.Choice("role", {"user", "assistant"}, false)) {
    message.role = *role == 0 ? "user" : "assistant";
  }
  const bool text = reader.Find("text") != nullptr;
  const bool image = reader.Find("image") != nullptr;
  const bool resource = reader.Find("resource") != nullptr;
  if (int{text} + int{image} + int{resource} != 1) {
    owner.Problem(field, "needs exactly one of text, image, resource");
  }
  if (auto body = reader.String("text", false)) {
    CheckArgumentReferences(reader, "text", *body, arguments);
    message.text = std::move(*body);
  }
  ReadPromptImage(reader, message);
  ReadPromptResource(reader, message, arguments, resources);
  message.kind = image      ? PromptMessage::Kind::kImage
                 : resource ? PromptMessage::Kind::kResource
                            : PromptMessage::Kind::kText;
  if (reader.problem_count() != before) return std::nullopt;
  return message;
}

std::optional<PromptEntry> ReadPrompt(const Json& item, const std::string& label,
                                      const std::vector<ResourceEntry>& resources,
                                      std::vector<std::string>* problems) {
  ObjectReader reader(item, label, problems);
  const size_t before = reader.problem_count();
  reader.OnlyFields({"name", "title", "description", "arguments", "messages"});
  PromptEntry entry;
  if (auto name = reader.String("name", true)) {
    if (!IsValidToolName(*name)) {
      reader.Problem("name", Shown(Json(*name)) +
                                 " must match ^[a-zA-Z0-9_-]{1,64}$ (hosts make "
                                 "commands of prompt names)");
    }
    entry.name = std::move(*name);
  }
  if (auto title = reader.String("title", false)) entry.title = std::move(*title);
  if (auto description = reader.String("description", false)) {
    entry.description = std::move(*description);
  }
  entry.arguments = ReadPromptArguments(reader);
  const Json* messages = reader.Find("messages");
  if (messages == nullptr || !messages->is_array() || messages->empty()) {
    reader.Problem("messages",
                   "must be a non-empty array of messages, got " +
                       (messages == nullptr ? std::string("nothing") : Shown(*messages)));
  } else {
    for (size_t i = 0; i < messages->size(); ++i) {
      auto message = ReadPromptMessage(reader, (*messages)[i], i, entry.arguments, resources);
      if (message) entry.messages.push_back(std::move(*message));
    }
  }
  if (reader.problem_count() != before) return std::nullopt;
  return entry;
}

}  // namespace

std::vector<PromptEntry> ReadPrompts(const Json& list, const std::vector<ResourceEntry>& resources,
                                     std::vector<std::string>* problems) {
  std::vector<PromptEntry> prompts;
  std::set<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    const Json& item = list[i];
    const std::string label = SurfaceLabel("prompts", item, i);
    if (!item.is_object()) {
      problems->push_back(label + ": must be an object, got " + std::string(item.type_name()));
      continue;
    }
    auto entry = ReadPrompt(item, label, resources, problems);
    if (!entry) continue;
    if (!names.insert(entry->name).second) {
      problems->push_back(label + ".name: " + Shown(Json(entry->name)) +
                          " is already the name of another prompt");
      continue;
    }
    prompts.push_back(std::move(*entry));
  }
  return prompts;
}

}  // namespace keel
