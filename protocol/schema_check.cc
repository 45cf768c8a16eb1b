#include "protocol/schema_check.h"

#include <algorithm>
#include <array>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "protocol/schema_keywords.h"
#include "protocol/schema_refs.h"
#include "protocol/schema_regex.h"
#include "protocol/schema_values.h"

namespace keel::schema {
namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 7> kTypeNames = {"null",   "boolean", "object", "array",
                                                        "number", "string",  "integer"};

struct RefSite {
  const json* holder;   // the schema object holding the $ref
  std::string pointer;  // of the $ref keyword
};

struct CheckState {
  const json& root;
  bool strict;
  SchemaIndex index;                                       // filled while walking
  std::unordered_map<const json*, std::string> pointers;   // of every schema walked
  std::unordered_map<std::string, std::string> anchor_at;  // $anchor name -> its pointer
  std::vector<RefSite> refs;
};

std::optional<std::string> CheckSchema(const json& schema, const std::string& pointer, int depth,
                                       CheckState& state);

std::string Got(const json& value) { return std::string(", got ") + TypeName(value); }

std::optional<std::string> CheckTypeKeyword(const json& value) {
  auto known = [](const json& name) {
    return name.is_string() && std::find(kTypeNames.begin(), kTypeNames.end(),
                                         name.get<std::string>()) != kTypeNames.end();
  };
  if (value.is_string()) {
    if (known(value)) return std::nullopt;
    return "unknown type " + Preview(value);
  }
  if (!value.is_array() || value.empty())
    return "must be a type name or a non-empty array of type names";
  std::set<std::string> seen;
  for (const json& name : value) {
    if (!known(name)) return "unknown type " + Preview(name);
    if (!seen.insert(name.get<std::string>()).second)
      return "lists type " + Preview(name) + " twice";
  }
  return std::nullopt;
}

std::optional<std::string> CheckNameList(const json& value) {
  if (!value.is_array()) return "must be an array of property names" + Got(value);
  std::set<std::string> seen;
  for (const json& name : value) {
    if (!name.is_string()) return "must contain only strings, got " + std::string(TypeName(name));
    if (!seen.insert(name.get<std::string>()).second) return "lists " + Preview(name) + " twice";
  }
  return std::nullopt;
}

std::optional<std::string> CheckDependentRequired(const json& value) {
  if (!value.is_object()) return "must be an object of property name arrays" + Got(value);
  for (const auto& [name, names] : value.items()) {
    if (auto problem = CheckNameList(names)) return "'" + Printable(name) + "' " + *problem;
  }
  return std::nullopt;
}

bool IsCount(const json& value) { return IsIntegral(value) && CompareNumbers(value, json(0)) >= 0; }

// "$anchor": a plain name (2020-12's NCName-like grammar), so "#name" can refer to it.
bool IsAnchorName(const std::string& name) {
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (name.empty() || !letter(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) {
    return letter(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
  });
}

// "$schema": the published dialects, whose keywords keel reads the 2020-12 way (generators emit
// draft 7's and 2020-12's; a keyword whose meaning changed, such as draft 4's boolean
// exclusiveMinimum, fails its own shape check). Any other URI names a custom meta-schema, which
// may add vocabularies or switch keywords off: keel cannot know what it means.
bool IsKnownDialect(const std::string& uri) {
  std::string_view text = uri;
  if (!text.empty() && text.back() == '#') text.remove_suffix(1);
  for (std::string_view scheme : {"https://", "http://"}) {
    if (text.rfind(scheme, 0) == 0) text.remove_prefix(scheme.size());
  }
  for (std::string_view known :
       {"json-schema.org/draft/2020-12/schema", "json-schema.org/draft/2019-09/schema",
        "json-schema.org/draft-07/schema", "json-schema.org/draft-06/schema",
        "json-schema.org/draft-04/schema"}) {
    if (text == known) return true;
  }
  return false;
}

// Keywords keel knows and refuses, with the reason.
std::optional<std::string> Refusal(Keyword id) {
  switch (id) {
    case Keyword::kDynamicRef:
    case Keyword::kDynamicAnchor:
      return "not supported: keel cannot check dynamic references";
    case Keyword::kRecursiveRef:
    case Keyword::kRecursiveAnchor:
      return "not supported: keel cannot check recursive references (draft 2019-09)";
    case Keyword::kVocabulary:
      return "not supported: keel cannot check a schema that declares its own vocabularies";
    default:
      return std::nullopt;
  }
}

// The value of a keyword holding no subschema; nullopt when fine.
std::optional<std::string> CheckValue(Keyword id, const json& value) {
  switch (id) {
    case Keyword::kType:
      return CheckTypeKeyword(value);
    case Keyword::kEnum:
      if (!value.is_array()) return "must be an array" + Got(value);
      [[fallthrough]];
    case Keyword::kConst:
      if (NestingDepth(value, kMaxSchemaDepth) > kMaxSchemaDepth) return TooDeep();
      return std::nullopt;
    case Keyword::kMultipleOf:
      if (!value.is_number() || CompareNumbers(value, json(0)) <= 0)
        return "must be a number greater than 0, got " + Preview(value);
      return std::nullopt;
    case Keyword::kMaximum:
    case Keyword::kExclusiveMaximum:
    case Keyword::kMinimum:
    case Keyword::kExclusiveMinimum:
      if (!value.is_number()) return "must be a number" + Got(value);
      return std::nullopt;
    case Keyword::kMaxLength:
    case Keyword::kMinLength:
    case Keyword::kMaxItems:
    case Keyword::kMinItems:
    case Keyword::kMaxContains:
    case Keyword::kMinContains:
    case Keyword::kMaxProperties:
    case Keyword::kMinProperties:
      if (!IsCount(value)) return "must be a non-negative integer, got " + Preview(value);
      return std::nullopt;
    case Keyword::kPattern:
      if (!value.is_string()) return "must be a string" + Got(value);
      return RegexProblem(value.get<std::string>());
    case Keyword::kUniqueItems:
    case Keyword::kDeprecated:
    case Keyword::kReadOnly:
    case Keyword::kWriteOnly:
      if (!value.is_boolean()) return "must be a boolean" + Got(value);
      return std::nullopt;
    case Keyword::kRequired:
      return CheckNameList(value);
    case Keyword::kDependentRequired:
      return CheckDependentRequired(value);
    default:
      break;
  }
  return std::nullopt;
}

// Core keywords and annotations.
std::optional<std::string> CheckCore(Keyword id, const json& value, const std::string& at,
                                     int depth, CheckState& state) {
  switch (id) {
    case Keyword::kRef:
      if (!value.is_string()) return "must be a string" + Got(value);
      state.refs.push_back({nullptr, at});
      return std::nullopt;
    case Keyword::kAnchor: {
      if (!value.is_string() || !IsAnchorName(value.get<std::string>()))
        return "must be a name (a letter or '_', then letters, digits, '-', '_' or '.'), got " +
               Preview(value);
      auto [it, fresh] = state.anchor_at.emplace(value.get<std::string>(), at);
      if (!fresh) return Preview(value) + " is also the $anchor at " + it->second;
      return std::nullopt;
    }
    case Keyword::kId:
      if (depth > 0)
        return "not supported: keel cannot check a nested $id (it changes the base URI that "
               "references resolve against)";
      if (!value.is_string()) return "must be a string" + Got(value);
      return std::nullopt;
    case Keyword::kSchema:
      if (!value.is_string()) return "must be a string" + Got(value);
      if (!IsKnownDialect(value.get<std::string>()))
        return "not supported: " + Preview(value) +
               " is not a published JSON Schema dialect, and keel cannot check what a custom "
               "meta-schema means";
      return std::nullopt;
    case Keyword::kComment:
    case Keyword::kTitle:
    case Keyword::kDescription:
    case Keyword::kFormat:
    case Keyword::kContentEncoding:
    case Keyword::kContentMediaType:
      if (!value.is_string()) return "must be a string" + Got(value);
      return std::nullopt;
    case Keyword::kExamples:
      if (!value.is_array()) return "must be an array" + Got(value);
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

// The container of a keyword holding subschemas (the subschemas are walked afterwards).
std::optional<std::string> CheckContainer(const KeywordInfo& info, const json& value,
                                          const json& schema) {
  switch (info.holds) {
    case Holds::kSchemaArray:
      if (!value.is_array() || value.empty())
        return "must be a non-empty array of schemas" + Got(value);
      return std::nullopt;
    case Holds::kSchemaMap:
      if (!value.is_object()) return "must be an object" + Got(value);
      if (info.id == Keyword::kPatternProperties) {
        for (const auto& [pattern, sub] : value.items()) {
          if (auto problem = RegexProblem(pattern)) return Preview(json(pattern)) + ": " + *problem;
        }
      }
      return std::nullopt;
    case Holds::kSchemaOrArray:
      if (value.is_array() && schema.contains("prefixItems"))
        return "the array form of items (draft 7) cannot be combined with prefixItems";
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::optional<std::string> CheckKeyword(const std::string& key, const json& value,
                                        const json& schema, const std::string& at, int depth,
                                        CheckState& state) {
  if (IsVendorKeyword(key)) return std::nullopt;
  const KeywordInfo* info = FindKeyword(key);
  if (info == nullptr) {
    if (!state.strict) return std::nullopt;
    return "unknown keyword: keel would not check it, so a typo could silently drop a "
           "constraint (a vendor annotation must start with \"x-\")";
  }
  if (auto refusal = Refusal(info->id)) return refusal;
  if (info->id == Keyword::kAdditionalItems) {
    auto items = schema.find("items");
    if (items != schema.end() && items->is_array()) return std::nullopt;
    if (!state.strict) return std::nullopt;  // 2020-12 does not know it: an unknown keyword
    return "not supported without the array form of items (draft 7): in 2020-12, items applies "
           "after prefixItems";
  }
  if (info->holds != Holds::kValue) return CheckContainer(*info, value, schema);
  if (auto problem = CheckValue(info->id, value)) return problem;
  return CheckCore(info->id, value, at, depth, state);
}

std::optional<std::string> CheckSchema(const json& schema, const std::string& pointer, int depth,
                                       CheckState& state) {
  if (depth > kMaxSchemaDepth) return pointer + ": schema " + TooDeep();
  if (!schema.is_boolean() && !schema.is_object()) {
    return pointer + ": a schema must be an object or a boolean, got " + TypeName(schema);
  }
  state.index.schemas.insert(&schema);
  state.pointers.emplace(&schema, pointer);
  if (schema.is_boolean()) return std::nullopt;
  const std::size_t first_ref = state.refs.size();
  for (const auto& [key, value] : schema.items()) {
    const std::string at = PointerChild(pointer, key);
    if (auto problem = CheckKeyword(key, value, schema, at, depth, state))
      return at + ": " + *problem;
  }
  for (std::size_t i = first_ref; i < state.refs.size(); ++i) state.refs[i].holder = &schema;
  if (auto anchor = schema.find("$anchor"); anchor != schema.end())
    state.index.anchors.emplace(anchor->get<std::string>(), &schema);
  std::optional<std::string> nested;
  const bool tuple_items = schema.contains("items") && schema.at("items").is_array();
  ForEachSubschema(schema,
                   [&](const json& sub, const std::string& key, const std::string* token, bool) {
                     if (nested || (key == "additionalItems" && !tuple_items))
                       return;  // lenient: ignored
                     std::string at = PointerChild(pointer, key);
                     if (token != nullptr) at = PointerChild(at, *token);
                     nested = CheckSchema(sub, at, depth + 1, state);
                   });
  return nested;
}

// Every $ref resolves to a schema location walked above.
std::optional<std::string> CheckRefTargets(const CheckState& state,
                                           std::unordered_map<const json*, const json*>& targets) {
  for (const RefSite& site : state.refs) {
    const json& ref = site.holder->at("$ref");
    const RefTarget target = ResolveRef(state.root, ref.get<std::string>(), &state.index);
    if (target.schema == nullptr) return site.pointer + ": " + Preview(ref) + " " + target.problem;
    if (!state.index.schemas.count(target.schema))
      return site.pointer + ": " + Preview(ref) + " names a value that is not a schema";
    targets.emplace(site.holder, target.schema);
  }
  return std::nullopt;
}

// A loop of schemas that apply in place (allOf, not, $ref, ...) would never end: it needs a
// $ref, since without one a schema is a tree. Found by depth-first search without recursion.
std::optional<std::string> CheckRefCycles(
    const CheckState& state, const std::unordered_map<const json*, const json*>& targets) {
  enum class Mark { kNew, kOnPath, kDone };
  std::unordered_map<const json*, Mark> marks;
  auto edges = [&](const json* node) {
    std::vector<const json*> next;
    if (!node->is_object()) return next;
    ForEachSubschema(*node,
                     [&](const json& sub, const std::string&, const std::string*, bool in_place) {
                       if (in_place) next.push_back(&sub);
                     });
    if (auto it = targets.find(node); it != targets.end()) next.push_back(it->second);
    return next;
  };
  for (const RefSite& start : state.refs) {
    if (marks[start.holder] != Mark::kNew) continue;
    std::vector<std::pair<const json*, std::vector<const json*>>> path;
    marks[start.holder] = Mark::kOnPath;
    path.emplace_back(start.holder, edges(start.holder));
    while (!path.empty()) {
      auto& [node, pending] = path.back();
      if (pending.empty()) {
        marks[node] = Mark::kDone;
        path.pop_back();
        continue;
      }
      const json* next = pending.back();
      pending.pop_back();
      Mark& mark = marks[next];
      if (mark == Mark::kOnPath) {
        const std::string at = state.pointers.at(node);
        return at + (node->is_object() && node->contains("$ref") ? "/$ref" : "") +
               ": the references through " + state.pointers.at(next) +
               " form a cycle that never descends into the instance";
      }
      if (mark == Mark::kNew) {
        mark = Mark::kOnPath;
        path.emplace_back(next, edges(next));
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> CheckSchemaShape(const json& schema, bool strict) {
  CheckState state{schema, strict, {}, {}, {}, {}};
  if (auto problem = CheckSchema(schema, "#", 0, state)) return problem;
  std::unordered_map<const json*, const json*> targets;
  if (auto problem = CheckRefTargets(state, targets)) return problem;
  return CheckRefCycles(state, targets);
}

}  // namespace keel::schema
