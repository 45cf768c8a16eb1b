// Recovery of tasks a dead keel left working (TASK-2): which tasks count as orphans, and
// what each becomes, with the process check and the clock injected.
#include "server/tasks/task_recovery.h"

#include <catch2/catch.hpp>

#include "fakes/stub_tool.h"
#include "fakes/temp_dir.h"
#include "ledger/schema.h"
#include "ledger/task_store.h"

namespace keel::task_recovery_test {
namespace {

constexpr int64_t kNow = 1'800'000'000'000;

// A tool whose Reconcile answers from the call's `outcome` argument.
std::unique_ptr<Tool> ReconcilingTool() {
  return MakeStubTool(
      StubSpec("job"), [](ToolContext&) { return TextResult("ran"); },
      [](const Json& arguments, const Json&) {
        const std::string outcome = arguments.value("outcome", "");
        if (outcome == "happened")
          return Reconciled{Reconciled::Outcome::kHappened, TextResult("charged")};
        if (outcome == "not") return Reconciled{Reconciled::Outcome::kDidNotHappen, Json()};
        return Reconciled{};
      });
}

class RecoveryFixture {
 public:
  RecoveryFixture() {
    std::string error;
    db_ = Database::Open(dir_.File("keel.db"), &error);
    REQUIRE(db_ != nullptr);
    REQUIRE(Migrate(*db_, &error) == MigrateStatus::kOk);
    store_ = std::make_unique<TaskStore>(*db_);
    REQUIRE(tools_.Register(ReconcilingTool()).empty());
    options_.owner = "keel-me";
    options_.pid = 100;
    options_.alive = [this](int64_t pid) { return pid == live_pid; };
  }

  // A working task of `owner` (pid, lease) for `job` with {"outcome": outcome}.
  std::string Add(const std::string& owner, int64_t pid, int64_t lease_until,
                  const std::string& outcome = "", const std::string& tool = "job") {
    TaskRecord task;
    task.task_id = "t" + std::to_string(++count_);
    task.tool = tool;
    task.created_ms = kNow - 1000;
    task.updated_ms = kNow - 1000;
    task.ttl_ms = 3'600'000;
    task.request = {{"name", tool}, {"arguments", {{"outcome", outcome}}}};
    task.owner = owner;
    task.owner_pid = pid;
    task.lease_until_ms = lease_until;
    REQUIRE(store_->Create(task, kNow).outcome == TaskStore::CreateOutcome::kCreated);
    return task.task_id;
  }
  size_t Recover() { return RecoverOrphanedTasks(*store_, tools_, options_, kNow); }
  TaskRecord Get(const std::string& id) { return store_->Get(id).value(); }
  TaskStore& store() { return *store_; }

  int64_t live_pid = 200;

 private:
  TempDir dir_;
  std::unique_ptr<Database> db_;
  std::unique_ptr<TaskStore> store_;
  ToolRegistry tools_;
  RecoveryOptions options_;
  int count_ = 0;
};

}  // namespace

TEST_CASE("a task whose keel died is failed as interrupted, outcome unknown",
          "[task_recovery][TASK-2]") {
  RecoveryFixture f;
  const std::string id = f.Add("keel-dead", /*pid=*/300, /*lease_until=*/kNow + 60000);
  CHECK(f.Recover() == 1);
  const TaskRecord task = f.Get(id);
  CHECK(task.status == TaskStatus::kFailed);
  CHECK(task.status_message.rfind("keel restarted while this task was running", 0) == 0);
  CHECK(task.result["isError"] == true);
  CHECK(task.result["structuredContent"]["error"]["type"] == "interrupted");
  CHECK(task.result["structuredContent"]["error"]["effect"] == "unknown");
}

TEST_CASE("an orphan the tool can reconcile gets the result of the work that happened",
          "[task_recovery][TASK-2]") {
  RecoveryFixture f;
  const std::string happened = f.Add("keel-dead", 300, kNow + 60000, "happened");
  const std::string not_happened = f.Add("keel-dead", 300, kNow + 60000, "not");
  CHECK(f.Recover() == 2);
  CHECK(f.Get(happened).status == TaskStatus::kCompleted);
  CHECK(f.Get(happened).result == TextResult("charged"));
  CHECK(f.Get(not_happened).status == TaskStatus::kFailed);
  CHECK(f.Get(not_happened).result["structuredContent"]["error"]["effect"] == "did_not_happen");
}

TEST_CASE("tasks of a live keel with a valid lease, and our own tasks, are left alone",
          "[task_recovery][TASK-2]") {
  RecoveryFixture f;
  const std::string other = f.Add("keel-other", f.live_pid, kNow + 60000);
  const std::string mine = f.Add("keel-me", 100, kNow - 1);
  CHECK(f.Recover() == 0);
  CHECK(f.Get(other).status == TaskStatus::kWorking);
  CHECK(f.Get(mine).status == TaskStatus::kWorking);
}

TEST_CASE("a live pid with an expired lease is an orphan (the pid was reused)",
          "[task_recovery][TASK-2]") {
  RecoveryFixture f;
  const std::string id = f.Add("keel-other", f.live_pid, /*lease_until=*/kNow - 1);
  CHECK(f.Recover() == 1);
  CHECK(f.Get(id).status == TaskStatus::kFailed);
}

TEST_CASE("a task of our own pid under another owner is an orphan (a restart reused the pid)",
          "[task_recovery][TASK-2]") {
  RecoveryFixture f;
  f.live_pid = 100;  // our pid runs, of course
  const std::string id = f.Add("keel-before", 100, kNow + 60000);
  CHECK(f.Recover() == 1);
  CHECK(f.Get(id).status == TaskStatus::kFailed);
}

TEST_CASE("an orphan of a tool no longer served is failed, outcome unknown",
          "[task_recovery][TASK-2]") {
  RecoveryFixture f;
  const std::string id = f.Add("keel-dead", 300, kNow + 60000, "happened", "gone_tool");
  CHECK(f.Recover() == 1);
  CHECK(f.Get(id).result["structuredContent"]["error"]["effect"] == "unknown");
}

TEST_CASE(
    "a parked task of a dead keel stays parked, and the process that answers its last question "
    "takes it over",
    "[task_recovery][TASK-2][TASKX-1]") {
  RecoveryFixture f;
  const std::string id = f.Add("keel-dead", 300, kNow - 1);
  const Json asked = {{"a", {{"method", "elicitation/create"}}},
                      {"b", {{"method", "elicitation/create"}}}};
  REQUIRE(f.store().Park(id, asked, Json(), kNow));
  CHECK(f.Recover() == 0);
  CHECK(f.Get(id).status == TaskStatus::kInputRequired);
  const TaskStore::InputOwner me{"keel-me", 100, kNow + 60000, 1024};
  TaskStore::Answered first = f.store().AnswerInput(id, {{"a", 1}, {"zzz", 2}}, me, kNow);
  CHECK(first.outcome == TaskStore::AnswerOutcome::kStillWaiting);
  CHECK(first.task->input_requests == Json{{"b", {{"method", "elicitation/create"}}}});
  CHECK(first.task->input_answers == Json{{"a", 1}});  // the unasked key is ignored
  CHECK(first.task->owner == "keel-dead");
  TaskStore::Answered last = f.store().AnswerInput(id, {{"b", 2}}, me, kNow);
  CHECK(last.outcome == TaskStore::AnswerOutcome::kResumed);
  CHECK(last.task->status == TaskStatus::kWorking);
  CHECK(last.task->input_requests.is_null());
  CHECK(last.task->input_answers == Json{{"a", 1}, {"b", 2}});
  CHECK(last.task->owner == "keel-me");
  CHECK(f.store().AnswerInput(id, {{"b", 3}}, me, kNow).outcome ==
        TaskStore::AnswerOutcome::kNotWaiting);
}

TEST_CASE("answers over the bound are refused and nothing of them is kept",
          "[task_recovery][TASKX-1]") {
  RecoveryFixture f;
  const std::string id = f.Add("keel-me", 100, kNow + 60000);
  REQUIRE(f.store().Park(id, {{"a", {{"method", "elicitation/create"}}}}, Json(), kNow));
  const TaskStore::InputOwner me{"keel-me", 100, kNow + 60000, 64};
  const Json big = {{"a", std::string(100, 'x')}};
  CHECK(f.store().AnswerInput(id, big, me, kNow).outcome == TaskStore::AnswerOutcome::kTooLarge);
  CHECK(f.Get(id).status == TaskStatus::kInputRequired);
  CHECK(f.Get(id).input_answers.is_null());
}

}  // namespace keel::task_recovery_test
