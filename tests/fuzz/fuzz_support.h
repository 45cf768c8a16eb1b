// Helpers shared by the fuzz targets (tests/fuzz/README.md): a check that works whatever
// NDEBUG says, exact comparisons of JSON values, and the text rewrite that lets nlohmann
// judge ParseJson (also used by tests/protocol/json_parser_test.cc). Header-only; no state.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

// A property of keel's code that the target asserts. A failure prints the condition and
// aborts, which libFuzzer reports as a crash and saves the input for.
#define FUZZ_CHECK(condition)                                                                 \
  do {                                                                                        \
    if (!(condition)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (0)

namespace keel::fuzz {

// Nesting depth of `value` (a scalar is 0), counted no further than `limit` + 1 so that a
// hostile value cannot make the count itself recurse without bound.
inline int Depth(const nlohmann::json& value, int limit) {
  if (!value.is_structured()) return 0;
  if (limit <= 0) return 1;
  int deepest = 0;
  for (const auto& child : value) {
    const int d = Depth(child, limit - 1);
    if (d > deepest) deepest = d;
  }
  return deepest + 1;
}

// Same type and same value: unlike ==, 1 and 1.0 differ, and so do 1 stored as unsigned
// and 1 stored as signed unless `any_integer_kind` (JSON text cannot tell those two apart
// once written: -0 is read back as 0).
// Recurses: call it only on values known to nest a bounded number of levels.
inline bool Same(const nlohmann::json& a, const nlohmann::json& b, bool any_integer_kind = false) {
  if (any_integer_kind && a.is_number_integer() && b.is_number_integer()) return a == b;
  if (a.type() != b.type()) return false;
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!Same(a[i], b[i], any_integer_kind)) return false;
    }
    return true;
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto it = a.begin(); it != a.end(); ++it) {
      const auto other = b.find(it.key());
      if (other == b.end() || !Same(*it, *other, any_integer_kind)) return false;
    }
    return true;
  }
  return a == b;
}

// `text` with each lone surrogate escape inside a string — \ud800-\udbff not followed by an
// escaped \udc00-\udfff, or \udc00-\udfff on its own — replaced by \ufffd: what ParseJson
// reads it as (json_parser.h's deliberate difference), in a form nlohmann reads the same way.
// Scans as a JSON lexer does, so an escaped backslash is not taken for an escape; text
// outside strings is copied unchanged.
inline std::string WithLoneSurrogatesReplaced(std::string_view text) {
  // The value of the \uXXXX escape at `at`, or -1.
  auto escape_at = [text](size_t at) {
    if (at + 6 > text.size() || text[at] != '\\' || text[at + 1] != 'u') return -1;
    int value = 0;
    for (size_t i = at + 2; i < at + 6; ++i) {
      const char c = text[i];
      const int digit = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
      if (digit < 0) return -1;
      value = value * 16 + digit;
    }
    return value;
  };
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == '"') in_string = !in_string;
    if (!in_string || c != '\\') {
      out += c;
      ++i;
      continue;
    }
    const int code = escape_at(i);
    if (code < 0xD800 || code > 0xDFFF) {  // any other escape: the backslash and its letter
      out.append(text.substr(i, 2));
      i += 2;
      continue;
    }
    const int low = code <= 0xDBFF ? escape_at(i + 6) : -1;
    if (low >= 0xDC00 && low <= 0xDFFF) {
      out.append(text.substr(i, 12));  // a pair
      i += 12;
    } else {
      out += "\\ufffd";
      i += 6;
    }
  }
  return out;
}

}  // namespace keel::fuzz
