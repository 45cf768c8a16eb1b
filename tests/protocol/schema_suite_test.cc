// The official JSON-Schema-Test-Suite, draft 2020-12 (vendored in json_schema_test_suite/, see its
// README), run through CheckSchemaWellFormed and ValidateSchema: every case of every file must
// give the suite's answer, except the groups keel refuses by design, listed in kRefused below
// with the reason. A listed group must really be refused by CheckSchemaWellFormed (so the table
// cannot hide a wrong answer), and an unlisted group must be accepted.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include "protocol/schema_validator.h"

#ifndef KEEL_SOURCE_DIR
#error "KEEL_SOURCE_DIR must name the source tree"
#endif

namespace schema_suite_test {
namespace {

using nlohmann::json;

struct Refused {
  std::string_view file;   // without ".json"
  std::string_view group;  // the group's description; "*" for every group of the file
  std::string_view reason;
};

// Every group keel refuses, and why. Schemas that mean something keel cannot check are malformed
// for CheckSchemaWellFormed (schema_validator.h), so a tool cannot be registered with one.
constexpr std::string_view kNestedId =
    "nested $id: it changes the base URI references resolve against";
constexpr std::string_view kRemote = "references to other documents: keel fetches nothing";
constexpr std::string_view kDynamic = "$dynamicRef / $dynamicAnchor: dynamic references";

constexpr Refused kRefused[] = {
    {"anchor", "Location-independent identifier with absolute URI", kNestedId},
    {"anchor", "Location-independent identifier with base URI change in subschema", kNestedId},
    {"anchor", "same $anchor with different base uri", kNestedId},
    {"defs", "validate definition against metaschema", kRemote},
    {"dynamicRef", "*", kDynamic},
    {"ref", "$id must be resolved against nearest parent, not just immediate parent", kNestedId},
    {"ref", "Recursive references between schemas", kNestedId},
    {"ref", "URN ref with nested pointer ref", kNestedId},
    {"ref", "order of evaluation: $id and $anchor and $ref", kNestedId},
    {"ref", "order of evaluation: $id and $ref", kNestedId},
    {"ref", "order of evaluation: $id and $ref on nested schema", kNestedId},
    {"ref", "ref to else", kNestedId},
    {"ref", "ref to if", kNestedId},
    {"ref", "ref to then", kNestedId},
    {"ref", "ref with absolute-path-reference", kNestedId},
    {"ref", "refs with relative uris and defs", kNestedId},
    {"ref", "relative refs with absolute uris and defs", kNestedId},
    {"ref", "remote ref, containing refs itself", kRemote},
    {"refRemote", "*", kRemote},
    {"unevaluatedItems", "unevaluatedItems with $dynamicRef", kDynamic},
    {"unevaluatedProperties", "unevaluatedProperties with $dynamicRef", kDynamic},
    {"vocabulary", "*", "custom meta-schemas ($schema) and $vocabulary"},
};

const Refused* FindRefused(const std::string& file, const std::string& group) {
  for (const Refused& refused : kRefused) {
    if (refused.file == file && (refused.group == "*" || refused.group == group)) return &refused;
  }
  return nullptr;
}

struct Tally {
  int passed = 0;
  int skipped = 0;
  std::map<std::string, int> skipped_by_reason;
};

void RunGroup(const std::string& file, const json& group, Tally& tally) {
  const json& schema = group.at("schema");
  const std::string description = group.at("description").get<std::string>();
  INFO(file << ": " << description << "\nschema: " << schema.dump());
  const std::optional<std::string> shape = keel::CheckSchemaWellFormed(schema);
  if (const Refused* refused = FindRefused(file, description)) {
    // A listed group must be refused: the table may not hide a case keel gets wrong.
    CHECK(shape.has_value());
    tally.skipped += static_cast<int>(group.at("tests").size());
    tally.skipped_by_reason[std::string(refused->reason)] +=
        static_cast<int>(group.at("tests").size());
    return;
  }
  INFO("CheckSchemaWellFormed said: " << shape.value_or("ok"));
  CHECK_FALSE(shape.has_value());
  for (const json& test : group.at("tests")) {
    INFO("case: " << test.at("description").get<std::string>()
                  << "\ndata: " << test.at("data").dump());
    const std::optional<std::string> error = keel::ValidateSchema(schema, test.at("data"));
    INFO("validator said: " << error.value_or("valid"));
    const bool expected = test.at("valid").get<bool>();
    CHECK(!error.has_value() == expected);
    // The per-call variant (the schema is checked once, at registration) must agree exactly.
    if (!shape) CHECK(keel::ValidateCheckedSchema(schema, test.at("data")) == error);
    if (!error.has_value() == expected) ++tally.passed;
  }
}

}  // namespace

TEST_CASE(
    "the official JSON-Schema-Test-Suite draft2020-12 cases all pass except those keel refuses",
    "[schema-suite][SRV-4]") {
  const std::filesystem::path dir = std::filesystem::path(KEEL_SOURCE_DIR) / "tests" / "protocol" /
                                    "json_schema_test_suite" / "draft2020-12";
  REQUIRE(std::filesystem::is_directory(dir));
  std::map<std::string, std::filesystem::path> files;  // sorted, for a stable order
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files[entry.path().stem().string()] = entry.path();
  }
  REQUIRE(files.size() >= 40);
  Tally tally;
  for (const auto& [name, path] : files) {
    std::ifstream stream(path);
    const json groups = json::parse(stream);
    REQUIRE(groups.is_array());
    for (const json& group : groups) RunGroup(name, group, tally);
  }
  std::string reasons;
  for (const auto& [reason, count] : tally.skipped_by_reason)
    reasons += "\n  " + std::to_string(count) + " skipped: " + reason;
  std::cerr << "JSON-Schema-Test-Suite draft2020-12: " << tally.passed << " passed, "
            << tally.skipped << " skipped" << reasons << "\n";
  CHECK(tally.passed >= 1000);
}

}  // namespace schema_suite_test
