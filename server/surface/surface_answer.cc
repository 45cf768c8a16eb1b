#include "server/surface/surface_answer.h"

#include <sstream>

#include "protocol/error_codes.h"
#include "protocol/tool_result.h"
#include "server/surface/completion.h"

namespace keel {
namespace {

// The text blocks of a CallToolResult, joined with newlines.
std::string TextOf(const Json& result) {
  std::string text;
  const auto content = result.find("content");
  if (content == result.end() || !content->is_array()) return text;
  for (const Json& block : *content) {
    if (!block.is_object() || block.value("type", "") != "text") continue;
    const auto it = block.find("text");
    if (it == block.end() || !it->is_string()) continue;
    if (!text.empty()) text += '\n';
    text += it->get<std::string>();
  }
  return text;
}

RpcError ErrorOf(const WireForm& wire, const Json& result, const std::string& uri) {
  const Json* error = StructuredErrorOf(result);
  const std::string type = error != nullptr ? error->value("type", "") : "";
  if (type == kResourceNotFoundType) return ResourceNotFound(wire, uri);
  std::string text = TextOf(result);
  if (text.empty()) text = "the server could not answer";
  if (type == "invalid_params" || type == "invalid_arguments") return InvalidParams(text);
  Json data;
  if (!type.empty()) data = Json{{"type", type}};
  return RpcError{kInternalError, text, data};
}

Json CommandContents(const Json& result, const std::string& uri, const std::string& mime_type) {
  Json item = {{"uri", uri}, {"mimeType", mime_type.empty() ? "text/plain" : mime_type}};
  item["text"] = TextOf(result);
  return Json{{"contents", Json::array({std::move(item)})}};
}

// A completion command's stdout lines (surface_answer.h rule 2), capped (completion.h).
Json CommandValues(const Json& result) {
  std::vector<std::string> values;
  std::istringstream lines(TextOf(result));
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) values.push_back(line);
  }
  return ToWire(CappedCompletion(std::move(values)));
}

// Rule 4: a modern read says how long it may be reused.
Json WithReadHints(const WireForm& wire, AnswerAs as, Json result) {
  if (as != AnswerAs::kResource || !IsModern(wire)) return result;
  if (!result.contains("ttlMs")) result["ttlMs"] = 0;
  if (!result.contains("cacheScope")) result["cacheScope"] = "public";
  return result;
}

}  // namespace

Json ResourceNotFoundResult(const std::string& uri) {
  return ErrorResult("Resource not found: " + uri,
                     Json{{"type", kResourceNotFoundType}, {"uri", uri}});
}

std::variant<Json, RpcError> SurfaceAnswer(const WireForm& wire, AnswerAs as, const Json& result,
                                           const std::string& uri, const std::string& mime_type) {
  if (!result.is_object()) return RpcError{kInternalError, "the server could not answer", Json()};
  if (result.value("isError", false)) return ErrorOf(wire, result, uri);
  const auto structured = result.find("structuredContent");
  const char* member = as == AnswerAs::kResource ? "contents"
                       : as == AnswerAs::kPrompt ? "messages"
                                                 : "values";
  if (as != AnswerAs::kCompletion && structured != result.end() && structured->is_object() &&
      structured->contains(member)) {
    return WithReadHints(wire, as, *structured);
  }
  if (as == AnswerAs::kCompletion && structured != result.end() && structured->is_object() &&
      structured->contains("completion")) {
    return *structured;  // a forwarded completion/complete result (keel wrap)
  }
  if (as == AnswerAs::kResource)
    return WithReadHints(wire, as, CommandContents(result, uri, mime_type));
  if (as == AnswerAs::kCompletion) return CommandValues(result);
  return RpcError{kInternalError, "the prompt gave no messages", Json()};
}

}  // namespace keel
