#include "protocol/bounded_json.h"

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

namespace {

// True when a child of `container` (itself at depth `depth`) nests past kMaxJsonDepth.
// Recursive: at most kMaxJsonDepth frames of a few words each, where an explicit stack of
// iterator pairs cost a heap block of several KiB per call (a large one: glibc then
// consolidated its fast bins on every tool result, measured at 5 % of a worker's time).
bool ChildrenTooDeep(const Json& container, int depth) {
  for (const Json& child : container) {
    if (!child.is_structured()) continue;
    if (depth == kMaxJsonDepth) return true;  // child is one deeper
    if (ChildrenTooDeep(child, depth + 1)) return true;
  }
  return false;
}

}  // namespace

bool JsonTooDeep(const Json& value) { return value.is_structured() && ChildrenTooDeep(value, 1); }

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
