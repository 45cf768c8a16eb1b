// The operator commands (keel admin, keel policy, keel trace summary): what each answers on
// stdout, what it reports on stderr, and its exit code. They run on a --db file in a
// temporary directory, as an operator would run them next to a serving keel.
#include "server/app/operator_commands.h"

#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "app_fixtures.h"
#include "ledger/kill_switch.h"
#include "server/durable/policy_store.h"
#include "server/policy/policy.h"

namespace keel::operator_commands_test {
namespace {

using app_test::TempKeelDb;

TEST_CASE("serving flags name no operator command") {
  CHECK_FALSE(IsOperatorCommand(CliOptions()));
  CliOptions admin;
  admin.admin_block_writes = "status";
  CHECK(IsOperatorCommand(admin));
  CliOptions trace;
  trace.trace_summary_file = "trace.jsonl";
  CHECK(IsOperatorCommand(trace));
}

TEST_CASE("admin block-writes on turns the kill switch on in the db file and says who did") {
  TempKeelDb db;
  db.flags().admin_block_writes = "on";
  std::ostringstream err;
  const CommandOutcome outcome = RunOperatorCommand(db.flags(), err);
  CHECK(outcome.exit_code == 0);
  CHECK(err.str().empty());
  CHECK(outcome.output.rfind("writes blocked in " + db.path() + " (set ", 0) == 0);
  CHECK(outcome.output.find("by keel admin block-writes on (pid ") != std::string::npos);
  CHECK(WritesBlocked(db.Open()->Borrow().db()));
}

TEST_CASE("admin block-writes status on a fresh file says writes are allowed and changes nothing") {
  TempKeelDb db;
  db.flags().admin_block_writes = "status";
  std::ostringstream err;
  const CommandOutcome outcome = RunOperatorCommand(db.flags(), err);
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.output == "writes allowed in " + db.path() + "\n");
  CHECK(ReadKillSwitch(db.Open()->Borrow().db()).updated_ms == 0);
}

TEST_CASE("an operator command on a db file it cannot create exits 73 saying why") {
  TempKeelDb db;
  db.flags().db_path = db.dir().File("no/such/dir/keel.db");
  db.flags().admin_block_writes = "off";
  std::ostringstream err;
  const CommandOutcome outcome = RunOperatorCommand(db.flags(), err);
  CHECK(outcome.exit_code == 73);
  CHECK(outcome.output.empty());
  CHECK(err.str().rfind("keel: cannot open the database " + db.flags().db_path, 0) == 0);
}

TEST_CASE("policy check names the version of a valid file") {
  TempKeelDb db;
  db.flags().policy_command = "check";
  db.flags().policy_check_file = db.dir().Write("policy.json", R"({"version":"v7"})");
  std::ostringstream err;
  const CommandOutcome outcome = RunOperatorCommand(db.flags(), err);
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.output == "policy " + db.flags().policy_check_file + " is valid (version v7)\n");
}

TEST_CASE("policy check of an invalid file exits 78 listing every problem") {
  TempKeelDb db;
  db.flags().policy_command = "check";
  db.flags().policy_check_file = db.dir().Write(
      "policy.json", R"({"version":"v8","defaults":{"timeouts":{"attempt_ms":60000}},"x":1})");
  std::ostringstream err;
  const CommandOutcome outcome = RunOperatorCommand(db.flags(), err);
  CHECK(outcome.exit_code == 78);
  CHECK(outcome.output.empty());
  const std::string problems = err.str();
  CHECK(problems.find("keel: policy: ") == 0);
  CHECK(problems.find("\nkeel: policy: ") != std::string::npos);  // more than one
}

TEST_CASE("policy show prints the recorded policy, and exits 1 when none was") {
  TempKeelDb db;
  db.flags().policy_command = "show";
  std::ostringstream err;
  CHECK(RunOperatorCommand(db.flags(), err).exit_code == 1);
  CHECK(err.str() == "keel: no policy recorded in " + db.path() + "\n");

  Policy policy = DefaultPolicy();
  policy.version = "v3";
  RecordPolicy(db.Open()->Borrow().db(), policy, 1000, "test");
  const CommandOutcome outcome = RunOperatorCommand(db.flags(), err);
  CHECK(outcome.exit_code == 0);
  CHECK(outcome.output.find("\"version\": \"v3\"") != std::string::npos);

  db.flags().policy_previous = true;
  std::ostringstream previous_err;
  CHECK(RunOperatorCommand(db.flags(), previous_err).exit_code == 1);
  CHECK(previous_err.str() == "keel: no previous policy recorded in " + db.path() + "\n");
}

TEST_CASE("trace summary summarises the trace file") {
  TempKeelDb db;
  db.flags().trace_summary_file = db.dir().Write("trace.jsonl", "");
  std::ostringstream err;
  const CommandOutcome outcome = RunOperatorCommand(db.flags(), err);
  CHECK(outcome.exit_code == 0);
  CHECK_FALSE(outcome.output.empty());
  CHECK(err.str().empty());
}

}  // namespace
}  // namespace keel::operator_commands_test
