#include "protocol/schema_validator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <compare>
#include <cstdint>
#include <exception>
#include <limits>
#include <set>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace keel {
namespace {

using nlohmann::json;

// Deep enough for any real tool schema, shallow enough that recursion cannot exhaust the stack.
constexpr int kMaxDepth = 64;
// Values quoted in messages are cut short so one huge argument cannot flood a log line.
constexpr int kPreviewDepth = 8;
constexpr std::size_t kPreviewChars = 120;

constexpr std::array<std::string_view, 7> kTypeNames = {"null",   "boolean", "object", "array",
                                                        "number", "string",  "integer"};

const char* TypeName(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "integer";
    case json::value_t::number_float:
      return "number";
    case json::value_t::string:
      return "string";
    case json::value_t::array:
      return "array";
    case json::value_t::object:
      return "object";
    default:
      return "binary";
  }
}

// Never throws on invalid UTF-8 (dump's default would), since messages end up in JSON responses.
std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// A string made safe to print: control characters escaped, invalid UTF-8 replaced, no quotes.
std::string Printable(const std::string& text) {
  std::string quoted = Dump(json(text));
  return quoted.substr(1, quoted.size() - 2);
}

std::string TooDeep() { return "nests deeper than " + std::to_string(kMaxDepth) + " levels"; }

// Nesting depth of `value` (scalars are 0); stops counting just past `limit` so that measuring a
// hostile value cannot itself recurse without bound.
int NestingDepth(const json& value, int limit) {
  if (!value.is_structured()) return 0;
  if (limit <= 0) return 1;
  int deepest = 0;
  for (const json& child : value) deepest = std::max(deepest, NestingDepth(child, limit - 1));
  return deepest + 1;
}

std::string Preview(const json& value) {
  if (NestingDepth(value, kPreviewDepth) > kPreviewDepth) {
    return value.is_array() ? "<deeply nested array>" : "<deeply nested object>";
  }
  std::string text = Dump(value);
  if (text.size() <= kPreviewChars) return text;
  std::size_t cut = kPreviewChars;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
    --cut;  // keep UTF-8 whole
  return text.substr(0, cut) + "...";
}

std::string ChildPath(const std::string& parent, const std::string& name) {
  bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    // ASCII only, deliberately not std::isalnum: paths must not depend on the process locale.
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
  return plain ? parent + "." + name : parent + "[" + Dump(json(name)) + "]";
}

std::string PointerChild(const std::string& pointer, const std::string& token) {
  std::string escaped;
  for (char c : token) escaped += c == '~' ? "~0" : c == '/' ? "~1" : std::string(1, c);
  return pointer + "/" + Printable(escaped);
}

// Compares an integer with a double exactly. Casting the integer to double would round above 2^53
// (calling 2^53 + 1 equal to 2^53); the integer part of an in-range double is exact instead.
template <typename Int>
std::partial_ordering CompareToDouble(Int value, double d) {
  if (std::isnan(d)) return std::partial_ordering::unordered;
  const double whole = std::floor(d);
  if (whole < static_cast<double>(std::numeric_limits<Int>::min()))
    return std::partial_ordering::greater;
  if (whole >= std::ldexp(1.0, std::numeric_limits<Int>::digits))
    return std::partial_ordering::less;
  const auto truncated = static_cast<Int>(whole);
  if (value != truncated) return value <=> truncated;
  return whole == d ? std::partial_ordering::equivalent : std::partial_ordering::less;
}

// Orders two json numbers by value whatever mix of int64, uint64 and double stores them.
std::partial_ordering CompareNumbers(const json& a, const json& b) {
  using Number = std::variant<std::int64_t, std::uint64_t, double>;
  auto as_number = [](const json& v) -> Number {
    if (v.is_number_unsigned()) return v.get<std::uint64_t>();
    if (v.is_number_integer()) return v.get<std::int64_t>();
    return v.get<double>();
  };
  return std::visit(
      [](auto x, auto y) -> std::partial_ordering {
        constexpr bool kXIsDouble = std::is_same_v<decltype(x), double>;
        constexpr bool kYIsDouble = std::is_same_v<decltype(y), double>;
        if constexpr (kXIsDouble && kYIsDouble)
          return x <=> y;
        else if constexpr (kYIsDouble)
          return CompareToDouble(x, y);
        else if constexpr (kXIsDouble)
          return 0 <=> CompareToDouble(y, x);
        else if (std::cmp_equal(x, y))
          return std::partial_ordering::equivalent;
        else
          return std::cmp_less(x, y) ? std::partial_ordering::less : std::partial_ordering::greater;
      },
      as_number(a), as_number(b));
}

// JSON Schema equality: like ==, but numbers compare by value (1 == 1.0) and booleans never equal
// numbers. The depth guard is belt and braces: enum/const values are depth-checked up front.
bool JsonEqual(const json& a, const json& b, int depth) {
  if (depth > kMaxDepth) return false;
  if (a.is_number() && b.is_number()) return CompareNumbers(a, b) == 0;
  if (a.type() != b.type()) return false;
  if (!a.is_structured()) return a == b;
  if (a.size() != b.size()) return false;
  for (auto it = a.begin(); it != a.end(); ++it) {
    auto other = a.is_array() ? b.begin() + (it - a.begin()) : b.find(it.key());
    if (other == b.end() || !JsonEqual(*it, *other, depth + 1)) return false;
  }
  return true;
}

bool IsIntegral(const json& value) {
  if (value.is_number_integer()) return true;
  if (!value.is_number_float()) return false;
  const double d = value.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

bool TypeMatches(std::string_view name, const json& value) {
  if (name == "integer") return IsIntegral(value);
  if (name == "number") return value.is_number();
  return name == TypeName(value);
}

// ---------------------------------------------------------------------------------------------
// References. Only `#/$defs/<name>` into the root schema's own $defs: enough for the shared
// sub-schemas that tool schemas use, and every reference can be checked at registration.

constexpr std::string_view kDefsPrefix = "#/$defs/";

// The schema `ref` names in `root`, or null when it names none.
const json* ResolveRef(const json& root, const std::string& ref) {
  if (ref.rfind(kDefsPrefix, 0) != 0 || !root.is_object()) return nullptr;
  const auto defs = root.find("$defs");
  if (defs == root.end() || !defs->is_object()) return nullptr;
  std::string name;  // one JSON Pointer token: ~1 is '/', ~0 is '~'; no '/' of its own
  const std::string token = ref.substr(kDefsPrefix.size());
  for (std::size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '/') return nullptr;
    if (token[i] != '~') {
      name += token[i];
    } else if (i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
      name += token[++i] == '0' ? '~' : '/';
    } else {
      return nullptr;
    }
  }
  const auto target = defs->find(name);
  return target == defs->end() ? nullptr : &*target;
}

// ---------------------------------------------------------------------------------------------
// Schema shape checks. `strict` rejects unknown keywords (registration); lenient ignores them
// (validation), matching JSON Schema's rule that unknown keywords are not constraints.

struct CheckState {
  const json& root;  // where $ref resolves
  bool strict;
};

std::optional<std::string> CheckSchema(const json& schema, const std::string& pointer, int depth,
                                       const CheckState& state);

// A $ref's problem, or nullopt. A chain of references that comes back to itself without
// descending into the instance would never end, so it is refused here.
std::optional<std::string> CheckRef(const json& value, const json& root) {
  if (!value.is_string()) return std::string("must be a string, got ") + TypeName(value);
  const std::string& ref = value.get_ref<const std::string&>();
  if (ref.rfind(kDefsPrefix, 0) != 0 || ref.find('%') != std::string::npos) {
    return "only references to " + std::string(kDefsPrefix) +
           "<name> in the same schema are supported, got " + Preview(value);
  }
  const json* target = ResolveRef(root, ref);
  if (target == nullptr) return Preview(value) + " names no schema under the root's $defs";
  std::set<const json*> seen = {target};
  while (target->is_object()) {
    const auto next = target->find("$ref");
    if (next == target->end() || !next->is_string()) break;
    target = ResolveRef(root, next->get<std::string>());
    if (target == nullptr) break;  // reported where that $ref is
    if (!seen.insert(target).second)
      return "the references from " + Preview(value) + " form a cycle";
  }
  return std::nullopt;
}

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

// A keyword starting with "x-" (MCP's x-mcp-header, vendor annotations): an annotation of any
// value, never a constraint, so the strict gate lets it through unchecked.
bool IsExtensionAnnotation(const std::string& key) { return key.rfind("x-", 0) == 0; }

// Returns a problem with the keyword's value (without location), or nullopt; nested schemas are
// checked by CheckSchema and return complete messages through `nested`.
std::optional<std::string> CheckKeyword(const std::string& key, const json& value,
                                        const std::string& at, int depth, const CheckState& state,
                                        std::optional<std::string>& nested) {
  const std::string got = std::string(", got ") + TypeName(value);
  if (key == "type") return CheckTypeKeyword(value);
  if (key == "properties" || key == "$defs") {
    if (!value.is_object()) return "must be an object" + got;
    for (const auto& [name, sub] : value.items()) {
      nested = CheckSchema(sub, PointerChild(at, name), depth + 1, state);
      if (nested) return std::nullopt;
    }
  } else if (key == "$ref") {
    return CheckRef(value, state.root);
  } else if (key == "items") {
    if (!value.is_array()) {
      nested = CheckSchema(value, at, depth + 1, state);
      return std::nullopt;
    }
    for (std::size_t i = 0; i < value.size(); ++i) {
      nested = CheckSchema(value[i], at + "/" + std::to_string(i), depth + 1, state);
      if (nested) return std::nullopt;
    }
  } else if (key == "additionalProperties") {
    nested = CheckSchema(value, at, depth + 1, state);
  } else if (key == "required") {
    if (!value.is_array()) return "must be an array of property names" + got;
    std::set<std::string> seen;
    for (const json& name : value) {
      if (!name.is_string()) return "must contain only strings, got " + std::string(TypeName(name));
      if (!seen.insert(name.get<std::string>()).second) return "lists " + Preview(name) + " twice";
    }
  } else if (key == "enum" || key == "const") {
    if (key == "enum" && !value.is_array()) return "must be an array" + got;
    if (NestingDepth(value, kMaxDepth) > kMaxDepth) return TooDeep();
  } else if (key == "minimum" || key == "maximum" || key == "exclusiveMinimum" ||
             key == "exclusiveMaximum") {
    if (!value.is_number()) return "must be a number" + got;
  } else if (key == "minLength" || key == "maxLength" || key == "minItems" || key == "maxItems") {
    if (!IsIntegral(value) || CompareNumbers(value, json(0)) < 0) {
      return "must be a non-negative integer, got " + Preview(value);
    }
  } else if (key == "title" || key == "description" || key == "$comment" || key == "$schema") {
    if (!value.is_string()) return "must be a string" + got;
  } else if (key == "examples") {
    if (!value.is_array()) return "must be an array" + got;
  } else if (key != "default" && !IsExtensionAnnotation(key) && state.strict) {
    return "unsupported keyword";
  }
  return std::nullopt;
}

std::optional<std::string> CheckSchema(const json& schema, const std::string& pointer, int depth,
                                       const CheckState& state) {
  if (depth > kMaxDepth) return pointer + ": schema " + TooDeep();
  if (schema.is_boolean()) return std::nullopt;
  if (!schema.is_object()) {
    return pointer + ": a schema must be an object or a boolean, got " + TypeName(schema);
  }
  for (const auto& [key, value] : schema.items()) {
    const std::string at = PointerChild(pointer, key);
    std::optional<std::string> nested;
    if (auto problem = CheckKeyword(key, value, at, depth, state, nested))
      return at + ": " + *problem;
    if (nested) return nested;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Validation. The schema has passed CheckSchema, so keyword values have the expected shapes and
// every $ref resolves. `root` is the schema that $ref resolves in.

std::optional<std::string> Validate(const json& root, const json& schema, const json& instance,
                                    const std::string& path, int depth);

std::optional<std::string> ValidateNumber(const json& schema, const json& instance,
                                          const std::string& path) {
  struct Limit {
    const char* keyword;
    bool (*passes)(std::partial_ordering);  // instance compared with the limit
    const char* wording;
  };
  static constexpr Limit kLimits[] = {
      {"minimum", [](std::partial_ordering o) { return o >= 0; }, "is less than minimum"},
      {"exclusiveMinimum", [](std::partial_ordering o) { return o > 0; },
       "is not greater than exclusiveMinimum"},
      {"maximum", [](std::partial_ordering o) { return o <= 0; }, "is greater than maximum"},
      {"exclusiveMaximum", [](std::partial_ordering o) { return o < 0; },
       "is not less than exclusiveMaximum"},
  };
  for (const Limit& limit : kLimits) {
    auto it = schema.find(limit.keyword);
    if (it != schema.end() && !limit.passes(CompareNumbers(instance, *it))) {
      return path + ": " + Preview(instance) + " " + limit.wording + " " + Preview(*it);
    }
  }
  return std::nullopt;
}

// Applies a min/max pair of count keywords, e.g. "string has 5 characters, more than maxLength 4".
std::optional<std::string> CheckCount(const json& schema, const char* min_keyword,
                                      const char* max_keyword, std::uint64_t count,
                                      const std::string& description, const std::string& path) {
  if (auto it = schema.find(min_keyword);
      it != schema.end() && CompareNumbers(json(count), *it) < 0) {
    return path + ": " + description + ", fewer than " + min_keyword + " " + Preview(*it);
  }
  if (auto it = schema.find(max_keyword);
      it != schema.end() && CompareNumbers(json(count), *it) > 0) {
    return path + ": " + description + ", more than " + max_keyword + " " + Preview(*it);
  }
  return std::nullopt;
}

std::optional<std::string> ValidateString(const json& schema, const json& instance,
                                          const std::string& path) {
  const auto& text = instance.get_ref<const std::string&>();
  // Code points = bytes that do not continue a UTF-8 sequence.
  const auto length =
      static_cast<std::uint64_t>(std::count_if(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
      }));
  const std::string description =
      "string has " + std::to_string(length) + (length == 1 ? " character" : " characters");
  return CheckCount(schema, "minLength", "maxLength", length, description, path);
}

std::optional<std::string> ValidateArray(const json& root, const json& schema, const json& instance,
                                         const std::string& path, int depth) {
  const std::string count =
      "array has " + std::to_string(instance.size()) + (instance.size() == 1 ? " item" : " items");
  if (auto error = CheckCount(schema, "minItems", "maxItems", instance.size(), count, path))
    return error;
  auto items = schema.find("items");
  if (items == schema.end()) return std::nullopt;
  const std::size_t checked =
      items->is_array() ? std::min(items->size(), instance.size()) : instance.size();
  for (std::size_t i = 0; i < checked; ++i) {
    const json& item_schema = items->is_array() ? (*items)[i] : *items;
    const std::string item_path = path + "[" + std::to_string(i) + "]";
    if (auto error = Validate(root, item_schema, instance[i], item_path, depth + 1)) return error;
  }
  return std::nullopt;
}

std::optional<std::string> ValidateObject(const json& root, const json& schema,
                                          const json& instance, const std::string& path,
                                          int depth) {
  if (auto required = schema.find("required"); required != schema.end()) {
    for (const json& name : *required) {
      if (!instance.contains(name.get<std::string>())) {
        return path + ": missing required property '" + Printable(name.get<std::string>()) + "'";
      }
    }
  }
  static const json kNoProperties = json::object();
  auto properties_it = schema.find("properties");
  const json& properties = properties_it != schema.end() ? *properties_it : kNoProperties;
  for (const auto& [name, property_schema] : properties.items()) {
    auto value = instance.find(name);
    if (value == instance.end()) continue;
    if (auto error = Validate(root, property_schema, *value, ChildPath(path, name), depth + 1))
      return error;
  }
  auto additional = schema.find("additionalProperties");
  if (additional == schema.end()) return std::nullopt;
  for (const auto& [name, value] : instance.items()) {
    if (properties.contains(name)) continue;
    if (additional->is_boolean() && !additional->get<bool>()) {
      return path + ": unexpected property '" + Printable(name) + "'";
    }
    if (auto error = Validate(root, *additional, value, ChildPath(path, name), depth + 1))
      return error;
  }
  return std::nullopt;
}

std::optional<std::string> Validate(const json& root, const json& schema, const json& instance,
                                    const std::string& path, int depth) {
  if (depth > kMaxDepth) return path + ": schema " + TooDeep();
  if (schema.is_boolean()) {
    if (schema.get<bool>()) return std::nullopt;
    return path + ": no value is allowed here";
  }
  // 2020-12: $ref applies alongside its sibling keywords (draft 7 ignored the siblings).
  // Following one counts as a level, so no chain of references can recurse without bound.
  if (auto ref = schema.find("$ref"); ref != schema.end()) {
    const json* target = ResolveRef(root, ref->get<std::string>());
    if (target == nullptr) return path + ": schema is invalid: unresolvable $ref " + Preview(*ref);
    if (auto error = Validate(root, *target, instance, path, depth + 1)) return error;
  }
  if (auto type = schema.find("type"); type != schema.end()) {
    const json types = type->is_array() ? *type : json::array({*type});
    bool matched = std::any_of(types.begin(), types.end(), [&](const json& name) {
      return TypeMatches(name.get<std::string>(), instance);
    });
    if (!matched) {
      std::string expected;
      for (const json& name : types)
        expected += (expected.empty() ? "" : " or ") + name.get<std::string>();
      return path + ": expected " + expected + ", got " + TypeName(instance);
    }
  }
  if (auto constant = schema.find("const");
      constant != schema.end() && !JsonEqual(instance, *constant, 0)) {
    return path + ": " + Preview(instance) + " is not equal to " + Preview(*constant);
  }
  if (auto options = schema.find("enum"); options != schema.end()) {
    bool found = std::any_of(options->begin(), options->end(),
                             [&](const json& option) { return JsonEqual(instance, option, 0); });
    if (!found) return path + ": " + Preview(instance) + " is not one of " + Preview(*options);
  }
  if (instance.is_number()) return ValidateNumber(schema, instance, path);
  if (instance.is_string()) return ValidateString(schema, instance, path);
  if (instance.is_array()) return ValidateArray(root, schema, instance, path, depth);
  if (instance.is_object()) return ValidateObject(root, schema, instance, path, depth);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> ValidateSchema(const json& schema, const json& instance,
                                          const std::string& root_name) {
  try {
    if (auto problem = CheckSchema(schema, "#", 0, CheckState{schema, /*strict=*/false})) {
      return root_name + ": schema is invalid: " + *problem;
    }
    return Validate(schema, schema, instance, root_name, 0);
  } catch (const std::exception& e) {
    // Not expected once the schema has been checked; reported rather than thrown so a tool call
    // fails cleanly instead of taking down the request.
    return root_name + ": could not validate: " + e.what();
  } catch (...) {
    return root_name + ": could not validate";
  }
}

std::optional<std::string> ValidateCheckedSchema(const json& schema, const json& instance,
                                                 const std::string& root_name) {
  try {
    return Validate(schema, schema, instance, root_name, 0);
  } catch (const std::exception& e) {
    return root_name + ": could not validate: " + e.what();
  } catch (...) {
    return root_name + ": could not validate";
  }
}

std::optional<std::string> CheckSchemaWellFormed(const json& schema) {
  try {
    return CheckSchema(schema, "#", 0, CheckState{schema, /*strict=*/true});
  } catch (const std::exception& e) {
    return std::string("schema could not be checked: ") + e.what();
  } catch (...) {
    return std::string("schema could not be checked");
  }
}

}  // namespace keel
