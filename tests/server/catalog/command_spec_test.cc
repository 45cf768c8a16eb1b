// The catalog's `run` field: the argv template language, and every rule
// ReadRunSpec enforces, each reported with the tool and the field's path.
#include "server/catalog/command_spec.h"

#include <catch2/catch.hpp>

#include "server/catalog/catalog.h"

namespace keel::command_spec_test {
namespace {

// A one-tool catalog with `run` (and `effect`) as given.
CatalogLoad LoadWithRun(const std::string& run, const std::string& effect = "read",
                        const std::string& extra = "") {
  return LoadCatalog(R"({"tools":[{"name":"deploy","description":"d","effect":")" + effect +
                     R"(","inputSchema":{"type":"object","properties":{"job":{"type":"string"},
                     "count":{"type":"integer"},"note":{"type":"string"},
                     "idempotencyKey":{"type":"string"}},"required":["job","count"]},)" +
                     extra + R"("run":)" + run + "}]}");
}

std::string AllProblems(const CatalogLoad& load) {
  std::string all;
  for (const std::string& p : load.problems) all += p + "\n";
  return all;
}

TEST_CASE("a run entry with only a command gets the documented defaults", "[command]") {
  const CatalogLoad load = LoadWithRun(R"({"command":["./deploy","{job}"]})");
  REQUIRE(load.ok());
  const CommandSpec& spec = *load.catalog->tools[0].run;
  CHECK(spec.argv == std::vector<std::string>{"./deploy", "{job}"});
  CHECK(spec.cwd.empty());
  CHECK(spec.env_pass == DefaultPassedEnvironment());
  CHECK(spec.env_set.empty());
  CHECK(spec.output == CommandOutput::kAuto);
  CHECK(spec.kill_grace_ms == 2000);
  CHECK(spec.max_output_bytes == 1 << 20);
  CHECK_FALSE(spec.lookup.has_value());
}

TEST_CASE("every run field is read", "[command]") {
  const CatalogLoad load = LoadWithRun(
      R"({"command":["deploy","--job={job}","-n","{count}","{idempotency_key}"],"cwd":"bin",
          "env":{"pass":["PATH","DEPLOY_TOKEN"],"set":{"MODE":"prod"}},"output":"json",
          "exitCodes":{"3":"rejected_transient","4":"ambiguous"},"killGraceMs":500,
          "maxOutputBytes":65536,"stderrTail":2000,"lookup":{"command":["deploy","lookup","{idempotency_key}"],
          "timeoutMs":3000}})",
      "unsafe_write");
  REQUIRE(load.ok());
  const CommandSpec& spec = *load.catalog->tools[0].run;
  CHECK(spec.cwd == "bin");
  CHECK(spec.env_pass == std::vector<std::string>{"PATH", "DEPLOY_TOKEN"});
  CHECK(spec.env_set.at("MODE") == "prod");
  CHECK(spec.output == CommandOutput::kJson);
  CHECK(spec.kill_grace_ms == 500);
  CHECK(spec.max_output_bytes == 65536);
  CHECK(spec.stderr_tail_bytes == 2000);
  REQUIRE(spec.lookup.has_value());
  CHECK(spec.lookup->timeout_ms == 3000);
  CHECK(ExitCodeClass(spec, 3) == FailureClass::kRejectedTransient);
  CHECK(ExitCodeClass(spec, 4) == FailureClass::kAmbiguous);
}

TEST_CASE("stderrTail defaults to none and is at most 65536 bytes", "[command]") {
  const CatalogLoad plain = LoadWithRun(R"({"command":["/bin/true"]})");
  REQUIRE(plain.ok());
  CHECK(plain.catalog->tools[0].run->stderr_tail_bytes == 0);
  CHECK_THAT(AllProblems(LoadWithRun(R"({"command":["/bin/true"],"stderrTail":65537})")),
             Catch::Contains("stderrTail"));
  CHECK_THAT(AllProblems(LoadWithRun(R"({"command":["/bin/true"],"stderrTail":-1})")),
             Catch::Contains("stderrTail"));
}

TEST_CASE("exit statuses default to 75 transient, 69 not sent, others permanent", "[command]") {
  const CommandSpec spec;
  CHECK(ExitCodeClass(spec, 75) == FailureClass::kRejectedTransient);
  CHECK(ExitCodeClass(spec, 69) == FailureClass::kNotSent);
  CHECK(ExitCodeClass(spec, 1) == FailureClass::kRejectedPermanent);
  CHECK(ExitCodeClass(spec, 2) == FailureClass::kRejectedPermanent);
  CHECK(ExitCodeClass(spec, 255) == FailureClass::kRejectedPermanent);
}

TEST_CASE("a mapped exit status overrides its default class", "[command]") {
  CommandSpec spec;
  spec.exit_codes[75] = FailureClass::kRejectedPermanent;
  CHECK(ExitCodeClass(spec, 75) == FailureClass::kRejectedPermanent);
}

TEST_CASE("a run entry's problems are all reported with their paths", "[command]") {
  const CatalogLoad load = LoadWithRun(
      R"({"command":"./deploy {job}","outputs":"text","killGraceMs":-1,
          "env":{"pass":["1BAD","KEEL_X"],"set":{"KEEL_ATTEMPT":"9","OK":3}},
          "exitCodes":{"0":"not_sent","256":"ambiguous","07":"ambiguous","9":"retry"}})");
  REQUIRE_FALSE(load.ok());
  const std::string all = AllProblems(load);
  CHECK_THAT(all, Catch::Contains("tools[0] (deploy).run.command: must be a non-empty array of "
                                  "strings (an argv, never a shell string)"));
  CHECK_THAT(all, Catch::Contains("run.outputs: unknown field"));
  CHECK_THAT(all, Catch::Contains("run.killGraceMs: must be an integer from 0 to 60000"));
  CHECK_THAT(all, Catch::Contains("run.env.pass[0]: \"1BAD\" is not a variable name"));
  CHECK_THAT(all, Catch::Contains("run.env.pass[1]: \"KEEL_X\": KEEL_ variables are set by keel"));
  CHECK_THAT(all, Catch::Contains("run.env.set.KEEL_ATTEMPT: KEEL_ variables are set by keel"));
  CHECK_THAT(all, Catch::Contains("run.env.set.OK: must be a string"));
  CHECK_THAT(all, Catch::Contains("run.exitCodes.0: must be an exit status from 1 to 255"));
  CHECK_THAT(all, Catch::Contains("run.exitCodes.256: must be an exit status"));
  CHECK_THAT(all, Catch::Contains("run.exitCodes.07: must be an exit status"));
  CHECK_THAT(all, Catch::Contains("run.exitCodes.9: \"retry\" is not one of not_sent"));
}

TEST_CASE("a command must name a fixed program", "[command]") {
  CHECK_THAT(
      AllProblems(LoadWithRun(R"({"command":["{job}"]})")),
      Catch::Contains("run.command[0]: the program must be a fixed, non-empty path or name"));
  CHECK_THAT(AllProblems(LoadWithRun(R"({"command":[]})")),
             Catch::Contains("run.command: must be a non-empty array"));
  CHECK_THAT(AllProblems(LoadWithRun(R"({"cwd":"x"})")),
             Catch::Contains("run.command: is required"));
}

TEST_CASE("a reference must name a required argument so it always has a value", "[command]") {
  CHECK_THAT(AllProblems(LoadWithRun(R"({"command":["x","{note}"]})")),
             Catch::Contains("run.command[1]: {note} must name a property listed in inputSchema's "
                             "\"required\""));
  CHECK_THAT(AllProblems(LoadWithRun(R"({"command":["x","{nope}"]})")),
             Catch::Contains("{nope} must name a property"));
  CHECK(LoadWithRun(R"({"command":["x","{job}:{count}"]})").ok());
}

TEST_CASE("only a write tool can reference its idempotency key or have a lookup", "[command]") {
  CHECK_THAT(AllProblems(LoadWithRun(R"({"command":["x","{idempotency_key}"]})")),
             Catch::Contains("{idempotency_key}: only a write tool has an idempotency key"));
  CHECK_THAT(AllProblems(LoadWithRun(R"({"command":["x"],"lookup":{"command":["y"]}})")),
             Catch::Contains("run.lookup: applies to writes only"));
  CHECK(LoadWithRun(R"({"command":["x","{idempotency_key}"],"lookup":{"command":["y"]}})",
                    "unsafe_write")
            .ok());
}

TEST_CASE("a read may reference its own required argument named idempotency_key", "[command]") {
  const CatalogLoad load = LoadCatalog(R"({"tools":[{"name":"find","description":"d",
      "effect":"read","inputSchema":{"type":"object","properties":{
      "idempotency_key":{"type":"string"}},"required":["idempotency_key"]},
      "run":{"command":["lookup","{idempotency_key}"]}}]})");
  CHECK(load.ok());
}

TEST_CASE("a lookup may reference the idempotency key only", "[command]") {
  const CatalogLoad load = LoadWithRun(
      R"({"command":["x"],"lookup":{"command":["y","{job}"],"timeoutMs":0}})", "unsafe_write");
  const std::string all = AllProblems(load);
  CHECK_THAT(all, Catch::Contains("run.lookup.command[1]: {job}: a lookup may reference "
                                  "{idempotency_key} only"));
  CHECK_THAT(all, Catch::Contains("run.lookup.timeoutMs: must be an integer from 1"));
}

TEST_CASE("template braces are doubled for literals and must balance", "[command]") {
  CHECK(ParseTemplate("{{\"a\":1}}").refs.empty());
  CHECK(ParseTemplate("{{\"a\":1}}").problem.empty());
  CHECK(ParseTemplate("--job={job}/{count}").refs == std::vector<std::string>{"job", "count"});
  CHECK_THAT(ParseTemplate("{job").problem, Catch::Contains("an unclosed '{'"));
  CHECK_THAT(ParseTemplate("job}").problem, Catch::Contains("a lone '}'"));
  CHECK_THAT(ParseTemplate("{}").problem, Catch::Contains("is not a reference"));
  CHECK_THAT(ParseTemplate("{a b}").problem, Catch::Contains("is not a reference"));
}

TEST_CASE("expansion keeps each value inside its one argv element verbatim", "[command]") {
  std::string problem;
  const Json values = {{"job", "web; rm -rf / $(id) `x` \"q\" 'q'"},
                       {"count", 3},
                       {"flag", true},
                       {"obj", {{"a", 1}}}};
  const auto argv =
      ExpandArgv({"deploy", "{job}", "--n={count}", "{flag}", "{obj}", "{{x}}"}, values, &problem);
  REQUIRE(argv);
  CHECK(*argv == std::vector<std::string>{"deploy", "web; rm -rf / $(id) `x` \"q\" 'q'", "--n=3",
                                          "true", "{\"a\":1}", "{x}"});
}

TEST_CASE("expansion refuses a missing value and a NUL character", "[command]") {
  std::string problem;
  CHECK_FALSE(ExpandArgv({"x", "{job}"}, Json::object(), &problem));
  CHECK(problem == "no value for {job}");
  CHECK_FALSE(ExpandArgv({"x", "{job}"}, Json{{"job", std::string("a\0b", 3)}}, &problem));
  CHECK_THAT(problem, Catch::Contains("contains a NUL character"));
}

}  // namespace
}  // namespace keel::command_spec_test
