// CommandTool with real child processes: what the child receives (argv, stdin,
// environment), fd-3 progress reaching the call's progress, the deadline killing the child,
// and a keyed write whose child is killed after its effect being reconciled by the lookup.
#include "server/tools/command_tool.h"

#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <sys/wait.h>

#include "fakes/temp_ledger.h"
#include "server/policy/failure_classify.h"
#include "server/runtime/process_attempt.h"

namespace keel::command_tool_test {
namespace {

ToolSpec SpecOf(const std::string& name, EffectClass effect = EffectClass::kRead) {
  ToolSpec spec;
  spec.name = name;
  spec.description = "test";
  spec.input_schema = Json{{"type", "object"}};
  spec.effect = effect;
  return spec;
}

// `script` is an argv template: a literal brace is doubled ("${{HOME}}").
CommandSpec Sh(const std::string& script) {
  CommandSpec command;
  command.argv = {"/bin/sh", "-c", script, "sh"};
  command.kill_grace_ms = 100;
  return command;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Progress {
  double value;
  std::optional<double> total;
  std::string message;
};

Json Run(CommandTool& tool, Json args, Millis budget = Millis(10000), Json meta = nullptr,
         std::vector<Progress>* progress = nullptr) {
  ToolContext ctx(std::move(args), CancellationToken(),
                  [progress](double value, std::optional<double> total, std::string message) {
                    if (progress) progress->push_back({value, total, std::move(message)});
                  });
  CallIdentity identity = NewCallIdentity(tool, ctx.arguments(), meta);
  identity.correlation_id = "kx-7";
  identity.request_id = Json(0);
  ctx.set_identity(std::move(identity));
  ctx.set_attempt(1, "kx-7/1");
  ctx.set_meta(std::move(meta));
  ctx.set_deadline(std::chrono::steady_clock::now() + budget);
  return tool.Call(ctx);
}

std::string Text(const Json& result) {
  return result.at("content").at(0).at("text").get<std::string>();
}

TEST_CASE("a command gets its arguments in argv and on stdin, and only keel's variables",
          "[command]") {
  setenv("KEEL_TEST_SECRET", "do-not-pass", 1);
  CommandSpec command =
      Sh("printf '%s|' \"$1\" \"$KEEL_TEST_SECRET\" \"$MODE\" \"$KEEL_TOOL\" \"$KEEL_INTENT_ID\" "
         "\"$KEEL_ATTEMPT\" \"$KEEL_ATTEMPT_ID\" \"$KEEL_REQUEST_ID\" "
         "\"${{KEEL_IDEMPOTENCY_KEY-unset}}\"; "
         "[ \"$KEEL_DEADLINE_MS\" -gt 0 ] && printf 'deadline|'; cat");
  command.argv.push_back("{job}");
  command.env_set["MODE"] = "test";
  command.output = CommandOutput::kText;
  CommandTool tool(SpecOf("show"), command, nullptr);
  const Json result = Run(tool, Json{{"job", "a b; $(id)"}});
  CHECK(Text(result) ==
        "a b; $(id)||test|show|kx-7|1|kx-7/1|0|unset|deadline|{\"job\":\"a b; $(id)\"}");
}

TEST_CASE("fd-3 progress lines reach the call's progress and bad lines are ignored", "[command]") {
  CommandTool tool(SpecOf("steps"),
                   Sh("echo '{{\"progress\":1,\"total\":3,\"message\":\"one\"}}' >&3; "
                      "echo 'not json' >&3; echo 2 >&3; echo done"),
                   nullptr);
  std::vector<Progress> progress;
  const Json result = Run(tool, Json::object(), Millis(10000), nullptr, &progress);
  CHECK(Text(result) == "done");
  REQUIRE(progress.size() == 2);
  CHECK(progress[0].value == 1);
  CHECK(progress[0].total == 3);
  CHECK(progress[0].message == "one");
  CHECK(progress[1].value == 2);
  CHECK_FALSE(progress[1].total.has_value());
}

TEST_CASE("a command past the attempt deadline is killed and the outcome is ambiguous",
          "[command]") {
  CommandTool tool(SpecOf("slow"), Sh("sleep 30"), nullptr);
  const auto start = std::chrono::steady_clock::now();
  const Json result = Run(tool, Json::object(), Millis(200));
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(10));
  const auto failure = ClassifyResult(result);
  REQUIRE(failure);
  CHECK(failure->type == "attempt_timeout");
  CHECK(failure->failure == FailureClass::kAmbiguous);
}

TEST_CASE("a keyed write killed after its effect is reconciled by lookup and never re-run",
          "[command]") {
  TempLedger ledger("keel-1-test", 3600000);
  const std::string effects = ledger.dir().File("effects");
  // The effect happens, then the answer never comes: the deadline kills the child.
  CommandSpec command = Sh("echo \"$KEEL_IDEMPOTENCY_KEY\" >> '" + effects + "'; sleep 30");
  command.lookup =
      CommandLookup{{"/bin/sh", "-c",
                     "if grep -qx \"$1\" '" + effects +
                         "'; then echo '{{\"happened\":true,\"result\":"
                         "{{\"op\":\"op_1\"}}}}'; else echo '{{\"happened\":false}}'; fi",
                     "sh", "{idempotency_key}"},
                    5000};
  CommandTool tool(SpecOf("restart", EffectClass::kUnsafeWrite), command, ledger.service());
  const Json meta = {{"dev.keel/idempotency-key", "intent-1"}};
  const Json first = Run(tool, Json{{"job", "web"}}, Millis(300), meta);
  CHECK_FALSE(first.value("isError", false));
  CHECK(first.at("structuredContent").at("op") == "op_1");
  CHECK(first.at("_meta").at("dev.keel/reconciled") == true);
  const Json again = Run(tool, Json{{"job", "web"}}, Millis(300), meta);
  CHECK(again.at("structuredContent").at("op") == "op_1");
  CHECK(again.at("_meta").at("dev.keel/replayed") == true);
  CHECK(ReadFile(effects) == "intent-1\n");
}

TEST_CASE("a key whose orphaned command still runs is not reported undone to task recovery",
          "[command]") {
  TempLedger ledger("keel-1-test", 3600000);
  // A dead keel's claim on the key, with the command it started still running.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  char* argv[] = {const_cast<char*>("sleep"), const_cast<char*>("30"), nullptr};
  pid_t orphan = -1;
  REQUIRE(posix_spawn(&orphan, "/bin/sleep", nullptr, &attr, argv, environ) == 0);
  posix_spawnattr_destroy(&attr);
  REQUIRE(
      ledger.OpenAs("keel-999999999-dead")
          ->Borrow()
          .ledger()
          .Claim("restart", "intent-1", "fp", Millis(1000), std::nullopt, SpawnedAttempt(orphan))
          .status == MutationLedger::Status::kExecuted);

  CommandSpec command = Sh("exit 0");
  command.lookup = CommandLookup{{"/bin/sh", "-c", "echo '{{\"happened\":false}}'"}, 5000};
  CommandTool tool(SpecOf("restart", EffectClass::kUnsafeWrite), command, ledger.service());
  const Json meta = {{"dev.keel/idempotency-key", "intent-1"}};
  CHECK(tool.Reconcile(Json{{"job", "web"}}, meta).outcome == Reconciled::Outcome::kUnknown);
  ::kill(-orphan, SIGKILL);
  int status = 0;
  ::waitpid(orphan, &status, 0);
  CHECK(tool.Reconcile(Json{{"job", "web"}}, meta).outcome == Reconciled::Outcome::kDidNotHappen);
}

TEST_CASE("a command that needs the idempotency key refuses a call without one", "[command]") {
  CommandSpec command = Sh("echo ran");
  command.argv.push_back("{idempotency_key}");
  CommandTool tool(SpecOf("restart", EffectClass::kUnsafeWrite), command, nullptr);
  const Json result = Run(tool, Json{{"job", "web"}});
  CHECK(StructuredErrorOf(result)->at("type") == "invalid_arguments");
  CHECK_THAT(Text(result), Catch::Contains("needs an idempotency key"));
}

TEST_CASE("a command that cannot start says so and names the cause", "[command]") {
  CommandSpec command;
  command.argv = {"/nonexistent/keel-test-program"};
  CommandTool tool(SpecOf("missing"), command, nullptr);
  const Json result = Run(tool, Json::object());
  CHECK(StructuredErrorOf(result)->at("type") == "command_not_started");
}

}  // namespace
}  // namespace keel::command_tool_test
