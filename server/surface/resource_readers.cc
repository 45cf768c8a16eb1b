#include "server/surface/resource_readers.h"

#include <utility>

#include "protocol/base64.h"
#include "protocol/tool_result.h"
#include "protocol/utf8.h"
#include "server/resources/mime_type.h"
#include "server/surface/file_source.h"
#include "server/surface/surface_answer.h"
#include "server/surface/text_substitution.h"
#include "server/tools/command_tool.h"

namespace keel {
namespace {

Json Contents(Json item) {
  return StructuredResult("1 content item", Json{{"contents", Json::array({std::move(item)})}});
}

ToolSpec ReaderSpec(const std::string& name, const std::string& description) {
  ToolSpec spec;
  spec.name = "resource:" + name;
  spec.description = description;
  spec.input_schema = Json{{"type", "object"}};
  spec.effect = EffectClass::kRead;
  return spec;
}

Json FromFile(const std::string& uri, const FileBytes& file, const std::string& mime_override) {
  switch (file.status) {
    case FileBytes::Status::kOk:
      return Contents(
          ContentItem(uri, mime_override.empty() ? file.mime_type : mime_override, file.bytes));
    case FileBytes::Status::kNotFound:
      return ResourceNotFoundResult(uri);
    case FileBytes::Status::kFailed:
      break;
  }
  return ErrorResult("Could not read " + uri + ": " + file.error,
                     Json{{"type", "resource_unreadable"}, {"uri", uri}});
}

class StaticReader final : public Tool {
 public:
  explicit StaticReader(const ResourceEntry& entry)
      : entry_(entry), spec_(ReaderSpec(entry.name, "reads resource " + entry.uri)) {}
  const ToolSpec& spec() const override { return spec_; }
  Json Call(ToolContext&) override {
    if (entry_.text) {
      return Contents(Json{{"uri", entry_.uri},
                           {"mimeType", entry_.mime_type.empty() ? "text/plain" : entry_.mime_type},
                           {"text", *entry_.text}});
    }
    if (entry_.blob) {
      return Contents(Json{
          {"uri", entry_.uri},
          {"mimeType", entry_.mime_type.empty() ? "application/octet-stream" : entry_.mime_type},
          {"blob", *entry_.blob}});
    }
    return FromFile(entry_.uri, ReadResourceFile(entry_.file, entry_.max_bytes), entry_.mime_type);
  }

 private:
  ResourceEntry entry_;
  ToolSpec spec_;
};

class MountReader final : public Tool {
 public:
  explicit MountReader(const ResourceEntry& entry)
      : entry_(entry), spec_(ReaderSpec(entry.name, "reads files under " + entry.uri_prefix)) {}
  const ToolSpec& spec() const override { return spec_; }
  Json Call(ToolContext& ctx) override {
    const std::string uri = ctx.arguments().value("uri", "");
    const std::string path = ctx.arguments().value("path", "");
    return FromFile(uri, ReadMountedFile(entry_.directory, path, entry_.max_bytes),
                    entry_.mime_type);
  }

 private:
  ResourceEntry entry_;
  ToolSpec spec_;
};

class TextTemplateReader final : public Tool {
 public:
  explicit TextTemplateReader(const ResourceTemplateEntry& entry)
      : entry_(entry), spec_(ReaderSpec(entry.name, "reads " + entry.uri_template)) {}
  const ToolSpec& spec() const override { return spec_; }
  Json Call(ToolContext& ctx) override {
    const std::string uri = ctx.arguments().value("uri", "");
    return Contents(Json{{"uri", uri},
                         {"mimeType", entry_.mime_type.empty() ? "text/plain" : entry_.mime_type},
                         {"text", SubstituteArguments(*entry_.text, ctx.arguments())}});
  }

 private:
  ResourceTemplateEntry entry_;
  ToolSpec spec_;
};

// A file whose name says nothing of its type (README, Makefile) that holds UTF-8 text with no
// control characters but tab, CR and LF is text/plain: hosts show it instead of a blob.
bool LooksLikePlainText(const std::string& bytes) {
  if (!IsValidUtf8(bytes)) return false;
  for (const char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t' && c != '\r' && c != '\n') || u == 0x7F) return false;
  }
  return true;
}

}  // namespace

Json ContentItem(const std::string& uri, const std::string& mime_type, const std::string& bytes) {
  Json item = {{"uri", uri}, {"mimeType", mime_type}};
  if (mime_type == "application/octet-stream" && LooksLikePlainText(bytes)) {
    item["mimeType"] = "text/plain";
    item["text"] = bytes;
  } else if (IsTextMimeType(mime_type) && IsValidUtf8(bytes)) {
    item["text"] = bytes;
  } else {
    item["blob"] = Base64Encode(bytes);
  }
  return item;
}

std::unique_ptr<Tool> MakeStaticReader(const ResourceEntry& entry) {
  return std::make_unique<StaticReader>(entry);
}

std::unique_ptr<Tool> MakeMountReader(const ResourceEntry& entry) {
  return std::make_unique<MountReader>(entry);
}

std::unique_ptr<Tool> MakeTemplateReader(const ResourceTemplateEntry& entry,
                                         const std::vector<std::string>& variables,
                                         std::shared_ptr<LedgerService> ledger) {
  if (!entry.run) return std::make_unique<TextTemplateReader>(entry);
  ToolSpec spec = ReaderSpec(entry.name, "reads " + entry.uri_template);
  Json properties = {{"uri", {{"type", "string"}}}};
  Json required = Json::array({"uri"});
  for (const std::string& variable : variables) {
    properties[variable] = {{"type", "string"}};
    required.push_back(variable);
  }
  spec.input_schema = {{"type", "object"}, {"properties", properties}, {"required", required}};
  return std::make_unique<CommandTool>(std::move(spec), *entry.run, std::move(ledger));
}

}  // namespace keel
