// Unit tests for protocol/bounded_json.h: the depth rule for JSON keel did not write itself
// (70,000 levels of command output once crashed keel in the serializer).
#include "protocol/bounded_json.h"

#include <string>

#include <catch2/catch.hpp>

namespace bounded_json_test {

namespace {

using keel::JsonProblem;
using nlohmann::json;

std::string NestedArrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

// {"a":[[...]]} with `depth` levels in all, as a command might print it.
std::string NestedUnderKey(int depth) { return "{\"a\":" + NestedArrays(depth - 1) + "}"; }

// A value `depth` arrays deep, built without recursion (moves do not recurse, and nlohmann
// destroys a value iteratively).
json DeepValue(int depth) {
  json value = json::array();
  for (int i = 1; i < depth; ++i) {
    json outer = json::array();
    outer.push_back(std::move(value));
    value = std::move(outer);
  }
  return value;
}

}  // namespace

TEST_CASE("bounded parsing reads JSON nested up to 128 levels") {
  const keel::BoundedJson at_limit = keel::ParseBoundedJson(NestedUnderKey(128));
  REQUIRE(at_limit.ok());
  CHECK(at_limit.value.is_object());

  const keel::BoundedJson plain = keel::ParseBoundedJson(R"({"n":1,"s":"[[[["})");
  REQUIRE(plain.ok());
  CHECK(plain.value == json{{"n", 1}, {"s", "[[[["}});
}

TEST_CASE("bounded parsing refuses text nested deeper than 128 levels, however deep") {
  for (const int depth : {129, 70000, 100000}) {
    INFO("depth " << depth);
    const keel::BoundedJson parsed = keel::ParseBoundedJson(NestedUnderKey(depth));
    CHECK(parsed.problem == JsonProblem::kTooDeep);
    CHECK(parsed.value.is_null());
  }
  // Unbalanced text is measured the same way: it is never parsed.
  CHECK(keel::ParseBoundedJson(std::string(100000, '[')).problem == JsonProblem::kTooDeep);
}

TEST_CASE("bounded parsing tells text that is not JSON from text that is too deep") {
  for (const char* text : {"", "{", "{\"a\":}", "[1,]", "hello", "{} {}", "\"\xff\""}) {
    INFO("text: " << text);
    const keel::BoundedJson parsed = keel::ParseBoundedJson(text);
    CHECK(parsed.problem == JsonProblem::kNotJson);
    CHECK(parsed.value.is_null());
  }
}

TEST_CASE("a built value nested deeper than 128 levels is too deep, measured without recursion") {
  CHECK_FALSE(keel::JsonTooDeep(json(1)));
  CHECK_FALSE(keel::JsonTooDeep(json::object()));
  CHECK_FALSE(keel::JsonTooDeep(DeepValue(128)));
  CHECK(keel::JsonTooDeep(DeepValue(129)));
  CHECK(keel::JsonTooDeep(DeepValue(100000)));  // would overflow the stack if it recursed

  // The deep branch may be anywhere, inside objects and after shallow siblings.
  json result = {{"content", json::array({{{"type", "text"}, {"text", "ok"}}})},
                 {"structuredContent", {{"a", 1}, {"b", json::array({1, 2, 3})}}}};
  CHECK_FALSE(keel::JsonTooDeep(result));
  result["structuredContent"]["z"] = DeepValue(127);  // 2 + 127 levels
  CHECK(keel::JsonTooDeep(result));
  result["structuredContent"]["z"] = DeepValue(126);  // 2 + 126 levels: the limit
  CHECK_FALSE(keel::JsonTooDeep(result));
}

TEST_CASE("a too deep value's problem text names the limit") {
  CHECK(keel::JsonProblemText(JsonProblem::kTooDeep) == "nested deeper than 128 levels");
  CHECK(keel::JsonProblemText(JsonProblem::kNotJson) == "not JSON");
  CHECK(keel::JsonProblemText(JsonProblem::kNone).empty());
}

}  // namespace bounded_json_test
