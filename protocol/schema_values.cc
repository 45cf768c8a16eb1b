#include "protocol/schema_values.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>
#include <utility>
#include <variant>

namespace keel::schema {

using nlohmann::json;

namespace {

// Values quoted in messages are cut short so one huge argument cannot flood a log line.
constexpr int kPreviewDepth = 8;
constexpr std::size_t kPreviewChars = 120;

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

bool JsonEqualAt(const json& a, const json& b, int depth) {
  if (depth > kMaxSchemaDepth) return false;
  if (a.is_number() && b.is_number()) return CompareNumbers(a, b) == 0;
  if (a.type() != b.type()) return false;
  if (!a.is_structured()) return a == b;
  if (a.size() != b.size()) return false;
  for (auto it = a.begin(); it != a.end(); ++it) {
    auto other = a.is_array() ? b.begin() + (it - a.begin()) : b.find(it.key());
    if (other == b.end() || !JsonEqualAt(*it, *other, depth + 1)) return false;
  }
  return true;
}

// Numbers by value: an integral double within 64-bit range is written as the integer it equals.
void AppendCanonicalNumber(const json& value, std::string& out) {
  if (value.is_number_float()) {
    const double d = value.get<double>();
    if (IsIntegral(value) && d >= -std::ldexp(1.0, 63) && d < std::ldexp(1.0, 63)) {
      out += std::to_string(static_cast<std::int64_t>(d));
      return;
    }
    if (IsIntegral(value) && d >= 0 && d < std::ldexp(1.0, 64)) {
      out += std::to_string(static_cast<std::uint64_t>(d));
      return;
    }
  }
  out += Dump(value);
}

void AppendCanonical(const json& value, int depth, std::string& out) {
  if (depth > kMaxSchemaDepth) {
    // Unequal to everything else, as JsonEqual says of values this deep.
    char address[32];
    std::snprintf(address, sizeof address, "<deep %p>", static_cast<const void*>(&value));
    out += address;
    return;
  }
  if (value.is_number()) return AppendCanonicalNumber(value, out);
  if (!value.is_structured()) {
    out += Dump(value);
    return;
  }
  out += value.is_array() ? '[' : '{';
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it != value.begin()) out += ',';
    if (value.is_object()) out += Dump(json(it.key())) + ':';
    AppendCanonical(*it, depth + 1, out);
  }
  out += value.is_array() ? ']' : '}';
}

}  // namespace

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

std::string TooDeep() { return "nests deeper than " + std::to_string(kMaxSchemaDepth) + " levels"; }

int NestingDepth(const json& value, int limit) {
  if (!value.is_structured()) return 0;
  if (limit <= 0) return 1;
  int deepest = 0;
  for (const json& child : value) deepest = std::max(deepest, NestingDepth(child, limit - 1));
  return deepest + 1;
}

std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string Printable(const std::string& text) {
  std::string quoted = Dump(json(text));
  return quoted.substr(1, quoted.size() - 2);
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

bool JsonEqual(const json& a, const json& b) { return JsonEqualAt(a, b, 0); }

std::string CanonicalText(const json& value) {
  std::string out;
  AppendCanonical(value, 0, out);
  return out;
}

bool IsIntegral(const json& value) {
  if (value.is_number_integer()) return true;
  if (!value.is_number_float()) return false;
  const double d = value.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

bool TypeMatches(std::string_view type_name, const json& value) {
  if (type_name == "integer") return IsIntegral(value);
  if (type_name == "number") return value.is_number();
  return type_name == TypeName(value);
}

bool IsMultipleOf(const json& value, const json& divisor) {
  if (value.is_number_integer() && divisor.is_number_integer()) {
    // Both exact; the divisor is positive. |value| as uint64 avoids overflow at INT64_MIN.
    const std::uint64_t d = divisor.get<std::uint64_t>();
    if (value.is_number_unsigned()) return value.get<std::uint64_t>() % d == 0;
    const std::int64_t v = value.get<std::int64_t>();
    const std::uint64_t magnitude =
        v < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
    return magnitude % d == 0;
  }
  const double quotient = value.get<double>() / divisor.get<double>();
  if (!std::isfinite(quotient)) return false;
  const double whole = std::round(quotient);
  return std::fabs(quotient - whole) <= 1e-9 * std::max(1.0, std::fabs(whole));
}

std::uint64_t CodePoints(const std::string& text) {
  return static_cast<std::uint64_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

}  // namespace keel::schema
