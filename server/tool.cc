#include "server/tool.h"

namespace keel {

std::string_view TaskSupportName(TaskSupport support) {
  switch (support) {
    case TaskSupport::kForbidden: return "forbidden";
    case TaskSupport::kOptional: return "optional";
    case TaskSupport::kRequired: return "required";
  }
  return "forbidden";
}

Json IntentArguments(const Json& arguments, const std::vector<std::string>& components) {
  if (components.empty() || !arguments.is_object()) return arguments;
  Json intent = Json::object();
  for (const std::string& name : components) {
    if (const auto it = arguments.find(name); it != arguments.end()) intent[name] = *it;
  }
  for (const char* always : {"approval_id", "idempotencyKey"}) {
    if (const auto it = arguments.find(always); it != arguments.end()) intent[always] = *it;
  }
  return intent;
}

Json ToolContext::intent_arguments() const { return IntentArguments(arguments_, key_components_); }

Json TextResult(std::string_view text) {
  // Built by moves: an initializer list would copy every nested value once more.
  Json block = Json::object();
  block["type"] = "text";
  block["text"] = text;
  Json content = Json::array();
  content.push_back(std::move(block));
  Json result = Json::object();
  result["content"] = std::move(content);
  return result;
}

Json StructuredResult(std::string_view text, Json structured) {
  Json result = TextResult(text);
  result["structuredContent"] = std::move(structured);
  return result;
}

const Json* StructuredErrorOf(const Json& result) {
  if (!result.is_object()) return nullptr;
  const auto sc = result.find("structuredContent");
  if (sc == result.end() || !sc->is_object()) return nullptr;
  const auto error = sc->find("error");
  return error != sc->end() && error->is_object() ? &*error : nullptr;
}

Json ErrorResult(std::string_view text, const Json& error) {
  Json result = TextResult(text);
  result["isError"] = true;
  if (!error.is_null()) result["structuredContent"] = Json{{"error", error}};
  return result;
}

}  // namespace keel
