// fuzz_policy: a --policy file's text through ParsePolicy (pure, no I/O; what start-up,
// SIGHUP and `keel policy check` run after reading the file).
//
// Input: the policy's text (docs/policy.md).
// Checked, besides "no crash, leak, UB, stack overflow or hang":
//  1. exactly one of a policy and a non-empty list of problems (policy_json.h);
//  2. a parsed policy holds policy.h's invariants: a version, and no cross-field problem
//     (ValidatePolicy) in the defaults or any tool;
//  3. ParsePolicy of PolicyToJson(policy).dump() gives back an equal policy (policy_json.h).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "server/policy/policy_json.h"
#include "server/policy/policy_validation.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace keel;
  const PolicyParseResult parsed =
      ParsePolicy(std::string_view(reinterpret_cast<const char*>(data), size));
  FUZZ_CHECK(parsed.ok() == parsed.problems.empty());
  if (!parsed.ok()) return 0;

  const Policy& policy = *parsed.policy;
  FUZZ_CHECK(!policy.version.empty());
  FUZZ_CHECK(ValidatePolicy(policy).empty());
  const std::string shown = PolicyToJson(policy).dump();
  const PolicyParseResult again = ParsePolicy(shown);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(PolicyToJson(*again.policy).dump() == shown);
  return 0;
}
