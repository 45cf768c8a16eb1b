#pragma once
// Schema validator: checks a tool call's `arguments` against the tool's `inputSchema`, a small
// subset of JSON Schema (draft 7 semantics, but $ref as in 2020-12), and reports the first problem
// as one readable message naming where it is ("arguments.tags[2]: expected string, got integer").
//
// Supported keywords:
//   type (a name or an array of names: null, boolean, object, array, number, string, integer;
//         "integer" accepts any number with no fractional part, so 1.0 is an integer),
//   enum, const (deep equality; numbers compare by value, so 1 equals 1.0, but false is not 0),
//   minimum, maximum, exclusiveMinimum, exclusiveMaximum (numeric draft-6+ form only),
//   minLength, maxLength (counted in Unicode code points, not bytes),
//   minItems, maxItems, items (one schema for every item, or an array applied positionally;
//         items past the end of the array form are unconstrained),
//   properties, required, additionalProperties (a boolean or a schema),
//   $defs (named schemas, checked like any other) and $ref, only in the form "#/$defs/<name>"
//         naming an entry of the root schema's $defs (a JSON Pointer token: ~0 is '~', ~1 is
//         '/'). As in 2020-12, MCP's default dialect, a $ref applies together with its sibling
//         keywords (draft 7 ignored them). Any other reference, one naming no entry, and a
//         chain of references that loops without descending into the instance make the
//         schema malformed, so every reference a registered tool declares is enforced,
//   annotations, which are checked for shape but never affect validation: title, description,
//         $comment, $schema (any URI: the dialect is always the one described here), default,
//         examples, and any keyword starting with "x-" (e.g. MCP's x-mcp-header), of any value.
// The schemas `true` (accept everything) and `false` (reject everything) are supported anywhere a
// schema may appear.
//
// ValidateSchema ignores keywords it does not know (as JSON Schema says unknown keywords must be),
// so a schema using e.g. "pattern" validates as if that keyword were absent. CheckSchemaWellFormed
// is the strict gate used when a tool is registered: it rejects unknown keywords, so a tool cannot
// believe it is protected by a constraint that is silently not enforced.
//
// Robustness: neither function throws; a malformed schema (a known keyword with a bad value) makes
// ValidateSchema return a message saying the schema is invalid. Schema nesting is limited to 64
// levels and reported as an error past that; validation only descends into the instance as far
// as the schema does, so a hostile, deeply nested instance cannot exhaust the stack.
//
// Thread-safety: pure functions with no shared state; reentrant and safe to call concurrently.
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
