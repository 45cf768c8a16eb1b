// From a finished command to keel's answer (RET-1, PRG-1, IDEM-5): each way a child can end
// maps to its failure class (the retry executor's and breaker's input, failure_classify.h),
// stdout becomes text or validated structuredContent, output past the cap is marked, and a
// lookup's answer becomes happened / did not happen / unknown.
#include "server/tools/command_result.h"

#include <catch2/catch.hpp>

#include "protocol/json_rpc.h"
#include "protocol/schema_validator.h"
#include "server/policy/failure_classify.h"

namespace keel::command_result_test {
namespace {

ProcessResult Exited(int code, std::string out = std::string()) {
  ProcessResult run;
  run.end = ProcessResult::End::kExited;
  run.exit_code = code;
  run.stdout_data = std::move(out);
  return run;
}

ProcessResult Ended(ProcessResult::End end, int signal = 0) {
  ProcessResult run;
  run.end = end;
  run.signal = signal;
  run.spawn_error = end == ProcessResult::End::kSpawnFailed ? "No such file or directory" : "";
  return run;
}

FailureClass ClassOf(const Json& result) {
  const auto failure = ClassifyResult(result);
  REQUIRE(failure.has_value());
  return failure->failure;
}

const Json& ErrorOf(const Json& result) { return result.at("structuredContent").at("error"); }

std::string TextOf(const Json& result) {
  return result.at("content").at(0).at("text").get<std::string>();
}

TEST_CASE("each exit status maps to its documented failure class", "[command]") {
  const CommandSpec spec;
  CHECK_FALSE(ClassifyResult(CommandResultOf(Exited(0, "ok"), spec, nullptr, "t")));
  const Json tempfail = CommandResultOf(Exited(75), spec, nullptr, "t");
  CHECK(ClassOf(tempfail) == FailureClass::kRejectedTransient);
  CHECK(ErrorOf(tempfail).at("type") == "command_tempfail");
  CHECK(ErrorOf(tempfail).at("exit_code") == 75);
  const Json unavailable = CommandResultOf(Exited(69), spec, nullptr, "t");
  CHECK(ClassOf(unavailable) == FailureClass::kNotSent);
  CHECK(ErrorOf(unavailable).at("type") == "command_unavailable");
  const Json failed = CommandResultOf(Exited(1, "job not found"), spec, nullptr, "t");
  CHECK(ClassOf(failed) == FailureClass::kRejectedPermanent);
  CHECK(ErrorOf(failed).at("type") == "command_failed");
  CHECK_THAT(TextOf(failed),
             Catch::Contains("exited with status 1") && Catch::Contains("job not found"));
}

TEST_CASE("a catalog exit-code mapping decides the class", "[command]") {
  CommandSpec spec;
  spec.exit_codes[3] = FailureClass::kAmbiguous;
  const Json result = CommandResultOf(Exited(3), spec, nullptr, "t");
  CHECK(ClassOf(result) == FailureClass::kAmbiguous);
  CHECK(ErrorOf(result).at("failure_class") == "ambiguous");
}

TEST_CASE("a signal, a cancel or a timeout is ambiguous and a failed start is not", "[command]") {
  const CommandSpec spec;
  const Json killed = CommandResultOf(Ended(ProcessResult::End::kSignaled, 9), spec, nullptr, "t");
  CHECK(ClassOf(killed) == FailureClass::kAmbiguous);
  CHECK(ErrorOf(killed).at("type") == "command_killed");
  CHECK(ErrorOf(killed).at("signal") == 9);
  const Json timed_out = CommandResultOf(Ended(ProcessResult::End::kTimedOut), spec, nullptr, "t");
  CHECK(ClassOf(timed_out) == FailureClass::kAmbiguous);
  CHECK(ErrorOf(timed_out).at("type") == "attempt_timeout");
  const Json cancelled = CommandResultOf(Ended(ProcessResult::End::kCancelled), spec, nullptr, "t");
  CHECK(ClassOf(cancelled) == FailureClass::kAmbiguous);
  const Json spawn = CommandResultOf(Ended(ProcessResult::End::kSpawnFailed), spec, nullptr, "t");
  CHECK(ClassOf(spawn) == FailureClass::kRejectedPermanent);
  CHECK(ErrorOf(spawn).at("type") == "command_not_started");
  CHECK(ErrorOf(spawn).at("effect") == "none");
  CHECK_THAT(TextOf(spawn), Catch::Contains("No such file or directory"));
}

TEST_CASE("a JSON error on stdout carries the backend's status and retry-after", "[command]") {
  const CommandSpec spec;
  const Json throttled = CommandResultOf(
      Exited(1, R"({"error":{"status":429,"retry_after_ms":1200,"message":"slow down"}})"), spec,
      nullptr, "t");
  CHECK(ClassOf(throttled) == FailureClass::kRejectedTransient);
  CHECK(ErrorOf(throttled).at("type") == "backend_429");
  CHECK(ClassifyResult(throttled)->retry_after_ms == 1200);
  CHECK(TextOf(throttled) == "slow down");
  // An error object is a failure even with exit 0.
  const Json not_found =
      CommandResultOf(Exited(0, R"({"error":{"status":404}})"), spec, nullptr, "t");
  CHECK(not_found.value("isError", false));
  CHECK(ClassOf(not_found) == FailureClass::kRejectedPermanent);
  const Json gateway =
      CommandResultOf(Exited(1, R"({"error":{"status":504}})"), spec, nullptr, "t");
  CHECK(ClassOf(gateway) == FailureClass::kAmbiguous);
  const Json own_class = CommandResultOf(
      Exited(1, R"({"error":{"type":"quota","failure_class":"not_sent"}})"), spec, nullptr, "t");
  CHECK(ClassOf(own_class) == FailureClass::kNotSent);
  CHECK(ErrorOf(own_class).at("type") == "quota");
  // A type keel does not know, or a permanent status, yields to a non-permanent exit status.
  CHECK(ClassOf(CommandResultOf(Exited(75, R"({"error":{"type":"custom"}})"), spec, nullptr,
                                "t")) == FailureClass::kRejectedTransient);
  CHECK(ClassOf(CommandResultOf(Exited(75, R"({"error":{"status":500}})"), spec, nullptr, "t")) ==
        FailureClass::kRejectedTransient);
  CHECK(ClassOf(CommandResultOf(Exited(1, R"({"error":{"type":"custom"}})"), spec, nullptr, "t")) ==
        FailureClass::kRejectedPermanent);
  // Without a status the exit status decides.
  const Json plain =
      CommandResultOf(Exited(75, R"({"error":{"message":"busy"}})"), spec, nullptr, "t");
  CHECK(ClassOf(plain) == FailureClass::kRejectedTransient);
}

// Spotted while writing fuzz_output (tests/fuzz/regressions/output/error_*_not_a_string.json,
// on which it aborts without the fix): these threw nlohmann's type_error out of
// CommandResultOf.
TEST_CASE("a JSON error on stdout whose type or message is not a string is still a failure",
          "[command]") {
  const CommandSpec spec;
  const Json typed =
      CommandResultOf(Exited(1, R"({"error":{"type":5,"status":503}})"), spec, nullptr, "t");
  CHECK(ErrorOf(typed).at("type") == "backend_503");
  CHECK(ClassOf(typed) == FailureClass::kRejectedTransient);
  CHECK_THAT(TextOf(typed), Catch::Contains("reported an error (backend_503)"));
  const Json untyped =
      CommandResultOf(Exited(0, R"({"error":{"type":["x"]}})"), spec, nullptr, "t");
  CHECK(ErrorOf(untyped).at("type") == "command_error");
  const Json message =
      CommandResultOf(Exited(1, R"({"error":{"message":{"a":1}}})"), spec, nullptr, "t");
  CHECK(ErrorOf(message).at("type") == "command_error");
  CHECK_THAT(TextOf(message), Catch::Contains("reported an error (command_error)"));
}

TEST_CASE("stdout is text, or a JSON object that becomes structuredContent", "[command]") {
  CommandSpec spec;
  const Json text = CommandResultOf(Exited(0, "restarted\n"), spec, nullptr, "t");
  CHECK(TextOf(text) == "restarted");
  CHECK_FALSE(text.contains("structuredContent"));
  const Json object = CommandResultOf(Exited(0, "{\"op\":\"op_1\"}\n"), spec, nullptr, "t");
  CHECK(object.at("structuredContent") == Json{{"op", "op_1"}});
  CHECK(TextOf(object) == "{\"op\":\"op_1\"}");
  spec.output = CommandOutput::kText;
  CHECK_FALSE(
      CommandResultOf(Exited(0, "{\"op\":1}"), spec, nullptr, "t").contains("structuredContent"));
  spec.output = CommandOutput::kJson;
  const Json not_json = CommandResultOf(Exited(0, "[1,2]"), spec, nullptr, "t");
  CHECK(ErrorOf(not_json).at("type") == "output_invalid");
  CHECK(ClassOf(not_json) == FailureClass::kRejectedPermanent);
}

TEST_CASE("structured output is validated against the outputSchema", "[command]") {
  const CommandSpec spec;
  const Json schema =
      Json::parse(R"({"type":"object","properties":{"op":{"type":"string"}},"required":["op"]})");
  REQUIRE_FALSE(CheckSchemaWellFormed(schema));
  CHECK(CommandResultOf(Exited(0, R"({"op":"x"})"), spec, schema, "t").at("structuredContent") ==
        Json{{"op", "x"}});
  const Json wrong = CommandResultOf(Exited(0, R"({"op":1})"), spec, schema, "t");
  CHECK(ErrorOf(wrong).at("type") == "output_invalid");
  CHECK_THAT(TextOf(wrong), Catch::Contains("structuredContent.op"));
  const Json text = CommandResultOf(Exited(0, "done"), spec, schema, "t");
  CHECK(ErrorOf(text).at("type") == "output_invalid");
}

TEST_CASE("output past the cap ends with the marker and is never parsed", "[command]") {
  CommandSpec spec;
  spec.max_output_bytes = 1024;
  ProcessResult run = Exited(0, std::string(1024, 'x'));
  run.stdout_truncated = true;
  const Json result = CommandResultOf(run, spec, nullptr, "t");
  CHECK_THAT(TextOf(result), Catch::EndsWith(TruncationMarker(1024)));
  CHECK_THAT(TruncationMarker(1024), Catch::StartsWith("[keel: output cut at 1024 bytes"));
  ProcessResult json_run = Exited(0, "{\"a\":\"" + std::string(1000, 'y'));
  json_run.stdout_truncated = true;
  spec.output = CommandOutput::kJson;
  CHECK(ErrorOf(CommandResultOf(json_run, spec, nullptr, "t")).at("type") == "output_invalid");
}

// {"a":[[[...]]]} with `depth` levels in all, as the command that once crashed keel printed it
// (conformance/command_output_too_deep.txn).
std::string DeepOutput(int depth) {
  return "{\"a\":" + std::string(depth - 1, '[') + std::string(depth - 1, ']') + "}\n";
}

TEST_CASE(
    "command output nested deeper than 128 levels is a tool error naming the limit, "
    "never parsed",
    "[command]") {
  CommandSpec spec;
  spec.output = CommandOutput::kJson;
  const Json result = CommandResultOf(Exited(0, DeepOutput(70000)), spec, nullptr, "deep");
  CHECK(result.at("isError") == true);
  CHECK(ErrorOf(result).at("type") == "output_invalid");
  CHECK(ClassOf(result) == FailureClass::kRejectedPermanent);
  CHECK_THAT(TextOf(result), Catch::Contains("nested deeper than 128 levels"));
  CHECK(DumpCompact(result).size() < 4000);  // encodes, with the output's start only

  // At the limit it is still structured content.
  const Json at_limit = CommandResultOf(Exited(0, DeepOutput(128)), spec, nullptr, "deep");
  CHECK(at_limit.at("structuredContent").contains("a"));
}

TEST_CASE("deep command output under output auto is text, and a failing command's stays text",
          "[command]") {
  const CommandSpec spec;  // output auto
  const std::string deep = DeepOutput(70000);
  const Json text = CommandResultOf(Exited(0, deep), spec, nullptr, "deep");
  CHECK_FALSE(text.contains("structuredContent"));
  CHECK(TextOf(text).size() == deep.size() - 1);  // without the trailing newline
  const Json failed = CommandResultOf(Exited(1, deep), spec, nullptr, "deep");
  CHECK(ErrorOf(failed).at("type") == "command_failed");
  CHECK_FALSE(DumpCompact(failed).empty());
}

TEST_CASE("a lookup whose output nests deeper than 128 levels cannot tell", "[command]") {
  std::string why;
  const std::string deep =
      R"({"happened":true,"result":)" + std::string(70000, '[') + std::string(70000, ']') + "}";
  CHECK(LookupResultOf(Exited(0, deep), nullptr, &why).outcome == Reconciled::Outcome::kUnknown);
  CHECK_THAT(why, Catch::Contains("nested deeper than 128 levels"));
}

TEST_CASE("a progress line is a number or a progress object, and a too deep one is ignored",
          "[command]") {
  CHECK(ProgressLineOf("3")->progress == 3);
  const auto full = ProgressLineOf(R"({"progress":1,"total":4,"message":"copying"})");
  REQUIRE(full);
  CHECK(full->total == 4);
  CHECK(full->message == "copying");
  CHECK_FALSE(ProgressLineOf(R"({"done":1})"));
  CHECK_FALSE(ProgressLineOf("half"));
  CHECK_FALSE(ProgressLineOf(R"({"progress":1,"x":)" + std::string(70000, '[') +
                             std::string(70000, ']') + "}"));
}

TEST_CASE("a lookup answers happened, did not happen, or cannot tell", "[command]") {
  std::string why;
  Reconciled happened =
      LookupResultOf(Exited(0, R"({"happened":true,"result":{"op":"op_7"}})"), nullptr, &why);
  CHECK(happened.outcome == Reconciled::Outcome::kHappened);
  CHECK(happened.result.at("structuredContent") == Json{{"op", "op_7"}});
  CHECK(LookupResultOf(Exited(0, R"({"happened":true,"result":"done"})"), nullptr, &why)
            .result.at("content")
            .at(0)
            .at("text")
            .get<std::string>() == "done");
  CHECK(LookupResultOf(Exited(0, R"({"happened":true})"), nullptr, &why).outcome ==
        Reconciled::Outcome::kHappened);
  CHECK(LookupResultOf(Exited(0, R"({"happened":false})"), nullptr, &why).outcome ==
        Reconciled::Outcome::kDidNotHappen);
  CHECK(LookupResultOf(Exited(0, R"({"found":true})"), nullptr, &why).outcome ==
        Reconciled::Outcome::kUnknown);
  CHECK_THAT(why, Catch::Contains("happened"));
  CHECK(LookupResultOf(Exited(1, R"({"happened":false})"), nullptr, &why).outcome ==
        Reconciled::Outcome::kUnknown);
  CHECK(why == "it exited with status 1");
  CHECK(LookupResultOf(Ended(ProcessResult::End::kTimedOut), nullptr, &why).outcome ==
        Reconciled::Outcome::kUnknown);
}

}  // namespace
}  // namespace keel::command_result_test
