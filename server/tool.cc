#include "server/tool.h"

namespace keel {

Json TextResult(std::string_view text) {
  return Json{{"content", Json::array({Json{{"type", "text"}, {"text", std::string(text)}}})}};
}

Json ErrorResult(std::string_view text, const Json& error) {
  Json result = TextResult(text);
  result["isError"] = true;
  if (!error.is_null()) result["structuredContent"] = Json{{"error", error}};
  return result;
}

}  // namespace keel
