#include "protocol/schema_validator.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <catch2/catch.hpp>

namespace schema_validator_test {

#ifndef KEEL_SCHEMA_SUITE_DIR
#error "KEEL_SCHEMA_SUITE_DIR must name the JSON-Schema-Test-Suite tests directory"
#endif

namespace {

using nlohmann::json;

// Catch cannot print std::optional, so compare against a string: "valid" or the message.
std::string Outcome(const json& schema, const json& instance) {
  return keel::ValidateSchema(schema, instance).value_or("valid");
}

std::string WellFormed(const json& schema) {
  return keel::CheckSchemaWellFormed(schema).value_or("ok");
}

// `depth` arrays nested inside each other, built without recursion.
json NestedArrays(int depth) {
  json value = json::array();
  for (int i = 0; i < depth; ++i) value = json::array({std::move(value)});
  return value;
}

}  // namespace

TEST_CASE("the true schema accepts anything and the false schema rejects everything") {
  CHECK(Outcome(true, json::object()) == "valid");
  CHECK(Outcome(true, nullptr) == "valid");
  CHECK(Outcome(false, json::object()) == "arguments: no value is allowed here");
  CHECK(Outcome(json::object(), R"({"anything": [1, 2]})"_json) == "valid");
}

TEST_CASE("a type mismatch names the location, the expected type and the actual type") {
  json schema = R"({"type": "object", "properties": {"text": {"type": "string"}}})"_json;
  CHECK(Outcome(schema, R"({"text": "hi"})"_json) == "valid");
  CHECK(Outcome(schema, R"({"text": 3})"_json) == "arguments.text: expected string, got integer");
  CHECK(Outcome(schema, R"({"text": 3.5})"_json) == "arguments.text: expected string, got number");
  CHECK(Outcome(schema, R"([])"_json) == "arguments: expected object, got array");
  CHECK(Outcome(R"({"type": "null"})"_json, false) == "arguments: expected null, got boolean");
  CHECK(Outcome(R"({"type": "boolean"})"_json, nullptr) == "arguments: expected boolean, got null");
  CHECK(Outcome(R"({"type": "array"})"_json, "x") == "arguments: expected array, got string");
}

TEST_CASE("integer accepts integral numbers including 1.0 and number accepts integers") {
  json integer = R"({"type": "integer"})"_json;
  CHECK(Outcome(integer, 1) == "valid");
  CHECK(Outcome(integer, -7) == "valid");
  CHECK(Outcome(integer, R"(1.0)"_json) == "valid");
  CHECK(Outcome(integer, 18446744073709551615ULL) == "valid");
  CHECK(Outcome(integer, 1.5) == "arguments: expected integer, got number");
  CHECK(Outcome(integer, true) == "arguments: expected integer, got boolean");
  CHECK(Outcome(R"({"type": "number"})"_json, 3) == "valid");
  CHECK(Outcome(R"({"type": "number"})"_json, 3.25) == "valid");
  CHECK(Outcome(R"({"type": "number"})"_json, "3") == "arguments: expected number, got string");
}

TEST_CASE("a type array accepts any listed type and lists them all when none matches") {
  json schema = R"({"type": ["integer", "string", "null"]})"_json;
  CHECK(Outcome(schema, 4) == "valid");
  CHECK(Outcome(schema, "four") == "valid");
  CHECK(Outcome(schema, nullptr) == "valid");
  CHECK(Outcome(schema, false) == "arguments: expected integer or string or null, got boolean");
}

TEST_CASE("a missing required property names the property") {
  json schema = R"({"type": "object", "required": ["text", "count"]})"_json;
  CHECK(Outcome(schema, R"({"text": "a", "count": 1})"_json) == "valid");
  CHECK(Outcome(schema, R"({"count": 1})"_json) == "arguments: missing required property 'text'");
  CHECK(Outcome(schema, R"({"text": "a"})"_json) == "arguments: missing required property 'count'");
  // required only constrains objects
  CHECK(Outcome(R"({"required": ["text"]})"_json, "not an object") == "valid");
}

TEST_CASE("nested property errors use dotted paths and odd names are quoted") {
  json schema = R"({"properties": {"options": {"properties": {
      "level": {"type": "integer"}, "dry run": {"type": "boolean"}}, "required": ["needed"]}}})"_json;
  CHECK(Outcome(schema, R"({"options": {"level": "high", "needed": 1}})"_json) ==
        "arguments.options.level: expected integer, got string");
  CHECK(Outcome(schema, R"({"options": {"dry run": 1, "needed": 1}})"_json) ==
        "arguments.options[\"dry run\"]: expected boolean, got integer");
  CHECK(Outcome(schema, R"({"options": {}})"_json) ==
        "arguments.options: missing required property 'needed'");
  // properties only constrain objects, and absent properties are not checked
  CHECK(Outcome(schema, R"([1])"_json) == "valid");
  CHECK(Outcome(schema, R"({})"_json) == "valid");
}

TEST_CASE("the root location name can be chosen by the caller") {
  json schema = R"({"properties": {"n": {"type": "integer"}}})"_json;
  CHECK(keel::ValidateSchema(schema, R"({"n": "x"})"_json, "params").value_or("valid") ==
        "params.n: expected integer, got string");
}

TEST_CASE("enum failures quote the value and the allowed values") {
  json schema = R"({"properties": {"mode": {"enum": ["a", "b"]}}})"_json;
  CHECK(Outcome(schema, R"({"mode": "a"})"_json) == "valid");
  CHECK(Outcome(schema, R"({"mode": "x"})"_json) ==
        R"(arguments.mode: "x" is not one of ["a","b"])");
}

TEST_CASE("enum and const compare deeply, with 1 equal to 1.0 but false not equal to 0") {
  json numbers = R"({"enum": [1, 2]})"_json;
  CHECK(Outcome(numbers, R"(1.0)"_json) == "valid");
  CHECK(Outcome(numbers, R"(2.5)"_json) == "arguments: 2.5 is not one of [1,2]");
  CHECK(Outcome(R"({"enum": [false]})"_json, 0) == "arguments: 0 is not one of [false]");
  CHECK(Outcome(R"({"enum": [0]})"_json, false) == "arguments: false is not one of [0]");
  CHECK(Outcome(R"({"const": {"a": [1, {"b": null}]}})"_json,
                R"({"a": [1.0, {"b": null}]})"_json) == "valid");
  CHECK(Outcome(R"({"const": {"a": [1]}})"_json, R"({"a": [1], "b": 2})"_json) ==
        R"(arguments: {"a":[1],"b":2} is not equal to {"a":[1]})");
  CHECK(Outcome(R"({"const": "on"})"_json, "off") == R"(arguments: "off" is not equal to "on")");
  CHECK(Outcome(R"({"const": null})"_json, nullptr) == "valid");
}

TEST_CASE("numeric bounds report the value and the bound") {
  json schema = R"({"properties": {"count": {"minimum": 1, "maximum": 10}}})"_json;
  CHECK(Outcome(schema, R"({"count": 1})"_json) == "valid");
  CHECK(Outcome(schema, R"({"count": 10})"_json) == "valid");
  CHECK(Outcome(schema, R"({"count": 0})"_json) == "arguments.count: 0 is less than minimum 1");
  CHECK(Outcome(schema, R"({"count": 10.5})"_json) ==
        "arguments.count: 10.5 is greater than maximum 10");
  json exclusive = R"({"exclusiveMinimum": 0, "exclusiveMaximum": 1})"_json;
  CHECK(Outcome(exclusive, 0.5) == "valid");
  CHECK(Outcome(exclusive, 0) == "arguments: 0 is not greater than exclusiveMinimum 0");
  CHECK(Outcome(exclusive, 1) == "arguments: 1 is not less than exclusiveMaximum 1");
  // Bounds only constrain numbers.
  CHECK(Outcome(schema, R"({"count": "0"})"_json) == "valid");
}

TEST_CASE("numeric bounds compare exactly across integer and floating representations") {
  // 2^53 + 1 is not representable as a double; a naive cast would call it equal to 2^53.
  CHECK(Outcome(R"({"maximum": 9007199254740992.0})"_json, R"(9007199254740993)"_json) ==
        "arguments: 9007199254740993 is greater than maximum 9.007199254740992e+15");
  CHECK(Outcome(R"({"maximum": 9007199254740992})"_json, R"(9007199254740992.0)"_json) == "valid");
  CHECK(Outcome(R"({"minimum": -1})"_json, R"(18446744073709551615)"_json) == "valid");
  CHECK(Outcome(R"({"maximum": -1})"_json, R"(18446744073709551615)"_json) ==
        "arguments: 18446744073709551615 is greater than maximum -1");
  CHECK(Outcome(R"({"maximum": 18446744073709551615})"_json, R"(-5)"_json) == "valid");
  CHECK(Outcome(R"({"minimum": 2})"_json, R"(1.9999999)"_json) ==
        "arguments: 1.9999999 is less than minimum 2");
  CHECK(Outcome(R"({"exclusiveMaximum": 1e300})"_json, R"(9223372036854775807)"_json) == "valid");
}

TEST_CASE("string lengths count Unicode code points, not bytes") {
  json schema = R"({"minLength": 2, "maxLength": 3})"_json;
  CHECK(Outcome(schema, "ab") == "valid");
  CHECK(Outcome(schema, "\xC3\xA9\xC3\xA9\xC3\xA9") == "valid");  // "ééé": 6 bytes, 3 code points
  CHECK(Outcome(schema, "\xF0\x9F\x92\xA9") ==
        "arguments: string has 1 character, fewer than minLength 2");
  CHECK(Outcome(schema, "abcd") == "arguments: string has 4 characters, more than maxLength 3");
  CHECK(Outcome(schema, 12345) == "valid");  // lengths only constrain strings
}

TEST_CASE("array item errors use [i] paths") {
  json schema = R"({"properties": {"tags": {"type": "array", "items": {"type": "string"}}}})"_json;
  CHECK(Outcome(schema, R"({"tags": ["a", "b"]})"_json) == "valid");
  CHECK(Outcome(schema, R"({"tags": ["a", "b", 3]})"_json) ==
        "arguments.tags[2]: expected string, got integer");
  json matrix = R"({"items": {"items": {"type": "number"}}})"_json;
  CHECK(Outcome(matrix, R"([[1], [2, "x"]])"_json) ==
        "arguments[1][1]: expected number, got string");
  json records = R"({"items": {"required": ["id"]}})"_json;
  CHECK(Outcome(records, R"([{"id": 1}, {}])"_json) ==
        "arguments[1]: missing required property 'id'");
}

TEST_CASE("the array form of items applies positionally and leaves extra items free") {
  json schema = R"({"items": [{"type": "integer"}, {"type": "string"}, false]})"_json;
  CHECK(Outcome(schema, R"([1, "a"])"_json) == "valid");
  CHECK(Outcome(schema, R"([1])"_json) == "valid");
  CHECK(Outcome(schema, R"(["a", 1])"_json) == "arguments[0]: expected integer, got string");
  CHECK(Outcome(schema, R"([1, "a", null])"_json) == "arguments[2]: no value is allowed here");
  CHECK(Outcome(R"({"items": [true]})"_json, R"([1, 2, 3])"_json) == "valid");
}

TEST_CASE("minItems and maxItems report the item count") {
  json schema = R"({"minItems": 1, "maxItems": 2})"_json;
  CHECK(Outcome(schema, R"([1])"_json) == "valid");
  CHECK(Outcome(schema, R"([])"_json) == "arguments: array has 0 items, fewer than minItems 1");
  CHECK(Outcome(R"({"minItems": 2})"_json, R"([1])"_json) ==
        "arguments: array has 1 item, fewer than minItems 2");
  CHECK(Outcome(schema, R"([1, 2, 3])"_json) ==
        "arguments: array has 3 items, more than maxItems 2");
  CHECK(Outcome(schema, "not an array") == "valid");
}

TEST_CASE("additionalProperties false names the unexpected property") {
  json schema = R"({"properties": {"text": {}}, "additionalProperties": false})"_json;
  CHECK(Outcome(schema, R"({"text": 1})"_json) == "valid");
  CHECK(Outcome(schema, R"({"text": 1, "foo": 2})"_json) == "arguments: unexpected property 'foo'");
}

TEST_CASE("an additionalProperties schema applies only to undeclared properties") {
  json schema =
      R"({"properties": {"name": {"type": "string"}}, "additionalProperties": {"type": "boolean"}})"_json;
  CHECK(Outcome(schema, R"({"name": "n", "verbose": true})"_json) == "valid");
  CHECK(Outcome(schema, R"({"name": "n", "verbose": "yes"})"_json) ==
        "arguments.verbose: expected boolean, got string");
  CHECK(Outcome(R"({"additionalProperties": true})"_json, R"({"x": 1})"_json) == "valid");
}

TEST_CASE("annotations and unknown keywords do not affect validation") {
  json schema =
      R"({"$schema": "http://json-schema.org/draft-07/schema#", "title": "t", "description": "d",
                    "default": 3, "examples": [1], "pattern": "^a", "x-custom": {"type": "string"},
                    "type": "integer"})"_json;
  CHECK(Outcome(schema, 5) == "valid");
  CHECK(Outcome(schema, "b") == "arguments: expected integer, got string");
}

TEST_CASE("a malformed schema makes validation report an invalid schema instead of throwing") {
  for (const char* text :
       {R"({"type": "strin"})", R"({"minimum": "1"})", R"({"required": "text"})",
        R"({"properties": {"a": 5}})", R"({"minLength": -1})", R"({"maxItems": 1.5})",
        R"({"enum": 3})", R"({"items": [{"type": 1}]})", R"(42)"}) {
    INFO(text);
    std::optional<std::string> result;
    REQUIRE_NOTHROW(result = keel::ValidateSchema(json::parse(text), json::object()));
    REQUIRE(result.has_value());
    CHECK(result->rfind("arguments: schema is invalid: #", 0) == 0);
  }
  CHECK(Outcome(R"({"properties": {"a": {"exclusiveMinimum": true}}})"_json, json::object()) ==
        "arguments: schema is invalid: #/properties/a/exclusiveMinimum: must be a number, got "
        "boolean");
}

TEST_CASE("well-formedness accepts a typical tool schema and rejects unknown keywords") {
  json tool = R"({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
      "properties": {"text": {"type": "string", "minLength": 1, "description": "what to say"},
                     "count": {"type": "integer", "minimum": 1, "maximum": 5, "default": 1},
                     "mode": {"enum": ["a", "b"]}, "tags": {"type": "array", "items": {"type": "string"}}},
      "required": ["text"], "additionalProperties": false})"_json;
  CHECK(WellFormed(tool) == "ok");
  CHECK(WellFormed(true) == "ok");
  CHECK(WellFormed(R"({"properties": {"a/b": {"patern": "x"}}})"_json) ==
        "#/properties/a~1b/patern: unknown keyword: keel would not check it, so a typo could "
        "silently drop a constraint (a vendor annotation must start with \"x-\")");
  CHECK(WellFormed(R"({"type": "strin"})"_json) == "#/type: unknown type \"strin\"");
  CHECK(WellFormed(R"({"type": ["string", "string"]})"_json) ==
        "#/type: lists type \"string\" twice");
  CHECK(WellFormed(R"({"required": ["a", 1]})"_json) ==
        "#/required: must contain only strings, got integer");
  CHECK(WellFormed(R"({"minLength": -1})"_json) ==
        "#/minLength: must be a non-negative integer, got -1");
  CHECK(WellFormed(R"({"description": 3})"_json) == "#/description: must be a string, got integer");
  CHECK(WellFormed("object") == "#: a schema must be an object or a boolean, got string");
}

TEST_CASE("a $ref to the root's $defs is enforced, as in the MCP 2020-12 example schema") {
  // The inputSchema of json_schema_2020_12_tool in conformance suite 0.1.16 (SEP-1613).
  json schema = R"({"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
      "$defs": {"address": {"type": "object",
                            "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
      "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
      "additionalProperties": false})"_json;
  CHECK(WellFormed(schema) == "ok");
  CHECK(Outcome(schema, R"({"name": "n", "address": {"street": "s", "city": "c"}})"_json) ==
        "valid");
  CHECK(Outcome(schema, R"({"address": {"city": 5}})"_json) ==
        "arguments.address.city: expected string, got integer");
  CHECK(Outcome(schema, R"({"address": "x"})"_json) ==
        "arguments.address: expected object, got string");
  CHECK(Outcome(schema, R"({"zip": 1})"_json) == "arguments: unexpected property 'zip'");
  CHECK(keel::ValidateCheckedSchema(schema, R"({"address": {"city": 5}})"_json) ==
        keel::ValidateSchema(schema, R"({"address": {"city": 5}})"_json));
}

TEST_CASE("a $ref applies together with its sibling keywords and may name a boolean schema") {
  json schema = R"({"$defs": {"s": {"type": "string"}, "no": false, "a/b~c": {"minimum": 3}},
      "properties": {"short": {"$ref": "#/$defs/s", "maxLength": 2}, "never": {"$ref": "#/$defs/no"},
                     "escaped": {"$ref": "#/$defs/a~1b~0c"}}})"_json;
  CHECK(WellFormed(schema) == "ok");
  CHECK(Outcome(schema, R"({"short": "ab"})"_json) == "valid");
  CHECK(Outcome(schema, R"({"short": 5})"_json) == "arguments.short: expected string, got integer");
  CHECK(Outcome(schema, R"({"short": "abc"})"_json) ==
        "arguments.short: string has 3 characters, more than maxLength 2");
  CHECK(Outcome(schema, R"({"never": null})"_json) == "arguments.never: no value is allowed here");
  CHECK(Outcome(schema, R"({"escaped": 2})"_json) == "arguments.escaped: 2 is less than minimum 3");
}

TEST_CASE("a recursive $ref that descends into the instance is fine and stays depth bounded") {
  json schema =
      R"({"$defs": {"node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/node"}},
                                        "additionalProperties": false}},
                    "$ref": "#/$defs/node"})"_json;
  CHECK(WellFormed(schema) == "ok");
  CHECK(Outcome(schema, R"({"child": {"child": {}}})"_json) == "valid");
  CHECK(Outcome(schema, R"({"child": {"child": {"x": 1}}})"_json) ==
        "arguments.child.child: unexpected property 'x'");
  json deep = json::object();
  for (int i = 0; i < 100; ++i) deep = json{{"child", std::move(deep)}};
  CHECK(Outcome(schema, deep).find("schema nests deeper than 64 levels") != std::string::npos);
}

TEST_CASE("references to other documents, dangling ones and loops are malformed") {
  CHECK(WellFormed(R"({"properties": {"a": {"$ref": "#/definitions/x"}}})"_json) ==
        "#/properties/a/$ref: \"#/definitions/x\" names no location in this schema");
  CHECK(WellFormed(R"({"$ref": "https://example.com/s.json"})"_json) ==
        "#/$ref: \"https://example.com/s.json\" refers to another document: keel resolves "
        "references only inside the schema itself");
  CHECK(WellFormed(R"({"$ref": "other.json#/$defs/a"})"_json).find("refers to another document") !=
        std::string::npos);
  CHECK(WellFormed(R"({"$defs": {"a b": true}, "$ref": "#/$defs/a%20b"})"_json) == "ok");
  CHECK(WellFormed(R"({"$ref": "#/$defs/missing"})"_json) ==
        "#/$ref: \"#/$defs/missing\" names no location in this schema");
  CHECK(WellFormed(R"({"$ref": 3})"_json) == "#/$ref: must be a string, got integer");
  CHECK(WellFormed(R"({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}})"_json)
            .find("form a cycle that never descends into the instance") != std::string::npos);
  CHECK(WellFormed(R"({"$defs": {"a": {"patern": "x"}}})"_json)
            .rfind("#/$defs/a/patern: unknown keyword", 0) == 0);
  CHECK(WellFormed(R"({"$defs": []})"_json) == "#/$defs: must be an object, got array");
  // Validation reports such a schema as invalid instead of guessing.
  CHECK(Outcome(R"({"$ref": "#/$defs/missing"})"_json, 1)
            .rfind("arguments: schema is invalid: #/$ref", 0) == 0);
}

TEST_CASE("schema nesting past the depth bound is reported, not recursed into") {
  json deep = json::object();
  for (int i = 0; i < 200; ++i) deep = json{{"items", std::move(deep)}};
  CHECK(WellFormed(deep).find("schema nests deeper than 64 levels") != std::string::npos);
  CHECK(Outcome(deep, json::array()).find("schema is invalid") != std::string::npos);
  json deep_const = json{{"const", NestedArrays(200)}};
  CHECK(WellFormed(deep_const) == "#/const: nests deeper than 64 levels");
}

TEST_CASE("a hostile deeply nested instance neither overflows the stack nor floods the message") {
  json instance = NestedArrays(100000);
  CHECK(Outcome(R"({"items": {"items": {"type": "array"}}})"_json, instance) == "valid");
  CHECK(Outcome(R"({"enum": [[[1]]]})"_json, instance) ==
        "arguments: <deeply nested array> is not one of [[[1]]]");
  CHECK(Outcome(R"({"const": 1})"_json, instance) ==
        "arguments: <deeply nested array> is not equal to 1");
  CHECK(Outcome(R"({"type": "object"})"_json, instance) == "arguments: expected object, got array");
  json long_string = std::string(10000, 'x');
  CHECK(Outcome(R"({"enum": ["y"]})"_json, long_string).size() < 200);
}

namespace {

// Every keyword the validator implements; a suite group whose schema uses anything else
// (anywhere, recursively) is skipped rather than expected to pass.
// An allow-list rather than a list of known-unsupported keywords, so a keyword added to a future
// suite release is skipped and reported instead of failing mysteriously.
const std::set<std::string> kSupportedKeywords = {"type",
                                                  "enum",
                                                  "const",
                                                  "minimum",
                                                  "maximum",
                                                  "exclusiveMinimum",
                                                  "exclusiveMaximum",
                                                  "minLength",
                                                  "maxLength",
                                                  "items",
                                                  "minItems",
                                                  "maxItems",
                                                  "properties",
                                                  "required",
                                                  "additionalProperties",
                                                  "patternProperties",
                                                  "description",
                                                  "title",
                                                  "default",
                                                  "$schema",
                                                  "examples",
                                                  "$comment"};

// Collects the keywords used by `schema`, descending only into values that are themselves schemas,
// so that a property merely *named* like a keyword is not mistaken for one.
void CollectKeywords(const json& schema, std::set<std::string>& keywords) {
  if (!schema.is_object()) return;
  for (const auto& [key, value] : schema.items()) {
    keywords.insert(key);
    if (key == "properties" && value.is_object()) {
      for (const auto& [name, sub] : value.items()) CollectKeywords(sub, keywords);
    } else if (key == "items" && value.is_array()) {
      for (const json& sub : value) CollectKeywords(sub, keywords);
    } else if (key == "patternProperties" && value.is_object()) {
      for (const auto& [name, sub] : value.items()) CollectKeywords(sub, keywords);
    } else if (key == "items" || key == "additionalProperties") {
      CollectKeywords(value, keywords);
    }
  }
}

}  // namespace

TEST_CASE("the official JSON-Schema-Test-Suite draft7 cases for supported keywords all pass") {
  const std::filesystem::path suite_dir = std::filesystem::path(KEEL_SCHEMA_SUITE_DIR) / "draft7";
  if (!std::filesystem::is_directory(suite_dir)) {
    FAIL("JSON-Schema-Test-Suite not found at "
         << suite_dir.string() << " (install the Debian package json-schema-test-suite)");
  }
  int ran = 0;
  int skipped = 0;
  std::map<std::string, int> skipped_by_keyword;
  // The keyword files named in the brief, plus two that exercise only supported features.
  for (const char* name :
       {"type", "properties", "required", "enum", "const", "minimum", "maximum", "exclusiveMinimum",
        "exclusiveMaximum", "minLength", "maxLength", "items", "minItems", "maxItems",
        "additionalProperties", "boolean_schema", "default"}) {
    const std::filesystem::path file = suite_dir / (std::string(name) + ".json");
    INFO("suite file " << file.string());
    std::ifstream stream(file);
    REQUIRE(stream.good());
    const json groups = json::parse(stream);
    REQUIRE(groups.is_array());
    for (const json& group : groups) {
      const json& schema = group.at("schema");
      std::set<std::string> keywords;
      CollectKeywords(schema, keywords);
      std::string unsupported;
      for (const std::string& keyword : keywords) {
        if (!kSupportedKeywords.count(keyword))
          unsupported += (unsupported.empty() ? "" : ",") + keyword;
      }
      if (!unsupported.empty()) {
        skipped += static_cast<int>(group.at("tests").size());
        skipped_by_keyword[unsupported] += static_cast<int>(group.at("tests").size());
        continue;
      }
      INFO("group: " << group.at("description").get<std::string>()
                     << "; schema: " << schema.dump());
      CHECK(WellFormed(schema) == "ok");
      for (const json& test : group.at("tests")) {
        INFO("case: " << test.at("description").get<std::string>()
                      << "; data: " << test.at("data").dump());
        const std::optional<std::string> error = keel::ValidateSchema(schema, test.at("data"));
        INFO("validator said: " << error.value_or("valid"));
        // The per-call variant (the schema is checked once, at registration) must agree exactly.
        CHECK(keel::ValidateCheckedSchema(schema, test.at("data")) == error);
        const std::string expected = test.at("valid").get<bool>() ? "valid" : "invalid";
        CHECK((error ? "invalid" : "valid") == expected);
        ++ran;
      }
    }
  }
  std::string skip_reasons;
  for (const auto& [keywords, count] : skipped_by_keyword) {
    skip_reasons += " " + keywords + "=" + std::to_string(count);
  }
  WARN("JSON-Schema-Test-Suite draft7: ran " << ran << " cases, skipped " << skipped
                                             << " (unsupported keywords:" << skip_reasons << ")");
  CHECK(ran >= 150);
}

}  // namespace schema_validator_test
