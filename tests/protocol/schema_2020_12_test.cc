// The JSON Schema 2020-12 keywords beyond keel's original subset: one case per keyword or rule,
// with the messages a client sees. The official suite (schema_suite_test.cc) covers the corners.
#include <string>

#include <catch2/catch.hpp>

#include "protocol/schema_regex.h"
#include "protocol/schema_validator.h"

namespace schema_2020_12_test {
namespace {

using nlohmann::json;

std::string Outcome(const json& schema, const json& instance) {
  return keel::ValidateSchema(schema, instance).value_or("valid");
}

std::string WellFormed(const json& schema) {
  return keel::CheckSchemaWellFormed(schema).value_or("ok");
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("pattern is an unanchored RE2 search and names the pattern when it fails") {
  const json schema = R"({"properties": {"code": {"type": "string", "pattern": "[0-9]{3}"}}})"_json;
  CHECK(WellFormed(schema) == "ok");
  CHECK(Outcome(schema, R"({"code": "ab123cd"})"_json) == "valid");
  CHECK(Outcome(schema, R"({"code": "ab12"})"_json) ==
        R"(arguments.code: "ab12" does not match pattern "[0-9]{3}")");
  CHECK(Outcome(R"({"pattern": "^a"})"_json, 5) == "valid");  // only strings
}

TEST_CASE("pattern speaks ECMA-262 spellings such as \\u escapes and named groups") {
  CHECK(Outcome(R"({"pattern": "^\\u00e9+$"})"_json, "\xC3\xA9\xC3\xA9") == "valid");
  CHECK(Outcome(R"({"pattern": "^(?<year>[0-9]{4})$"})"_json, "2026") == "valid");
  CHECK(Outcome(R"({"pattern": "^\\s$"})"_json, "\xC2\xA0") == "valid");  // U+00A0 is ECMA space
  CHECK(Outcome(R"({"pattern": "^[^]$"})"_json, "x") == "valid");
  CHECK(Outcome(R"({"pattern": "[]"})"_json, "x") != "valid");
  CHECK(Outcome(R"({"pattern": "^.$"})"_json, "\xF0\x9F\x92\xA9") == "valid");  // a code point
  CHECK(Outcome(R"({"pattern": "^.$"})"_json, "\r") != "valid");  // ECMA's . stops at \r
  CHECK(Outcome(R"({"pattern": "^\\p{Letter}+$"})"_json, "\xCF\x80") == "valid");  // π
}

TEST_CASE("a pattern RE2 cannot run makes the schema malformed and says why") {
  for (const char* pattern : {"(a)\\1", "^(?=a)", "(?!x)y", "(?<=a)b", "a{2000}", "(unclosed"}) {
    INFO(pattern);
    const std::string problem = WellFormed(json{{"pattern", pattern}});
    CHECK(problem.rfind("#/pattern: RE2 cannot check this regular expression", 0) == 0);
  }
  CHECK(WellFormed(R"j({"patternProperties": {"(?=x)": {}}})j"_json)
            .rfind("#/patternProperties: \"(?=x)\": RE2 cannot check", 0) == 0);
}

TEST_CASE("a regex that is catastrophic under backtracking completes at once with RE2") {
  const json schema = R"({"pattern": "^(a+)+$"})"_json;
  const std::string hostile = std::string(30, 'a') + "!";
  CHECK(Outcome(schema, hostile) ==
        "arguments: \"" + hostile + "\" does not match pattern \"^(a+)+$\"");
  CHECK(Outcome(schema, std::string(100000, 'a')) == "valid");
  CHECK(Outcome(R"({"pattern": "(x+x+)+y"})"_json, std::string(5000, 'x')) != "valid");
}

TEST_CASE("compiled regexes are cached and the cache stays bounded") {
  for (int i = 0; i < 300; ++i) {
    const json schema = json{{"pattern", "^cache-bound-" + std::to_string(i) + "$"}};
    REQUIRE(Outcome(schema, "cache-bound-" + std::to_string(i)) == "valid");
  }
  CHECK(keel::schema::CachedRegexCount() <= keel::schema::kMaxCachedRegexes);
}

TEST_CASE("patternProperties apply to matching names and additionalProperties to the rest") {
  const json schema = R"({"properties": {"id": {"type": "integer"}},
      "patternProperties": {"^x-": {"type": "string"}}, "additionalProperties": false})"_json;
  CHECK(Outcome(schema, R"({"id": 1, "x-trace": "t"})"_json) == "valid");
  CHECK(Outcome(schema, R"({"x-trace": 2})"_json) ==
        "arguments.x-trace: expected string, got integer");
  CHECK(Outcome(schema, R"({"other": 2})"_json) == "arguments: unexpected property 'other'");
}

TEST_CASE("propertyNames, minProperties and maxProperties constrain the names and their count") {
  const json schema =
      R"({"propertyNames": {"maxLength": 3}, "minProperties": 1, "maxProperties": 2})"_json;
  CHECK(Outcome(schema, R"({"ab": 1})"_json) == "valid");
  CHECK(Outcome(schema, R"({"abcd": 1})"_json) ==
        "arguments: property name 'abcd' is not allowed by propertyNames: string has 4 "
        "characters, more than maxLength 3");
  CHECK(Outcome(schema, R"({})"_json) ==
        "arguments: object has 0 properties, fewer than minProperties 1");
  CHECK(Outcome(schema, R"({"a": 1, "b": 2, "c": 3})"_json) ==
        "arguments: object has 3 properties, more than maxProperties 2");
}

TEST_CASE("dependentRequired and dependentSchemas apply when their property is present") {
  const json schema = R"({"dependentRequired": {"card": ["cvc"]},
      "dependentSchemas": {"gift": {"required": ["message"]}}})"_json;
  CHECK(Outcome(schema, R"({"card": 1, "cvc": 2})"_json) == "valid");
  CHECK(Outcome(schema, R"({"cvc": 2})"_json) == "valid");
  CHECK(Outcome(schema, R"({"card": 1})"_json) ==
        "arguments: property 'card' requires property 'cvc'");
  CHECK(Outcome(schema, R"({"gift": true})"_json) ==
        "arguments: missing required property 'message'");
}

TEST_CASE("uniqueItems compares items by JSON Schema equality in linear time") {
  const json schema = R"({"uniqueItems": true})"_json;
  CHECK(Outcome(schema, R"([1, "1", [1], {"a": 1}])"_json) == "valid");
  CHECK(Outcome(schema, R"([{"a": [1, 2]}, 3, {"a": [1.0, 2]}])"_json) ==
        "arguments: items [0] and [2] are equal, but uniqueItems is true");
  CHECK(Outcome(schema, R"([0, false])"_json) == "valid");
  json many = json::array();
  for (int i = 0; i < 100000; ++i) many.push_back(i);
  CHECK(Outcome(schema, many) == "valid");
}

TEST_CASE("contains counts matching items against minContains and maxContains") {
  const json schema =
      R"({"contains": {"type": "string"}, "minContains": 2, "maxContains": 3})"_json;
  CHECK(Outcome(schema, R"(["a", 1, "b"])"_json) == "valid");
  CHECK(Outcome(schema, R"(["a", 1])"_json) ==
        "arguments: 1 item matches contains, fewer than minContains 2");
  CHECK(Outcome(schema, R"(["a", "b", "c", "d"])"_json) ==
        "arguments: 4 items match contains, more than maxContains 3");
  CHECK(Outcome(R"({"contains": {"const": 1}})"_json, R"([2])"_json) ==
        "arguments: no item matches contains");
  CHECK(Outcome(R"({"contains": false, "minContains": 0})"_json, R"([2])"_json) == "valid");
}

TEST_CASE("prefixItems apply by position and items applies only after them") {
  const json schema = R"({"prefixItems": [{"type": "string"}], "items": {"type": "integer"}})"_json;
  CHECK(Outcome(schema, R"(["a", 1, 2])"_json) == "valid");
  CHECK(Outcome(schema, R"([1])"_json) == "arguments[0]: expected string, got integer");
  CHECK(Outcome(schema, R"(["a", "b"])"_json) == "arguments[1]: expected integer, got string");
  CHECK(Outcome(R"({"prefixItems": [true], "items": false})"_json, R"([1, 2])"_json) ==
        "arguments[1]: no value is allowed here");
  CHECK(WellFormed(R"({"prefixItems": [true], "items": [true]})"_json) ==
        "#/items: the array form of items (draft 7) cannot be combined with prefixItems");
}

TEST_CASE("draft 7's array form of items keeps working with additionalItems after it") {
  const json schema = R"({"items": [{"type": "string"}], "additionalItems": false})"_json;
  CHECK(WellFormed(schema) == "ok");
  CHECK(Outcome(schema, R"(["a"])"_json) == "valid");
  CHECK(Outcome(schema, R"(["a", 1])"_json) == "arguments[1]: no value is allowed here");
  CHECK(Contains(WellFormed(R"({"additionalItems": false})"_json),
                 "#/additionalItems: not supported"));
}

TEST_CASE("multipleOf is exact for integers and tolerant of binary fractions") {
  CHECK(Outcome(R"({"multipleOf": 2})"_json, 10) == "valid");
  CHECK(Outcome(R"({"multipleOf": 2})"_json, 7) == "arguments: 7 is not a multiple of 2");
  CHECK(Outcome(R"({"multipleOf": 0.0001})"_json, R"(0.0075)"_json) == "valid");
  CHECK(Outcome(R"({"multipleOf": 0.0001})"_json, R"(0.00751)"_json) != "valid");
  CHECK(Outcome(R"({"multipleOf": 2})"_json, R"(-9223372036854775808)"_json) == "valid");
  CHECK(Outcome(R"({"multipleOf": 3})"_json, R"(18446744073709551615)"_json) == "valid");
  CHECK(WellFormed(R"({"multipleOf": 0})"_json) ==
        "#/multipleOf: must be a number greater than 0, got 0");
}

TEST_CASE("allOf needs every schema and reports the first failure") {
  const json schema = R"({"allOf": [{"type": "object"}, {"required": ["a"]}]})"_json;
  CHECK(Outcome(schema, R"({"a": 1})"_json) == "valid");
  CHECK(Outcome(schema, R"({})"_json) == "arguments: missing required property 'a'");
}

TEST_CASE("anyOf needs one schema and quotes why each failed") {
  const json schema = R"({"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]})"_json;
  CHECK(Outcome(schema, R"({"email": "e"})"_json) == "valid");
  CHECK(Outcome(schema, R"({})"_json) ==
        "arguments: matches no schema of anyOf: [0] missing required property 'phone'; [1] "
        "missing required property 'email'");
}

TEST_CASE("oneOf needs exactly one schema and names the two that both matched") {
  const json schema = R"({"oneOf": [{"type": "integer"}, {"minimum": 2}]})"_json;
  CHECK(Outcome(schema, 1) == "valid");
  CHECK(Outcome(schema, 2.5) == "valid");
  CHECK(Outcome(schema, 3) ==
        "arguments: matches oneOf[0] and oneOf[1], but oneOf allows exactly one");
  CHECK(Outcome(schema, 1.5) ==
        "arguments: matches no schema of oneOf: [0] expected integer, got number; [1] 1.5 is "
        "less than minimum 2");
}

TEST_CASE("not rejects what its schema accepts") {
  CHECK(Outcome(R"({"not": {"type": "string"}})"_json, 1) == "valid");
  CHECK(Outcome(R"({"not": {"type": "string"}})"_json, "s") ==
        "arguments: \"s\" must not match the schema under not");
}

TEST_CASE("if then else picks the branch by whether if matches") {
  const json schema = R"({"if": {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
      "then": {"required": ["a"]}, "else": {"required": ["b"]}})"_json;
  CHECK(Outcome(schema, R"({"kind": "a", "a": 1})"_json) == "valid");
  CHECK(Outcome(schema, R"({"kind": "a"})"_json) == "arguments: missing required property 'a'");
  CHECK(Outcome(schema, R"({"b": 1})"_json) == "valid");
  CHECK(Outcome(schema, R"({})"_json) == "arguments: missing required property 'b'");
  CHECK(Outcome(R"({"if": false})"_json, 1) == "valid");  // if alone asserts nothing
}

TEST_CASE("$ref reaches any JSON pointer, draft 7 definitions and $anchor names") {
  const json schema =
      R"({"$id": "https://example.com/tool", "definitions": {"n": {"type": "integer"}},
      "$defs": {"s": {"$anchor": "text", "type": "string"}},
      "properties": {"a": {"$ref": "#/definitions/n"}, "b": {"$ref": "#text"},
                     "c": {"$ref": "#/properties/a"}, "d": {"$ref": "https://example.com/tool#text"},
                     "e": {"items": {"$ref": "#"}}}})"_json;
  CHECK(WellFormed(schema) == "ok");
  CHECK(Outcome(schema, R"({"a": 1, "b": "x", "c": 2, "d": "y", "e": [{"a": 3}]})"_json) ==
        "valid");
  CHECK(Outcome(schema, R"({"b": 1})"_json) == "arguments.b: expected string, got integer");
  CHECK(Outcome(schema, R"({"c": "x"})"_json) == "arguments.c: expected integer, got string");
  CHECK(Outcome(schema, R"({"e": [{"a": "x"}]})"_json) ==
        "arguments.e[0].a: expected integer, got string");
  CHECK(WellFormed(R"({"$ref": "#nowhere"})"_json) ==
        "#/$ref: \"#nowhere\" names no $anchor in this schema");
  CHECK(WellFormed(R"({"$ref": "#/enum", "enum": [1]})"_json) ==
        "#/$ref: \"#/enum\" names a value that is not a schema");
}

TEST_CASE("a loop of in-place references is malformed but a recursion into the instance is not") {
  CHECK(Contains(WellFormed(R"({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}})"_json),
                 "form a cycle that never descends into the instance"));
  CHECK(Contains(WellFormed(R"({"not": {"$ref": "#"}})"_json), "form a cycle"));
  CHECK(WellFormed(R"({"properties": {"next": {"$ref": "#"}}})"_json) == "ok");
  CHECK(WellFormed(R"({"anyOf": [{"items": {"$ref": "#"}}, {"type": "integer"}]})"_json) == "ok");
}

TEST_CASE("alternatives that each recurse stay linear in the instance") {
  // Three alternatives walk the whole subtree before failing (contains comes after items), the
  // fourth passes: without remembering results that is 4^19 evaluations for 19 levels.
  const json schema = R"({"$defs": {"t": {"anyOf": [
      {"type": "array", "items": {"$ref": "#/$defs/t"}, "contains": {"const": "a"}},
      {"type": "array", "items": {"$ref": "#/$defs/t"}, "contains": {"const": "b"}},
      {"type": "array", "items": {"$ref": "#/$defs/t"}, "contains": {"const": "c"}},
      {"type": "array", "items": {"$ref": "#/$defs/t"}}, {"type": "integer"}]}},
      "$ref": "#/$defs/t"})"_json;
  CHECK(WellFormed(schema) == "ok");
  json deep = json::array({1});
  for (int i = 0; i < 18; ++i) deep = json::array({deep});
  CHECK(Outcome(schema, deep) == "valid");
}

TEST_CASE("unevaluatedProperties sees what properties and applicators evaluated") {
  const json schema = R"({"properties": {"a": true}, "allOf": [{"properties": {"b": true}}],
      "anyOf": [{"properties": {"c": true}}, {"required": ["zzz"]}], "unevaluatedProperties": false})"_json;
  CHECK(WellFormed(schema) == "ok");
  CHECK(Outcome(schema, R"({"a": 1, "b": 2, "c": 3})"_json) == "valid");
  CHECK(Outcome(schema, R"({"a": 1, "d": 4})"_json) == "arguments: unexpected property 'd'");
  CHECK(Outcome(R"({"not": {"properties": {"a": false}}, "unevaluatedProperties": false})"_json,
                R"({"a": 1})"_json) == "arguments: unexpected property 'a'");
}

TEST_CASE("unevaluatedItems sees prefixItems, contains and passing branches") {
  const json schema = R"({"prefixItems": [true], "contains": {"type": "string"},
      "unevaluatedItems": {"type": "boolean"}})"_json;
  CHECK(Outcome(schema, R"([1, "s", true])"_json) == "valid");
  CHECK(Outcome(schema, R"([1, "s", 3])"_json) == "arguments[2]: expected boolean, got integer");
}

TEST_CASE("format and other annotations are accepted and do not assert") {
  const json schema = R"({"type": "string", "format": "email", "title": "t", "deprecated": true,
      "readOnly": false, "writeOnly": false, "contentMediaType": "application/json",
      "contentEncoding": "base64", "contentSchema": {"type": "object"}, "$comment": "c",
      "examples": ["a@b.c"], "default": "x", "x-mcp-header": "Region", "x-vendor": {"any": 1}})"_json;
  CHECK(WellFormed(schema) == "ok");
  CHECK(Outcome(schema, "not an email") == "valid");
  CHECK(WellFormed(R"({"format": 1})"_json) == "#/format: must be a string, got integer");
}

TEST_CASE("keywords keel cannot check are refused with the keyword and the reason") {
  CHECK(WellFormed(R"({"properties": {"a": {"$dynamicRef": "#x"}}})"_json) ==
        "#/properties/a/$dynamicRef: not supported: keel cannot check dynamic references");
  CHECK(WellFormed(R"({"$dynamicAnchor": "x"})"_json) ==
        "#/$dynamicAnchor: not supported: keel cannot check dynamic references");
  CHECK(Contains(WellFormed(R"({"$recursiveRef": "#"})"_json), "recursive references"));
  CHECK(Contains(WellFormed(R"({"$vocabulary": {}})"_json), "#/$vocabulary: not supported"));
  CHECK(WellFormed(R"({"properties": {"a": {"$id": "https://x/y"}}})"_json) ==
        "#/properties/a/$id: not supported: keel cannot check a nested $id (it changes the base "
        "URI that references resolve against)");
  CHECK(WellFormed(R"({"$id": "https://example.com/root"})"_json) == "ok");
  CHECK(Contains(WellFormed(R"({"$schema": "https://example.com/my-meta-schema"})"_json),
                 "#/$schema: not supported: \"https://example.com/my-meta-schema\" is not a "
                 "published JSON Schema dialect"));
  CHECK(WellFormed(R"({"$schema": "http://json-schema.org/draft-07/schema#"})"_json) == "ok");
  // The lenient path ignores unknown keywords but not the refused ones.
  CHECK(Outcome(R"({"maxLenght": 1})"_json, "long") == "valid");
  CHECK(Outcome(R"({"$dynamicRef": "#x"})"_json, 1).rfind("arguments: schema is invalid", 0) == 0);
}

TEST_CASE("the conformance suite's 2020-12 schema is enforced with its composition keywords") {
  const json schema = R"({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",
      "$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},
      "properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},
        "contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},
      "allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],
      "if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},
      "then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false})"_json;
  CHECK(WellFormed(schema) == "ok");
  CHECK(Outcome(schema, R"({"email": "e"})"_json) == "valid");
  CHECK(Outcome(schema, R"({"contactMethod": "phone", "phone": "1"})"_json) == "valid");
  CHECK(Outcome(schema, R"({"contactMethod": "phone", "email": "e"})"_json) ==
        "arguments: missing required property 'phone'");
  CHECK(Outcome(schema, R"({"phone": "1"})"_json) ==
        "arguments: missing required property 'email'");
  CHECK(Outcome(schema, R"({"name": "n"})"_json) ==
        "arguments: matches no schema of anyOf: [0] missing required property 'phone'; [1] "
        "missing required property 'email'");
}

}  // namespace schema_2020_12_test
