#pragma once
// Schema values: the JSON facts the schema checker and the validator both need — type names,
// JSON Schema equality (1 equals 1.0, false is not 0), exact numeric comparison across int64,
// uint64 and double, multipleOf, code point counts, and the bounded, never-throwing text used
// to quote values and name locations in messages.
//
// Invariants: nothing here throws on any json value but std::bad_alloc; nothing recurses deeper
// than kMaxSchemaDepth levels of a value, so a hostile, deeply nested instance cannot exhaust the
// stack (deeper values are treated as unequal to everything, previewed as "<deeply nested ...>").
//
// Thread-safety: pure functions; reentrant.
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace keel::schema {

// Deep enough for any real tool schema, shallow enough that recursion cannot exhaust the stack:
// schemas nest at most this many levels, and evaluation follows at most this many subschemas
// (and $refs) on one path.
constexpr int kMaxSchemaDepth = 64;

// "null", "boolean", "object", "array", "number", "string"; "integer" for any stored integer.
const char* TypeName(const nlohmann::json& value);

// "nests deeper than 64 levels".
std::string TooDeep();

// Nesting depth of `value` (scalars are 0); stops counting just past `limit`.
int NestingDepth(const nlohmann::json& value, int limit);

// Compact JSON text that never throws on invalid UTF-8 (it is replaced).
std::string Dump(const nlohmann::json& value);

// A string made safe to print: control characters escaped, invalid UTF-8 replaced, no quotes.
std::string Printable(const std::string& text);

// A value quoted for a message: at most ~120 characters, deep values summarised.
std::string Preview(const nlohmann::json& value);

// The location of property `name` under `parent`: parent.name, or parent["odd name"].
std::string ChildPath(const std::string& parent, const std::string& name);

// A JSON pointer extended by one token (~ and / escaped as ~0 and ~1).
std::string PointerChild(const std::string& pointer, const std::string& token);

// Orders two json numbers by value whatever mix of int64, uint64 and double stores them; exact
// (2^53 + 1 is greater than 2^53.0).
std::partial_ordering CompareNumbers(const nlohmann::json& a, const nlohmann::json& b);

// JSON Schema equality: like ==, but numbers compare by value (1 == 1.0) and booleans never
// equal numbers. Values nested deeper than kMaxSchemaDepth compare unequal.
bool JsonEqual(const nlohmann::json& a, const nlohmann::json& b);

// A key such that JsonEqual(a, b) exactly when CanonicalText(a) == CanonicalText(b) (for values
// within kMaxSchemaDepth; a deeper value gets a key unique to its address). Used to find
// duplicate items in linear time.
std::string CanonicalText(const nlohmann::json& value);

// A number with no fractional part (1.0 is integral).
bool IsIntegral(const nlohmann::json& value);

// Whether `type_name` (a JSON Schema type) describes `value`.
bool TypeMatches(std::string_view type_name, const nlohmann::json& value);

// Whether number `value` is a multiple of the positive number `divisor`: exact for two integers;
// otherwise within a relative 1e-9 of a whole quotient (0.0075 is a multiple of 0.0001 although
// binary floating point cannot say so exactly); an infinite quotient is not a multiple.
bool IsMultipleOf(const nlohmann::json& value, const nlohmann::json& divisor);

// Unicode code points in UTF-8 `text` (bytes that do not continue a sequence).
std::uint64_t CodePoints(const std::string& text);

}  // namespace keel::schema
