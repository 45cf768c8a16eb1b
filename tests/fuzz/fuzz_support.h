// Helpers shared by the fuzz targets (tests/fuzz/README.md): a check that works whatever
// NDEBUG says, and exact comparisons of JSON values. Header-only; no state.
#pragma once

#include <cstdio>
#include <cstdlib>

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

}  // namespace keel::fuzz
