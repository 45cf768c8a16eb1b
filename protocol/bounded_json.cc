#include "protocol/bounded_json.h"

#include <utility>
#include <vector>

#include "protocol/json_parser.h"

namespace keel {

using Json = nlohmann::json;

BoundedJson ParseBoundedJson(std::string_view text) {
  BoundedJson parsed;
  // JsonNestingDepth is never below the depth ParseJson would reach, so within the limit
  // the parser cannot fail for depth, and a too deep text is never parsed at all.
  if (JsonNestingDepth(text) > kMaxJsonDepth) {
    parsed.problem = JsonProblem::kTooDeep;
    return parsed;
  }
  if (!ParseJson(text, kMaxJsonDepth, parsed.value)) {
    parsed.value = nullptr;
    parsed.problem = JsonProblem::kNotJson;
  }
  return parsed;
}

bool JsonTooDeep(const Json& value) {
  if (!value.is_structured()) return false;
  // Depth-first over the containers: entry i is the container open at depth i + 1 and the
  // next of its children to visit.
  std::vector<std::pair<Json::const_iterator, Json::const_iterator>> open;
  open.reserve(kMaxJsonDepth + 1);
  open.emplace_back(value.cbegin(), value.cend());
  while (!open.empty()) {
    auto& [next, end] = open.back();
    if (next == end) {
      open.pop_back();
      continue;
    }
    const Json& child = *next;
    ++next;
    if (!child.is_structured()) continue;
    if (static_cast<int>(open.size()) == kMaxJsonDepth) return true;  // child is one deeper
    open.emplace_back(child.cbegin(), child.cend());
  }
  return false;
}

std::string JsonProblemText(JsonProblem problem) {
  switch (problem) {
    case JsonProblem::kNone:
      return "";
    case JsonProblem::kNotJson:
      return "not JSON";
    case JsonProblem::kTooDeep:
      return "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
  }
  return "";
}

}  // namespace keel
