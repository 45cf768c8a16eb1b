#pragma once
// Schema check: whether a JSON Schema 2020-12 document is one keel can enforce — every keyword
// known, every value of the right shape, every regex one RE2 can run, every $ref resolvable
// inside the document, no loop of references that never descends into the instance. The first
// problem comes back as one message naming its place as a JSON pointer
// ("#/properties/count/minimum: must be a number, got string").
//
// Two modes. Strict (CheckSchemaWellFormed, used when a tool is registered) refuses unknown
// keywords, so a typo cannot silently drop a constraint. Lenient (ValidateSchema) ignores them,
// as JSON Schema says unknown keywords must be. Both refuse what keel knows but cannot check
// (schema_validator.h lists them with reasons).
//
// Thread-safety: pure function; reentrant. Never throws but std::bad_alloc.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace keel::schema {

std::optional<std::string> CheckSchemaShape(const nlohmann::json& schema, bool strict);

}  // namespace keel::schema
