#pragma once
// Schema validator: checks a tool call's `arguments` (or a result's `structuredContent`) against
// the tool's JSON Schema 2020-12 `inputSchema` (`outputSchema`), and reports the first problem as
// one readable message naming where it is ("arguments.tags[2]: expected string, got integer").
//
// Validated (2020-12 semantics; draft 7 spellings that generators still emit are noted):
//   type (a name or an array: null, boolean, object, array, number, string, integer; "integer"
//     accepts any number with no fractional part, so 1.0 is one), enum, const (deep equality;
//     numbers by value, so 1 equals 1.0, but false is not 0);
//   numbers: minimum, maximum, exclusiveMinimum, exclusiveMaximum (numeric forms), multipleOf
//     (exact for integers, within a relative 1e-9 otherwise);
//   strings: minLength, maxLength (in Unicode code points), pattern (an unanchored search with
//     RE2: linear time; schema_regex.h says which ECMA-262 constructs it refuses);
//   arrays: minItems, maxItems, uniqueItems, prefixItems, items (after prefixItems; the draft 7
//     array form of items is still accepted as positional schemas, with additionalItems after
//     it), contains, minContains, maxContains, unevaluatedItems;
//   objects: properties, patternProperties (RE2), additionalProperties (the names neither of
//     those covers), required, dependentRequired, dependentSchemas, propertyNames,
//     minProperties, maxProperties, unevaluatedProperties;
//   combinators: allOf, anyOf, oneOf, not, if/then/else;
//   references: $ref, applied together with its sibling keywords, to "#", to any JSON pointer in
//     the document ("#/$defs/x", draft 7's "#/definitions/x", "#/properties/a"), or to an
//     "$anchor" ("#addressDef"), optionally prefixed by the root's own $id; $defs and
//     definitions hold named schemas, checked like any other.
//   unevaluatedProperties/unevaluatedItems see the annotations of every passing subschema at the
//   same place (properties, patternProperties, additionalProperties, prefixItems, items, contains,
//   and through $ref, allOf, the passing branches of anyOf/oneOf, if/then/else,
//   dependentSchemas; never through not or a failed branch), as 2020-12 says.
// Annotations, checked for shape and otherwise ignored: title, description, $comment, default,
//   examples, deprecated, readOnly, writeOnly, format (not asserted: "date-time" accepts any
//   string), contentMediaType, contentEncoding, contentSchema, $schema (a published dialect:
//   2020-12, 2019-09, draft 7, 6 or 4; keywords are always read as described here), $id at the
//   root, $anchor; and any keyword starting with "x-" (vendor annotations, such as MCP's
//   "x-mcp-header"), whatever its value.
// The schemas `true` (accept everything) and `false` (reject everything) work anywhere.
//
// Refused, as malformed, because keel cannot check what they mean (the message names the
// keyword and says why, e.g. "#/properties/a/$dynamicRef: not supported: keel cannot check
// dynamic references"): a $ref to another document (remote or relative URI: keel fetches
// nothing) or to nothing; $dynamicRef, $dynamicAnchor, $recursiveRef, $recursiveAnchor;
// $vocabulary, and a $schema naming a custom meta-schema (it may switch keywords off or add
// vocabularies); an $id below the root (it would change the base URI); a pattern RE2 cannot run
// (backreferences, lookaround); a loop of references that never descends into the instance
// (e.g. {"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}}).
//
// ValidateSchema ignores keywords it does not know (as JSON Schema says unknown keywords must
// be). CheckSchemaWellFormed is the strict gate used when a tool is registered: it also rejects
// unknown keywords, so a tool cannot believe it is protected by a constraint (or a typo of one)
// that is silently not enforced.
//
// Robustness: no function throws; a malformed schema makes ValidateSchema return a message
// saying the schema is invalid. Schemas nest at most 64 levels, and evaluation follows at most 64
// subschemas and references on one path ("schema nests deeper than 64 levels" past that), and
// descends into the instance only as far as the schema does: a hostile, deeply nested instance
// cannot exhaust the stack. Cost: each keyword applies once per instance location it reaches, so
// a validation costs at most (schema size x instance size) per level of applicators; the results
// of alternatives (anyOf, oneOf, not, if) are remembered per (subschema, instance location), so a
// recursive schema whose alternatives each recurse stays linear rather than exponential. Known
// remaining blow-up: where unevaluatedProperties/unevaluatedItems read annotations, alternatives
// are re-evaluated per path rather than remembered (annotations depend on the path), so a
// recursive anyOf under an unevaluated* keyword can cost up to (branches ^ depth), depth <= 64.
// uniqueItems is linear (items compared by canonical text); regexes are RE2's, linear in the text.
//
// Speed: ValidateCheckedSchema does not re-check the schema; compiled regexes are cached
// process-wide (schema_regex.h); a schema's keywords are read in one pass per location, which
// made a typical 4-property tool schema validate in about half the time of the earlier subset
// validator's lookup per keyword (g++ -O2, 1M calls, 2026-12).
//
// Thread-safety: reentrant and safe to call concurrently; the only shared state is the regex
// cache, which has its own lock.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace keel {

// Returns std::nullopt when `instance` satisfies `schema`, otherwise one readable message that
// names the offending location, e.g. "arguments.text: expected string, got integer",
// "arguments: missing required property 'text'", "arguments.count: 0 is less than minimum 1",
// "arguments.mode: \"x\" is not one of [\"a\",\"b\"]", "arguments.tags[2]: ...",
// "arguments: unexpected property 'foo'".
// `root_name` is the name used for the root location ("arguments" by default). Properties are
// appended as ".name", or as ["name"] when the name is not a plain identifier; items as "[i]".
std::optional<std::string> ValidateSchema(const nlohmann::json& schema,
                                          const nlohmann::json& instance,
                                          const std::string& root_name = "arguments");

// ValidateSchema for a schema that already passed CheckSchemaWellFormed (a registered tool's
// inputSchema): the same answer, without re-checking the schema's shape on every call, which
// used to cost more than the validation itself. Passing an unchecked schema is a caller bug.
std::optional<std::string> ValidateCheckedSchema(const nlohmann::json& schema,
                                                 const nlohmann::json& instance,
                                                 const std::string& root_name = "arguments");

// Checks that a schema uses only supported keywords with well-formed values (used when tools are
// registered). Returns nullopt when OK, else a message naming the place in the schema as a JSON
// pointer, e.g. "#/properties/count/minimum: must be a number, got string".
std::optional<std::string> CheckSchemaWellFormed(const nlohmann::json& schema);

}  // namespace keel
