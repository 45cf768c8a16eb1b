#pragma once
// Schema keywords: the one table of the JSON Schema 2020-12 keywords keel knows — which ones hold
// subschemas and how (one schema, an array of them, a map of them), and which apply to the same
// instance location ("in place": allOf, anyOf, oneOf, not, if/then/else, dependentSchemas, $ref)
// rather than to a part of it. The checker, the validator and the $anchor index all walk a schema
// through ForEachSubschema, so they agree on where the subschemas are.
//
// A keyword that is not in the table is unknown: CheckSchemaWellFormed refuses it (a typo must
// not silently drop a constraint), ValidateSchema ignores it. Names starting with "x-" are vendor
// annotations (MCP's "x-mcp-header") and never looked up.
//
// Thread-safety: immutable tables; reentrant.
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace keel::schema {

enum class Keyword : std::uint8_t {
  // Assertions.
  kType,
  kEnum,
  kConst,
  kMultipleOf,
  kMaximum,
  kExclusiveMaximum,
  kMinimum,
  kExclusiveMinimum,
  kMaxLength,
  kMinLength,
  kPattern,
  kMaxItems,
  kMinItems,
  kUniqueItems,
  kMaxContains,
  kMinContains,
  kMaxProperties,
  kMinProperties,
  kRequired,
  kDependentRequired,
  // Applicators.
  kAllOf,
  kAnyOf,
  kOneOf,
  kNot,
  kIf,
  kThen,
  kElse,
  kDependentSchemas,
  kPrefixItems,
  kItems,
  kAdditionalItems,
  kContains,
  kProperties,
  kPatternProperties,
  kAdditionalProperties,
  kPropertyNames,
  kUnevaluatedItems,
  kUnevaluatedProperties,
  kRef,
  // Core and annotations.
  kDefs,
  kDefinitions,
  kAnchor,
  kSchema,
  kId,
  kComment,
  kTitle,
  kDescription,
  kDefault,
  kDeprecated,
  kReadOnly,
  kWriteOnly,
  kExamples,
  kFormat,
  kContentEncoding,
  kContentMediaType,
  kContentSchema,
  // Known, and refused: keel cannot check what they mean.
  kDynamicRef,
  kDynamicAnchor,
  kRecursiveRef,
  kRecursiveAnchor,
  kVocabulary,
  kCount  // not a keyword: the number of them
};

constexpr std::size_t kKeywordCount = static_cast<std::size_t>(Keyword::kCount);

// What a keyword's value holds.
enum class Holds : std::uint8_t {
  kValue,          // no subschema (type, minimum, required, title, ...)
  kSchema,         // one schema (not, if, contains, additionalProperties, ...)
  kSchemaArray,    // an array of schemas (allOf, anyOf, oneOf, prefixItems)
  kSchemaMap,      // an object of named schemas (properties, $defs, dependentSchemas, ...)
  kSchemaOrArray,  // items: one schema, or draft 7's array of schemas
};

struct KeywordInfo {
  Keyword id;
  Holds holds;
  bool in_place;  // its subschemas apply to the instance itself, not to a part of it
};

// The keyword named `name`, or null when keel does not know it.
const KeywordInfo* FindKeyword(std::string_view name);

// Whether `name` is a vendor annotation ("x-..."), accepted and ignored.
inline bool IsVendorKeyword(std::string_view name) { return name.rfind("x-", 0) == 0; }

// Calls visit(subschema, keyword_name, token, in_place) for every subschema directly inside
// `schema` (an object), where `token` points to the array index or map key under the keyword,
// and is null for a keyword holding one schema. Values of the wrong shape are skipped: the
// checker reports them.
template <typename Visit>
void ForEachSubschema(const nlohmann::json& schema, Visit&& visit) {
  for (const auto& [key, value] : schema.items()) {
    const KeywordInfo* info = FindKeyword(key);
    if (info == nullptr) continue;
    const bool array = info->holds == Holds::kSchemaArray ||
                       (info->holds == Holds::kSchemaOrArray && value.is_array());
    if (info->holds == Holds::kSchema || (info->holds == Holds::kSchemaOrArray && !array)) {
      visit(value, key, static_cast<const std::string*>(nullptr), info->in_place);
    } else if (array && value.is_array()) {
      for (std::size_t i = 0; i < value.size(); ++i) {
        const std::string index = std::to_string(i);
        visit(value[i], key, &index, info->in_place);
      }
    } else if (info->holds == Holds::kSchemaMap && value.is_object()) {
      for (const auto& [name, sub] : value.items()) visit(sub, key, &name, info->in_place);
    }
  }
}

}  // namespace keel::schema
