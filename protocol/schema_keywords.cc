#include "protocol/schema_keywords.h"

#include <unordered_map>

namespace keel::schema {
namespace {

struct NamedKeyword {
  std::string_view name;
  KeywordInfo info;
};

constexpr bool kInPlace = true;
constexpr bool kPart = false;  // applies to a part of the instance, or is not applied at all

// NOLINTNEXTLINE(readability-function-size): one row per keyword of JSON Schema 2020-12
constexpr NamedKeyword kKeywords[] = {
    {"type", {Keyword::kType, Holds::kValue, kPart}},
    {"enum", {Keyword::kEnum, Holds::kValue, kPart}},
    {"const", {Keyword::kConst, Holds::kValue, kPart}},
    {"multipleOf", {Keyword::kMultipleOf, Holds::kValue, kPart}},
    {"maximum", {Keyword::kMaximum, Holds::kValue, kPart}},
    {"exclusiveMaximum", {Keyword::kExclusiveMaximum, Holds::kValue, kPart}},
    {"minimum", {Keyword::kMinimum, Holds::kValue, kPart}},
    {"exclusiveMinimum", {Keyword::kExclusiveMinimum, Holds::kValue, kPart}},
    {"maxLength", {Keyword::kMaxLength, Holds::kValue, kPart}},
    {"minLength", {Keyword::kMinLength, Holds::kValue, kPart}},
    {"pattern", {Keyword::kPattern, Holds::kValue, kPart}},
    {"maxItems", {Keyword::kMaxItems, Holds::kValue, kPart}},
    {"minItems", {Keyword::kMinItems, Holds::kValue, kPart}},
    {"uniqueItems", {Keyword::kUniqueItems, Holds::kValue, kPart}},
    {"maxContains", {Keyword::kMaxContains, Holds::kValue, kPart}},
    {"minContains", {Keyword::kMinContains, Holds::kValue, kPart}},
    {"maxProperties", {Keyword::kMaxProperties, Holds::kValue, kPart}},
    {"minProperties", {Keyword::kMinProperties, Holds::kValue, kPart}},
    {"required", {Keyword::kRequired, Holds::kValue, kPart}},
    {"dependentRequired", {Keyword::kDependentRequired, Holds::kValue, kPart}},
    {"allOf", {Keyword::kAllOf, Holds::kSchemaArray, kInPlace}},
    {"anyOf", {Keyword::kAnyOf, Holds::kSchemaArray, kInPlace}},
    {"oneOf", {Keyword::kOneOf, Holds::kSchemaArray, kInPlace}},
    {"not", {Keyword::kNot, Holds::kSchema, kInPlace}},
    {"if", {Keyword::kIf, Holds::kSchema, kInPlace}},
    {"then", {Keyword::kThen, Holds::kSchema, kInPlace}},
    {"else", {Keyword::kElse, Holds::kSchema, kInPlace}},
    {"dependentSchemas", {Keyword::kDependentSchemas, Holds::kSchemaMap, kInPlace}},
    {"prefixItems", {Keyword::kPrefixItems, Holds::kSchemaArray, kPart}},
    {"items", {Keyword::kItems, Holds::kSchemaOrArray, kPart}},
    {"additionalItems", {Keyword::kAdditionalItems, Holds::kSchema, kPart}},
    {"contains", {Keyword::kContains, Holds::kSchema, kPart}},
    {"properties", {Keyword::kProperties, Holds::kSchemaMap, kPart}},
    {"patternProperties", {Keyword::kPatternProperties, Holds::kSchemaMap, kPart}},
    {"additionalProperties", {Keyword::kAdditionalProperties, Holds::kSchema, kPart}},
    {"propertyNames", {Keyword::kPropertyNames, Holds::kSchema, kPart}},
    {"unevaluatedItems", {Keyword::kUnevaluatedItems, Holds::kSchema, kPart}},
    {"unevaluatedProperties", {Keyword::kUnevaluatedProperties, Holds::kSchema, kPart}},
    {"$ref", {Keyword::kRef, Holds::kValue, kPart}},  // its target is found by the resolver
    {"$defs", {Keyword::kDefs, Holds::kSchemaMap, kPart}},
    {"definitions", {Keyword::kDefinitions, Holds::kSchemaMap, kPart}},  // draft 7's $defs
    {"$anchor", {Keyword::kAnchor, Holds::kValue, kPart}},
    {"$schema", {Keyword::kSchema, Holds::kValue, kPart}},
    {"$id", {Keyword::kId, Holds::kValue, kPart}},
    {"$comment", {Keyword::kComment, Holds::kValue, kPart}},
    {"title", {Keyword::kTitle, Holds::kValue, kPart}},
    {"description", {Keyword::kDescription, Holds::kValue, kPart}},
    {"default", {Keyword::kDefault, Holds::kValue, kPart}},
    {"deprecated", {Keyword::kDeprecated, Holds::kValue, kPart}},
    {"readOnly", {Keyword::kReadOnly, Holds::kValue, kPart}},
    {"writeOnly", {Keyword::kWriteOnly, Holds::kValue, kPart}},
    {"examples", {Keyword::kExamples, Holds::kValue, kPart}},
    {"format", {Keyword::kFormat, Holds::kValue, kPart}},
    {"contentEncoding", {Keyword::kContentEncoding, Holds::kValue, kPart}},
    {"contentMediaType", {Keyword::kContentMediaType, Holds::kValue, kPart}},
    {"contentSchema", {Keyword::kContentSchema, Holds::kSchema, kPart}},  // an annotation
    {"$dynamicRef", {Keyword::kDynamicRef, Holds::kValue, kPart}},
    {"$dynamicAnchor", {Keyword::kDynamicAnchor, Holds::kValue, kPart}},
    {"$recursiveRef", {Keyword::kRecursiveRef, Holds::kValue, kPart}},
    {"$recursiveAnchor", {Keyword::kRecursiveAnchor, Holds::kValue, kPart}},
    {"$vocabulary", {Keyword::kVocabulary, Holds::kValue, kPart}},
};
static_assert(std::size(kKeywords) == kKeywordCount, "one row per Keyword");

}  // namespace

const KeywordInfo* FindKeyword(std::string_view name) {
  static const auto* by_name = [] {
    auto* map = new std::unordered_map<std::string_view, const KeywordInfo*>();
    for (const NamedKeyword& keyword : kKeywords) map->emplace(keyword.name, &keyword.info);
    return map;
  }();
  const auto it = by_name->find(name);
  return it == by_name->end() ? nullptr : it->second;
}

}  // namespace keel::schema
