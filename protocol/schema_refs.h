#pragma once
// Schema references: what a `$ref` names inside the one schema document it appears in.
//
// Supported forms (JSON Schema 2020-12, within the document):
//   "#"                 the root schema;
//   "#/a/b~1c/0"        a JSON Pointer into the document, URI-decoded (%25 is '%') then
//                       pointer-decoded (~1 is '/', ~0 is '~'): "#/$defs/x", "#/properties/a",
//                       draft 7's "#/definitions/x" — any location holding a schema;
//   "#name"             the schema whose "$anchor" is "name";
//   "<root $id>#..."    any of the above prefixed with the root's own $id.
// Anything else — another document (remote or relative URI), a nested $id's base — is not
// resolvable: keel checks a tool's arguments without fetching anything.
//
// Thread-safety: pure functions; the index is immutable once built. Never throw but bad_alloc.
#include <string>
#include <unordered_map>
#include <unordered_set>

#include <nlohmann/json.hpp>

namespace keel::schema {

// Every schema location of a document, found by walking the keywords that hold subschemas
// (schema_keywords.h) no deeper than kMaxSchemaDepth, and its $anchor names.
struct SchemaIndex {
  std::unordered_set<const nlohmann::json*> schemas;
  std::unordered_map<std::string, const nlohmann::json*> anchors;  // the first of a repeated name

  static SchemaIndex Build(const nlohmann::json& root);
};

struct RefTarget {
  const nlohmann::json* schema = nullptr;  // null when unresolved
  std::string problem;                     // why, when unresolved
};

// Resolves `ref` in `root`. `index` is needed only for "#name" (anchor) references: pass null to
// have an anchor reference report it needs one (the validator builds the index lazily).
RefTarget ResolveRef(const nlohmann::json& root, const std::string& ref, const SchemaIndex* index);

// Whether `ref` names an $anchor ("#name") rather than a JSON pointer.
bool IsAnchorRef(const nlohmann::json& root, const std::string& ref);

}  // namespace keel::schema
