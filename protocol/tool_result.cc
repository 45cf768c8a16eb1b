#include "protocol/tool_result.h"

namespace keel {

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

Json AskForInput(Json input_requests, std::string_view tool_state) {
  Json result = {{"resultType", "input_required"}, {"inputRequests", std::move(input_requests)}};
  if (!tool_state.empty()) result["requestState"] = std::string(tool_state);
  return result;
}

bool IsInputRequired(const Json& result) {
  if (!result.is_object()) return false;
  const auto type = result.find("resultType");
  return type != result.end() && *type == "input_required";
}

}  // namespace keel
