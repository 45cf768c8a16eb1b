// fuzz_output: the output side — bytes keel did not write, as a command prints them or as a
// stored row holds them, through keel's decoding and re-encoding (70,000 levels
// of command output once crashed keel in the serializer).
//
// Input: the bytes a command wrote on stdout (also read as its fd-3 progress lines, as a
// lookup's answer, and as the text of a stored ledger, task or policy row).
// Code: CommandResultOf under output text, auto and json (with and without an outputSchema,
// whole and cut at the cap, exit 0, 1 and 75), LookupResultOf, ProgressLineOf, then
// BoundedResult (what every tool result passes) and the encoded response line;
// ParseBoundedJson (how the ledger and the task store read a stored result) and the dump of
// what it accepted; JsonTooDeep on a value nlohmann built.
// Checked, besides "no crash, leak, UB, stack overflow or hang":
//  1. every result is an object within kMaxJsonDepth that encodes as one line of UTF-8 JSON
//     (EncodeResult) which keel's own codec reads back;
//  2. a stored text that ParseBoundedJson accepts nests at most kMaxJsonDepth levels, and
//     dumps and reads back as the same value; one it refuses for depth nests deeper;
//  3. JsonTooDeep agrees with the depth of the text nlohmann parsed it from.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "protocol/bounded_json.h"
#include "protocol/json_parser.h"
#include "protocol/json_rpc.h"
#include "protocol/schema_validator.h"
#include "protocol/utf8.h"
#include "server/catalog/tool.h"
#include "server/tools/command_result.h"

namespace keel {
namespace {

// Check 1: what keel would send for `result`.
void CheckSent(const Json& result) {
  FUZZ_CHECK(result.is_object());
  FUZZ_CHECK(!JsonTooDeep(result));
  const std::string line = EncodeResult(Json(7), result);
  FUZZ_CHECK(line.find('\n') == std::string::npos);
  FUZZ_CHECK(IsValidUtf8(line));
  // The response wraps the result two levels deeper than the bound: read it back unbounded.
  Json back;
  FUZZ_CHECK(ParseJson(line, kMaxJsonDepth + 2, back));
  FUZZ_CHECK(back.at("id") == 7 && back.at("result").is_object());
}

ProcessResult Exited(std::string_view out, int status, bool truncated) {
  ProcessResult run;
  run.end = ProcessResult::End::kExited;
  run.exit_code = status;
  run.stdout_truncated = truncated;
  run.stdout_data = std::string(out);
  return run;
}

void CheckCommand(std::string_view input) {
  static const Json schema = [] {
    Json s = Json::parse(R"({"type":"object","properties":{"op":{"type":"string"}}})");
    FUZZ_CHECK(!CheckSchemaWellFormed(s));
    return s;
  }();
  CommandSpec spec;
  const ProcessResult run = Exited(input, 0, false);
  for (const CommandOutput output :
       {CommandOutput::kText, CommandOutput::kAuto, CommandOutput::kJson}) {
    spec.output = output;
    CheckSent(BoundedResult(CommandResultOf(run, spec, nullptr, "t"), "t"));
    CheckSent(BoundedResult(CommandResultOf(Exited(input, 0, true), spec, nullptr, "t"), "t"));
  }
  CheckSent(BoundedResult(CommandResultOf(run, spec, schema, "t"), "t"));
  spec.output = CommandOutput::kAuto;
  for (const int status : {1, 75}) {
    CheckSent(
        BoundedResult(CommandResultOf(Exited(input, status, false), spec, nullptr, "t"), "t"));
  }

  std::string why;
  const Reconciled found = LookupResultOf(run, nullptr, &why);
  if (found.outcome == Reconciled::Outcome::kHappened) {
    CheckSent(BoundedResult(found.result, "t"));
  } else {
    FUZZ_CHECK(found.result.is_null());
    FUZZ_CHECK(found.outcome == Reconciled::Outcome::kDidNotHappen || !why.empty());
  }

  // fd 3: each line on its own.
  size_t start = 0;
  while (start <= input.size()) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    if (const auto progress = ProgressLineOf(input.substr(start, end - start))) {
      FUZZ_CHECK(IsValidUtf8(progress->message));
    }
    start = end + 1;
  }
}

// Check 2: a stored result, read as the ledger and the task store read it, then written back.
void CheckStored(std::string_view input) {
  const BoundedJson stored = ParseBoundedJson(input);
  if (stored.problem == JsonProblem::kTooDeep) {
    FUZZ_CHECK(JsonNestingDepth(input) > kMaxJsonDepth);
    FUZZ_CHECK(stored.value.is_null());
    return;
  }
  if (!stored.ok()) {
    FUZZ_CHECK(stored.value.is_null());
    return;
  }
  FUZZ_CHECK(!JsonTooDeep(stored.value));
  FUZZ_CHECK(fuzz::Depth(stored.value, kMaxJsonDepth) <= kMaxJsonDepth);
  const std::string text = DumpCompact(stored.value);  // what the ledger stores
  FUZZ_CHECK(IsValidUtf8(text));
  const BoundedJson again = ParseBoundedJson(text);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(fuzz::Same(again.value, stored.value, /*any_integer_kind=*/true));  // -0 is 0
}

// Check 3: JsonTooDeep on a value of any depth (nlohmann parses without recursion, and
// destroys iteratively). JsonNestingDepth is exact for JSON text without a NUL byte.
void CheckTooDeep(std::string_view input) {
  if (input.find('\0') != std::string_view::npos) return;
  const Json value = Json::parse(input, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return;
  FUZZ_CHECK(JsonTooDeep(value) == (JsonNestingDepth(input) > kMaxJsonDepth));
}

}  // namespace
}  // namespace keel

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace keel;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  CheckCommand(input);
  CheckStored(input);
  CheckTooDeep(input);
  return 0;
}
