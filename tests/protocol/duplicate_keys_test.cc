// DuplicateKeyFinder: every key written twice in one object is reported once per repeat,
// named by its path (keys joined by ".", array elements by index); equal keys in different
// objects are not duplicates.
#include "protocol/duplicate_keys.h"

#include <functional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace keel::duplicate_keys_test {
namespace {

std::vector<std::string> DuplicatesIn(const std::string& text) {
  DuplicateKeyFinder finder;
  const nlohmann::json parsed = nlohmann::json::parse(text, std::ref(finder));
  CHECK_FALSE(parsed.is_discarded());
  return finder.TakeProblems();
}

std::string Twice(const std::string& path) {
  return path + ": appears more than once in its object; write it once";
}

}  // namespace

TEST_CASE("a key written twice is named by its path with array elements by index") {
  CHECK(DuplicatesIn(R"({"a": 1, "a": 2})") == std::vector<std::string>{Twice("a")});
  CHECK(DuplicatesIn(R"({"tools": [{"x": 1}, 7, [0], {"effect": "w", "effect": "r"}]})") ==
        std::vector<std::string>{Twice("tools[3].effect")});
  CHECK(DuplicatesIn(R"([[1, {"k": {"m": 1, "m": 2, "m": 3}}]])") ==
        std::vector<std::string>{Twice("[0][1].k.m"), Twice("[0][1].k.m")});
}

TEST_CASE("equal keys in different objects are not duplicates") {
  CHECK(
      DuplicatesIn(R"({"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}], "c": {"b": {"a": 0}}})").empty());
  CHECK(DuplicatesIn(R"("scalar")").empty());
}

}  // namespace keel::duplicate_keys_test
