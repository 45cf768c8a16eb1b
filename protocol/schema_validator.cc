#include "protocol/schema_validator.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "protocol/schema_check.h"
#include "protocol/schema_keywords.h"
#include "protocol/schema_refs.h"
#include "protocol/schema_regex.h"
#include "protocol/schema_values.h"

namespace keel {
namespace {

using nlohmann::json;
using schema::ChildPath;
using schema::CompareNumbers;
using schema::Keyword;
using schema::kMaxSchemaDepth;
using schema::Preview;
using schema::Printable;

// Messages quote at most this many failed alternatives of an anyOf or oneOf.
constexpr std::size_t kMaxQuotedBranches = 3;

// What the schemas that passed at one instance location evaluated there: the annotations that
// unevaluatedProperties and unevaluatedItems read. Collected only where such a keyword can see
// them, so a schema without either pays nothing.
struct Evaluated {
  std::unordered_set<std::string_view> properties;  // names, viewing the instance's keys
  std::vector<bool> items;                          // by index, sized on first use

  void Item(std::size_t i, std::size_t count) {
    if (items.size() < count) items.resize(count, false);
    items[i] = true;
  }
  bool HasItem(std::size_t i) const { return i < items.size() && items[i]; }
  void Merge(const Evaluated& other) {
    properties.insert(other.properties.begin(), other.properties.end());
    if (items.size() < other.items.size()) items.resize(other.items.size(), false);
    for (std::size_t i = 0; i < other.items.size(); ++i)
      if (other.items[i]) items[i] = true;
  }
};

// A schema object's keywords by id: one pass over its members instead of a lookup per keyword.
struct Keywords {
  std::array<const json*, schema::kKeywordCount> at{};
  explicit Keywords(const json& schema) {
    for (auto it = schema.begin(); it != schema.end(); ++it) {
      if (const schema::KeywordInfo* info = schema::FindKeyword(it.key()))
        at[static_cast<std::size_t>(info->id)] = &*it;
    }
  }
  const json* operator[](Keyword id) const { return at[static_cast<std::size_t>(id)]; }
};

// "path: message" -> "message" for quoting inside a message about `path`.
std::string Reason(const std::string& message, const std::string& path) {
  const std::string prefix = path + ": ";
  return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
}

// Applies a min/max pair of count keywords, e.g. "string has 5 characters, more than maxLength 4".
std::optional<std::string> CheckCount(const json* min, const char* min_keyword, const json* max,
                                      const char* max_keyword, std::uint64_t count,
                                      const std::string& description, const std::string& path) {
  if (min != nullptr && CompareNumbers(json(count), *min) < 0)
    return path + ": " + description + ", fewer than " + min_keyword + " " + Preview(*min);
  if (max != nullptr && CompareNumbers(json(count), *max) > 0)
    return path + ": " + description + ", more than " + max_keyword + " " + Preview(*max);
  return std::nullopt;
}

std::string Counted(std::uint64_t count, const char* one, const char* many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

std::optional<std::string> ValidateNumber(const Keywords& k, const json& instance,
                                          const std::string& path) {
  struct Limit {
    Keyword keyword;
    const char* name;
    bool (*passes)(std::partial_ordering);  // instance compared with the limit
    const char* wording;
  };
  static constexpr Limit kLimits[] = {
      {Keyword::kMinimum, "minimum", [](std::partial_ordering o) { return o >= 0; },
       "is less than minimum"},
      {Keyword::kExclusiveMinimum, "exclusiveMinimum",
       [](std::partial_ordering o) { return o > 0; }, "is not greater than exclusiveMinimum"},
      {Keyword::kMaximum, "maximum", [](std::partial_ordering o) { return o <= 0; },
       "is greater than maximum"},
      {Keyword::kExclusiveMaximum, "exclusiveMaximum",
       [](std::partial_ordering o) { return o < 0; }, "is not less than exclusiveMaximum"},
  };
  for (const Limit& limit : kLimits) {
    const json* bound = k[limit.keyword];
    if (bound != nullptr && !limit.passes(CompareNumbers(instance, *bound)))
      return path + ": " + Preview(instance) + " " + limit.wording + " " + Preview(*bound);
  }
  if (const json* divisor = k[Keyword::kMultipleOf];
      divisor != nullptr && !schema::IsMultipleOf(instance, *divisor))
    return path + ": " + Preview(instance) + " is not a multiple of " + Preview(*divisor);
  return std::nullopt;
}

std::optional<std::string> ValidateString(const Keywords& k, const json& instance,
                                          const std::string& path) {
  const auto& text = instance.get_ref<const std::string&>();
  if (k[Keyword::kMinLength] != nullptr || k[Keyword::kMaxLength] != nullptr) {
    const std::uint64_t length = schema::CodePoints(text);
    if (auto error =
            CheckCount(k[Keyword::kMinLength], "minLength", k[Keyword::kMaxLength], "maxLength",
                       length, "string has " + Counted(length, "character", "characters"), path))
      return error;
  }
  // "format" is an annotation: keel does not assert it (see the header).
  if (const json* pattern = k[Keyword::kPattern]) {
    const auto found = schema::RegexSearch(pattern->get_ref<const std::string&>(), text);
    if (!found) return path + ": schema is invalid: pattern " + Preview(*pattern);
    if (!*found)
      return path + ": " + Preview(instance) + " does not match pattern " + Preview(*pattern);
  }
  return std::nullopt;
}

// Finds two equal items in linear time (by canonical text), for uniqueItems.
std::optional<std::string> CheckUnique(const json& instance, const std::string& path) {
  std::unordered_map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < instance.size(); ++i) {
    auto [it, fresh] = seen.emplace(schema::CanonicalText(instance[i]), i);
    if (!fresh) {
      return path + ": items [" + std::to_string(it->second) + "] and [" + std::to_string(i) +
             "] are equal, but uniqueItems is true";
    }
  }
  return std::nullopt;
}

// Evaluates one instance against one schema document. Holds what one call needs: the root that
// references resolve in, the $anchor index (built on the first anchor reference), and the
// results of alternatives (anyOf, oneOf, not, if) already tried, so a schema whose
// alternatives recurse is evaluated once per instance location and not once per path to it.
class Evaluator {
 public:
  explicit Evaluator(const json& root) : root_(root) {}

  std::optional<std::string> Evaluate(const json& schema, const json& instance,
                                      const std::string& path, int depth, Evaluated* out);

 private:
  struct MemoKey {
    const json* schema;
    const json* instance;
    int depth;
    bool operator==(const MemoKey& other) const = default;
  };
  struct MemoHash {
    std::size_t operator()(const MemoKey& key) const {
      return std::hash<const void*>()(key.schema) * 31 + std::hash<const void*>()(key.instance) +
             static_cast<std::size_t>(key.depth);
    }
  };

  std::optional<std::string> Branch(const json& schema, const json& instance,
                                    const std::string& path, int depth, Evaluated* out);
  std::optional<std::string> EvaluateRef(const json& ref, const json& instance,
                                         const std::string& path, int depth, Evaluated* out);
  std::optional<std::string> EvaluateBasics(const Keywords& k, const json& instance,
                                            const std::string& path);
  std::optional<std::string> EvaluateArray(const Keywords& k, const json& instance,
                                           const std::string& path, int depth, Evaluated* out);
  std::optional<std::string> EvaluateItems(const Keywords& k, const json& instance,
                                           const std::string& path, int depth, Evaluated* out);
  std::optional<std::string> EvaluateContains(const Keywords& k, const json& instance,
                                              const std::string& path, int depth, Evaluated* out);
  std::optional<std::string> EvaluateObject(const Keywords& k, const json& instance,
                                            const std::string& path, int depth, Evaluated* out);
  std::optional<std::string> EvaluateProperties(const Keywords& k, const json& instance,
                                                const std::string& path, int depth, Evaluated* out);
  std::optional<std::string> EvaluateNames(const json& names, const json& instance,
                                           const std::string& path, int depth);
  std::optional<std::string> EvaluateCombinators(const Keywords& k, const json& instance,
                                                 const std::string& path, int depth,
                                                 Evaluated* out);
  std::optional<std::string> EvaluateAnyOf(const json& branches, const json& instance,
                                           const std::string& path, int depth, Evaluated* out);
  std::optional<std::string> EvaluateOneOf(const json& branches, const json& instance,
                                           const std::string& path, int depth, Evaluated* out);
  std::optional<std::string> EvaluateConditional(const Keywords& k, const json& instance,
                                                 const std::string& path, int depth,
                                                 Evaluated* out);
  std::optional<std::string> EvaluateUnevaluated(const Keywords& k, const json& instance,
                                                 const std::string& path, int depth,
                                                 Evaluated& seen);

  const json& root_;
  std::optional<schema::SchemaIndex> index_;
  std::unordered_map<MemoKey, std::optional<std::string>, MemoHash> memo_;
  int names_depth_ = 0;  // > 0 while evaluating property names: temporaries, never memoized
};

std::optional<std::string> Evaluator::Evaluate(const json& schema, const json& instance,
                                               const std::string& path, int depth, Evaluated* out) {
  if (depth > kMaxSchemaDepth) return path + ": schema " + schema::TooDeep();
  if (schema.is_boolean()) {
    if (schema.get<bool>()) return std::nullopt;
    return path + ": no value is allowed here";
  }
  const Keywords k(schema);
  // Annotations are gathered when a caller or this schema's unevaluated* keywords read them.
  const bool reads_annotations =
      k[Keyword::kUnevaluatedProperties] != nullptr || k[Keyword::kUnevaluatedItems] != nullptr;
  Evaluated local;
  Evaluated* seen = out != nullptr || reads_annotations ? &local : nullptr;
  // 2020-12: $ref applies alongside its sibling keywords (draft 7 ignored the siblings).
  if (const json* ref = k[Keyword::kRef]) {
    if (auto error = EvaluateRef(*ref, instance, path, depth, seen)) return error;
  }
  if (auto error = EvaluateBasics(k, instance, path)) return error;
  if (instance.is_number()) {
    if (auto error = ValidateNumber(k, instance, path)) return error;
  } else if (instance.is_string()) {
    if (auto error = ValidateString(k, instance, path)) return error;
  } else if (instance.is_array()) {
    if (auto error = EvaluateArray(k, instance, path, depth, seen)) return error;
  } else if (instance.is_object()) {
    if (auto error = EvaluateObject(k, instance, path, depth, seen)) return error;
  }
  if (auto error = EvaluateCombinators(k, instance, path, depth, seen)) return error;
  if (reads_annotations) {
    if (auto error = EvaluateUnevaluated(k, instance, path, depth, local)) return error;
  }
  if (out != nullptr) out->Merge(local);
  return std::nullopt;
}

// An alternative (anyOf, oneOf, not, if): remembered when no annotations are wanted.
std::optional<std::string> Evaluator::Branch(const json& schema, const json& instance,
                                             const std::string& path, int depth, Evaluated* out) {
  if (out != nullptr || names_depth_ > 0) return Evaluate(schema, instance, path, depth, out);
  const MemoKey key{&schema, &instance, depth};
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  std::optional<std::string> result = Evaluate(schema, instance, path, depth, nullptr);
  memo_.emplace(key, result);
  return result;
}

std::optional<std::string> Evaluator::EvaluateRef(const json& ref, const json& instance,
                                                  const std::string& path, int depth,
                                                  Evaluated* out) {
  const std::string& text = ref.get_ref<const std::string&>();
  if (!index_ && schema::IsAnchorRef(root_, text)) index_ = schema::SchemaIndex::Build(root_);
  const schema::RefTarget target = schema::ResolveRef(root_, text, index_ ? &*index_ : nullptr);
  if (target.schema == nullptr)
    return path + ": schema is invalid: unresolvable $ref " + Preview(ref);
  // Following a reference counts as a level, so no chain of references recurses without bound.
  return Evaluate(*target.schema, instance, path, depth + 1, out);
}

std::optional<std::string> Evaluator::EvaluateBasics(const Keywords& k, const json& instance,
                                                     const std::string& path) {
  if (const json* type = k[Keyword::kType]) {
    const bool matched =
        type->is_string()
            ? schema::TypeMatches(type->get_ref<const std::string&>(), instance)
            : std::any_of(type->begin(), type->end(), [&](const json& name) {
                return schema::TypeMatches(name.get_ref<const std::string&>(), instance);
              });
    if (!matched) {
      std::string expected;
      for (const json& name : type->is_array() ? *type : json::array({*type}))
        expected += (expected.empty() ? "" : " or ") + name.get<std::string>();
      return path + ": expected " + expected + ", got " + schema::TypeName(instance);
    }
  }
  if (const json* constant = k[Keyword::kConst];
      constant != nullptr && !schema::JsonEqual(instance, *constant)) {
    return path + ": " + Preview(instance) + " is not equal to " + Preview(*constant);
  }
  if (const json* options = k[Keyword::kEnum]) {
    const bool found = std::any_of(options->begin(), options->end(), [&](const json& option) {
      return schema::JsonEqual(instance, option);
    });
    if (!found) return path + ": " + Preview(instance) + " is not one of " + Preview(*options);
  }
  return std::nullopt;
}

std::optional<std::string> Evaluator::EvaluateArray(const Keywords& k, const json& instance,
                                                    const std::string& path, int depth,
                                                    Evaluated* out) {
  if (auto error = CheckCount(k[Keyword::kMinItems], "minItems", k[Keyword::kMaxItems], "maxItems",
                              instance.size(),
                              "array has " + Counted(instance.size(), "item", "items"), path))
    return error;
  if (const json* unique = k[Keyword::kUniqueItems]; unique != nullptr && unique->get<bool>()) {
    if (auto error = CheckUnique(instance, path)) return error;
  }
  if (auto error = EvaluateItems(k, instance, path, depth, out)) return error;
  return EvaluateContains(k, instance, path, depth, out);
}

// prefixItems, then items after them (2020-12); or draft 7's array form of items, then
// additionalItems after it.
std::optional<std::string> Evaluator::EvaluateItems(const Keywords& k, const json& instance,
                                                    const std::string& path, int depth,
                                                    Evaluated* out) {
  const json* items = k[Keyword::kItems];
  const bool tuple = items != nullptr && items->is_array();
  const json* prefix = tuple ? items : k[Keyword::kPrefixItems];
  const json* rest = tuple ? k[Keyword::kAdditionalItems] : items;
  const std::size_t positional = prefix != nullptr ? std::min(prefix->size(), instance.size()) : 0;
  for (std::size_t i = 0; i < instance.size(); ++i) {
    const json* item_schema = i < positional ? &(*prefix)[i] : rest;
    if (item_schema == nullptr) break;
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    if (auto error = Evaluate(*item_schema, instance[i], item_path, depth + 1, nullptr))
      return error;
    if (out != nullptr) out->Item(i, instance.size());
  }
  return std::nullopt;
}

std::optional<std::string> Evaluator::EvaluateContains(const Keywords& k, const json& instance,
                                                       const std::string& path, int depth,
                                                       Evaluated* out) {
  const json* contains = k[Keyword::kContains];
  if (contains == nullptr) return std::nullopt;
  std::uint64_t matches = 0;
  for (std::size_t i = 0; i < instance.size(); ++i) {
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    if (Evaluate(*contains, instance[i], item_path, depth + 1, nullptr)) continue;
    ++matches;
    if (out != nullptr) out->Item(i, instance.size());
  }
  const json* min = k[Keyword::kMinContains];
  if (min == nullptr && matches == 0) return path + ": no item matches contains";
  return CheckCount(min, "minContains", k[Keyword::kMaxContains], "maxContains", matches,
                    Counted(matches, "item matches", "items match") + " contains", path);
}

std::optional<std::string> Evaluator::EvaluateObject(const Keywords& k, const json& instance,
                                                     const std::string& path, int depth,
                                                     Evaluated* out) {
  if (const json* required = k[Keyword::kRequired]) {
    for (const json& name : *required) {
      if (!instance.contains(name.get_ref<const std::string&>()))
        return path + ": missing required property '" + Printable(name.get<std::string>()) + "'";
    }
  }
  if (auto error =
          CheckCount(k[Keyword::kMinProperties], "minProperties", k[Keyword::kMaxProperties],
                     "maxProperties", instance.size(),
                     "object has " + Counted(instance.size(), "property", "properties"), path))
    return error;
  if (const json* dependent = k[Keyword::kDependentRequired]) {
    for (const auto& [name, needed] : dependent->items()) {
      if (!instance.contains(name)) continue;
      for (const json& other : needed) {
        if (!instance.contains(other.get_ref<const std::string&>()))
          return path + ": property '" + Printable(name) + "' requires property '" +
                 Printable(other.get<std::string>()) + "'";
      }
    }
  }
  if (auto error = EvaluateProperties(k, instance, path, depth, out)) return error;
  if (const json* names = k[Keyword::kPropertyNames]) {
    if (auto error = EvaluateNames(*names, instance, path, depth)) return error;
  }
  if (const json* dependent = k[Keyword::kDependentSchemas]) {
    for (const auto& [name, sub] : dependent->items()) {
      if (!instance.contains(name)) continue;
      if (auto error = Evaluate(sub, instance, path, depth + 1, out)) return error;
    }
  }
  return std::nullopt;
}

// properties, patternProperties, and additionalProperties for the names neither one covers.
std::optional<std::string> Evaluator::EvaluateProperties(const Keywords& k, const json& instance,
                                                         const std::string& path, int depth,
                                                         Evaluated* out) {
  if (const json* properties = k[Keyword::kProperties]) {
    for (const auto& [name, property_schema] : properties->items()) {
      auto value = instance.find(name);
      if (value == instance.end()) continue;
      if (auto error = Evaluate(property_schema, *value, ChildPath(path, name), depth + 1, nullptr))
        return error;
      if (out != nullptr) out->properties.insert(value.key());
    }
  }
  const json* patterns = k[Keyword::kPatternProperties];
  const json* additional = k[Keyword::kAdditionalProperties];
  if (patterns == nullptr && additional == nullptr) return std::nullopt;
  const json* declared = k[Keyword::kProperties];
  for (auto it = instance.begin(); it != instance.end(); ++it) {
    const std::string& name = it.key();
    bool covered = declared != nullptr && declared->contains(name);
    for (auto pattern = patterns != nullptr ? patterns->begin() : json::const_iterator();
         patterns != nullptr && pattern != patterns->end(); ++pattern) {
      if (!schema::RegexSearch(pattern.key(), name).value_or(false)) continue;
      covered = true;
      if (auto error = Evaluate(*pattern, *it, ChildPath(path, name), depth + 1, nullptr))
        return error;
    }
    if (!covered && additional != nullptr) {
      if (additional->is_boolean() && !additional->get<bool>())
        return path + ": unexpected property '" + Printable(name) + "'";
      if (auto error = Evaluate(*additional, *it, ChildPath(path, name), depth + 1, nullptr))
        return error;
    }
    if (out != nullptr && (covered || additional != nullptr)) out->properties.insert(name);
  }
  return std::nullopt;
}

std::optional<std::string> Evaluator::EvaluateNames(const json& names, const json& instance,
                                                    const std::string& path, int depth) {
  const std::string name_path = path + " property name";
  ++names_depth_;
  std::optional<std::string> error;
  for (auto it = instance.begin(); it != instance.end() && !error; ++it) {
    if (auto problem = Evaluate(names, json(it.key()), name_path, depth + 1, nullptr))
      error = path + ": property name '" + Printable(it.key()) +
              "' is not allowed by propertyNames: " + Reason(*problem, name_path);
  }
  --names_depth_;
  return error;
}

std::optional<std::string> Evaluator::EvaluateCombinators(const Keywords& k, const json& instance,
                                                          const std::string& path, int depth,
                                                          Evaluated* out) {
  if (const json* all = k[Keyword::kAllOf]) {
    for (const json& branch : *all) {
      if (auto error = Evaluate(branch, instance, path, depth + 1, out)) return error;
    }
  }
  if (const json* any = k[Keyword::kAnyOf]) {
    if (auto error = EvaluateAnyOf(*any, instance, path, depth, out)) return error;
  }
  if (const json* one = k[Keyword::kOneOf]) {
    if (auto error = EvaluateOneOf(*one, instance, path, depth, out)) return error;
  }
  if (const json* negated = k[Keyword::kNot]) {
    if (!Branch(*negated, instance, path, depth + 1, nullptr))
      return path + ": " + Preview(instance) + " must not match the schema under not";
  }
  return EvaluateConditional(k, instance, path, depth, out);
}

// "matches no schema of anyOf: [0] missing required property 'phone'; [1] ...".
std::string NoBranchMatches(const char* keyword, const std::vector<std::string>& errors,
                            const std::string& path) {
  std::string text = path + ": matches no schema of " + keyword + ":";
  for (std::size_t i = 0; i < errors.size() && i < kMaxQuotedBranches; ++i)
    text += (i == 0 ? " [" : "; [") + std::to_string(i) + "] " + Reason(errors[i], path);
  if (errors.size() > kMaxQuotedBranches) text += "; ...";
  return text;
}

std::optional<std::string> Evaluator::EvaluateAnyOf(const json& branches, const json& instance,
                                                    const std::string& path, int depth,
                                                    Evaluated* out) {
  std::vector<std::string> errors;
  bool matched = false;
  for (const json& branch : branches) {
    // With annotations wanted, every passing branch contributes, so none may be skipped.
    Evaluated branch_seen;
    auto error = Branch(branch, instance, path, depth + 1, out != nullptr ? &branch_seen : nullptr);
    if (!error) {
      matched = true;
      if (out == nullptr) return std::nullopt;
      out->Merge(branch_seen);
    } else if (!matched) {
      errors.push_back(std::move(*error));
    }
  }
  if (matched) return std::nullopt;
  return NoBranchMatches("anyOf", errors, path);
}

std::optional<std::string> Evaluator::EvaluateOneOf(const json& branches, const json& instance,
                                                    const std::string& path, int depth,
                                                    Evaluated* out) {
  std::vector<std::string> errors;
  std::optional<std::size_t> match;
  Evaluated match_seen;
  for (std::size_t i = 0; i < branches.size(); ++i) {
    Evaluated branch_seen;
    auto error =
        Branch(branches[i], instance, path, depth + 1, out != nullptr ? &branch_seen : nullptr);
    if (error) {
      errors.push_back(std::move(*error));
      continue;
    }
    if (match) {
      return path + ": matches oneOf[" + std::to_string(*match) + "] and oneOf[" +
             std::to_string(i) + "], but oneOf allows exactly one";
    }
    match = i;
    match_seen = std::move(branch_seen);
  }
  if (!match) return NoBranchMatches("oneOf", errors, path);
  if (out != nullptr) out->Merge(match_seen);
  return std::nullopt;
}

// if/then/else: `then` applies when `if` passes, `else` when it fails; `if` alone asserts nothing.
std::optional<std::string> Evaluator::EvaluateConditional(const Keywords& k, const json& instance,
                                                          const std::string& path, int depth,
                                                          Evaluated* out) {
  const json* condition = k[Keyword::kIf];
  if (condition == nullptr) return std::nullopt;
  Evaluated condition_seen;
  const bool holds =
      !Branch(*condition, instance, path, depth + 1, out != nullptr ? &condition_seen : nullptr);
  if (holds && out != nullptr) out->Merge(condition_seen);
  const json* next = holds ? k[Keyword::kThen] : k[Keyword::kElse];
  if (next == nullptr) return std::nullopt;
  return Evaluate(*next, instance, path, depth + 1, out);
}

// unevaluatedProperties / unevaluatedItems: the members no passing schema here evaluated.
std::optional<std::string> Evaluator::EvaluateUnevaluated(const Keywords& k, const json& instance,
                                                          const std::string& path, int depth,
                                                          Evaluated& seen) {
  if (const json* rest = k[Keyword::kUnevaluatedProperties];
      rest != nullptr && instance.is_object()) {
    for (auto it = instance.begin(); it != instance.end(); ++it) {
      if (seen.properties.count(it.key())) continue;
      if (rest->is_boolean() && !rest->get<bool>())
        return path + ": unexpected property '" + Printable(it.key()) + "'";
      if (auto error = Evaluate(*rest, *it, ChildPath(path, it.key()), depth + 1, nullptr))
        return error;
      seen.properties.insert(it.key());
    }
  }
  if (const json* rest = k[Keyword::kUnevaluatedItems]; rest != nullptr && instance.is_array()) {
    for (std::size_t i = 0; i < instance.size(); ++i) {
      if (seen.HasItem(i)) continue;
      const std::string item_path = path + "[" + std::to_string(i) + "]";
      if (auto error = Evaluate(*rest, instance[i], item_path, depth + 1, nullptr)) return error;
      seen.Item(i, instance.size());
    }
  }
  return std::nullopt;
}

template <typename Body>
std::optional<std::string> NeverThrow(const std::string& root_name, Body body) {
  try {
    return body();
  } catch (const std::exception& e) {
    // Not expected once the schema has been checked; reported rather than thrown so a tool call
    // fails cleanly instead of taking down the request.
    return root_name + ": could not validate: " + e.what();
  } catch (...) {
    return root_name + ": could not validate";
  }
}

}  // namespace

std::optional<std::string> ValidateSchema(const json& schema, const json& instance,
                                          const std::string& root_name) {
  return NeverThrow(root_name, [&]() -> std::optional<std::string> {
    if (auto problem = schema::CheckSchemaShape(schema, /*strict=*/false))
      return root_name + ": schema is invalid: " + *problem;
    return Evaluator(schema).Evaluate(schema, instance, root_name, 0, nullptr);
  });
}

std::optional<std::string> ValidateCheckedSchema(const json& schema, const json& instance,
                                                 const std::string& root_name) {
  return NeverThrow(root_name, [&]() -> std::optional<std::string> {
    return Evaluator(schema).Evaluate(schema, instance, root_name, 0, nullptr);
  });
}

std::optional<std::string> CheckSchemaWellFormed(const json& schema) {
  try {
    return schema::CheckSchemaShape(schema, /*strict=*/true);
  } catch (const std::exception& e) {
    return std::string("schema could not be checked: ") + e.what();
  } catch (...) {
    return std::string("schema could not be checked");
  }
}

}  // namespace keel
