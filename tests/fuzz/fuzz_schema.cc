// fuzz_schema: the schema validator, as a tool registration and a tools/call use it:
// CheckSchemaWellFormed on a schema, then ValidateSchema (and ValidateCheckedSchema) of an
// instance against it.
//
// Input: the schema's JSON text, "\n", the instance's JSON text (everything after the first
// newline). Inputs where either part is not JSON are skipped.
// Checked, besides "no crash, leak, UB, stack overflow or hang":
//  1. neither function ever reaches its catch-all ("could not validate", "could not be
//     checked"): those are for bugs;
//  2. for a well-formed schema, ValidateCheckedSchema gives ValidateSchema's answer, and that
//     answer never calls the schema invalid;
//  3. a value equals itself: {"const": v} and {"enum": [v]} accept v (v no deeper than the
//     validator's 64 levels).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "protocol/schema_validator.h"

namespace {

using nlohmann::json;

constexpr int kMaxSchemaDepth = 64;  // protocol/schema_values.h's kMaxSchemaDepth

// Prefixes only: the rest of a message quotes the input, which may say anything.
bool StartsWith(const std::optional<std::string>& message, std::string_view prefix) {
  return message && message->rfind(prefix, 0) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nl = input.find('\n');
  if (nl == std::string_view::npos) return 0;
  // nlohmann parses without recursion and without a depth limit, as the catalog loader does.
  const json schema = json::parse(input.substr(0, nl), nullptr, /*allow_exceptions=*/false);
  const json instance = json::parse(input.substr(nl + 1), nullptr, /*allow_exceptions=*/false);
  if (schema.is_discarded() || instance.is_discarded()) return 0;

  const std::optional<std::string> shape = keel::CheckSchemaWellFormed(schema);
  FUZZ_CHECK(!StartsWith(shape, "schema could not be checked"));
  const std::optional<std::string> verdict = keel::ValidateSchema(schema, instance);
  FUZZ_CHECK(!StartsWith(verdict, "arguments: could not validate"));
  if (!shape) {
    FUZZ_CHECK(!StartsWith(verdict, "arguments: schema is invalid"));
    FUZZ_CHECK(keel::ValidateCheckedSchema(schema, instance) == verdict);
  }

  if (keel::fuzz::Depth(instance, kMaxSchemaDepth) <= kMaxSchemaDepth - 1) {
    const json by_const = {{"const", instance}};
    FUZZ_CHECK(!keel::CheckSchemaWellFormed(by_const));
    FUZZ_CHECK(!keel::ValidateSchema(by_const, instance));
    const json by_enum = {{"enum", json::array({instance})}};
    FUZZ_CHECK(!keel::CheckSchemaWellFormed(by_enum));
    FUZZ_CHECK(!keel::ValidateSchema(by_enum, instance));
  }
  return 0;
}
