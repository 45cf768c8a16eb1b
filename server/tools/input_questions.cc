#include "server/tools/input_questions.h"

#include <utility>

namespace keel {

Json ElicitForm(std::string_view message, Json requested_schema) {
  Json params = {
      {"mode", "form"}, {"message", message}, {"requestedSchema", std::move(requested_schema)}};
  return Json{{"method", "elicitation/create"}, {"params", std::move(params)}};
}

Json ElicitString(std::string_view message, const std::string& property) {
  return ElicitForm(message, Json{{"type", "object"},
                                  {"properties", {{property, {{"type", "string"}}}}},
                                  {"required", Json::array({property})}});
}

Json SamplingQuestion(std::string_view text, int max_tokens) {
  Json message = {{"role", "user"}, {"content", {{"type", "text"}, {"text", text}}}};
  return Json{
      {"method", "sampling/createMessage"},
      {"params", {{"messages", Json::array({std::move(message)})}, {"maxTokens", max_tokens}}}};
}

Json RootsQuestion() { return Json{{"method", "roots/list"}, {"params", Json::object()}}; }

std::optional<std::string> AcceptedString(const Json& answer, const std::string& property,
                                          std::string* refused) {
  const std::string action =
      answer.is_object() ? answer.value("action", std::string()) : std::string();
  if (action != "accept") {
    *refused = action.empty() ? "no action" : action;
    return std::nullopt;
  }
  const Json content = answer.value("content", Json::object());
  if (content.is_object() && content.contains(property) && content[property].is_string()) {
    return content[property].get<std::string>();
  }
  *refused = "accepted without a string '" + property + "'";
  return std::nullopt;
}

std::string SampledText(const Json& answer) {
  if (!answer.is_object()) return std::string();
  const Json content = answer.value("content", Json());
  auto text_of = [](const Json& block) {
    return block.is_object() && block.value("type", std::string()) == "text" &&
                   block.contains("text") && block["text"].is_string()
               ? block["text"].get<std::string>()
               : std::string();
  };
  if (!content.is_array()) return text_of(content);
  for (const Json& block : content) {
    if (std::string text = text_of(block); !text.empty()) return text;
  }
  return std::string();
}

std::string RootsText(const Json& answer) {
  const Json roots = answer.is_object() ? answer.value("roots", Json::array()) : Json::array();
  std::string text;
  for (const Json& root : roots) {
    if (!root.is_object()) continue;
    if (!text.empty()) text += ", ";
    text += root.value("uri", std::string("?"));
    if (root.contains("name") && root["name"].is_string()) {
      text += " (" + root["name"].get<std::string>() + ")";
    }
  }
  return text.empty() ? "no roots" : text;
}

std::string ElicitationText(const Json& answer) {
  const bool object = answer.is_object();
  const std::string action = object ? answer.value("action", std::string("none")) : "none";
  const Json content = object ? answer.value("content", Json::object()) : Json::object();
  return "action=" + action +
         ", content=" + content.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace keel
