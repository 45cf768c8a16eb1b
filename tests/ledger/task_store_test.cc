// Unit tests for ledger/task_store.h: durable MCP tasks (TASK-1, TASK-2).
#include "ledger/task_store.h"

#include <optional>
#include <string>

#include <catch2/catch.hpp>

#include "ledger/database.h"
#include "ledger_fixture.h"

using keel::CancelPhase;
using keel::Json;
using keel::LedgerFile;
using keel::TaskRecord;
using keel::TaskStatus;
using keel::TaskStore;
using CreateOutcome = TaskStore::CreateOutcome;
using namespace std::chrono_literals;

namespace task_store_test {

namespace {

constexpr int64_t kNow = 1'700'000'000'000;
constexpr int64_t kTtl = 60'000;

// A working task of "slow_echo" owned by p1, created at `created_ms` with a one-minute ttl.
TaskRecord NewTask(const std::string& task_id, int64_t created_ms = kNow) {
  TaskRecord task;
  task.task_id = task_id;
  task.tool = "slow_echo";
  task.created_ms = created_ms;
  task.updated_ms = created_ms;
  task.ttl_ms = kTtl;
  task.poll_interval_ms = 500;
  task.request = {{"name", "slow_echo"}, {"arguments", {{"text", task_id}}}};
  task.owner = "p1";
  task.owner_pid = 101;
  task.lease_until_ms = created_ms + 5'000;
  return task;
}

TaskRecord Keyed(TaskRecord task, const std::string& key, const std::string& fingerprint) {
  task.idempotency_key = key;
  task.fingerprint = fingerprint;
  return task;
}

const Json kResult = {{"content", {{{"type", "text"}, {"text", "done"}}}},
                      {"structuredContent", {{"n", 3}, {"list", {1, 2}}}}};

int64_t CountTasks(keel::Database& db) {
  keel::Statement count = db.Prepare("SELECT count(*) FROM tasks");
  REQUIRE(count.Step());
  return count.Int64(0);
}

}  // namespace

TEST_CASE("a created task reads back with every field it was created with", "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  TaskRecord task = Keyed(NewTask("t-1"), "key-1", "print-1");
  task.status_message = "queued";
  task.request["_meta"] = {{"progressToken", 7}};
  const auto created = store.Create(task, kNow);
  REQUIRE(created.outcome == CreateOutcome::kCreated);
  CHECK(created.task.seq > 0);

  const std::optional<TaskRecord> got = store.Get("t-1");
  REQUIRE(got);
  CHECK(got->seq == created.task.seq);
  CHECK(got->task_id == "t-1");
  CHECK(got->tool == "slow_echo");
  CHECK(got->status == TaskStatus::kWorking);
  CHECK(got->status_message == "queued");
  CHECK(got->created_ms == kNow);
  CHECK(got->updated_ms == kNow);
  CHECK(got->ttl_ms == kTtl);
  CHECK(got->poll_interval_ms == 500);
  CHECK(got->request == task.request);
  CHECK(got->idempotency_key == "key-1");
  CHECK(got->fingerprint == "print-1");
  CHECK(got->result.is_null());
  CHECK(got->error.is_null());
  CHECK(got->cancel_phase == CancelPhase::kNone);
  CHECK(got->late_outcome.is_null());
  CHECK(got->owner == "p1");
  CHECK(got->owner_pid == 101);
  CHECK(got->lease_until_ms == kNow + 5'000);
  CHECK_FALSE(store.Get("t-2").has_value());
}

TEST_CASE("a task without ttl or key is unlimited, keyless, and stored with NULLs",
          "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  TaskRecord task = NewTask("t-1");
  task.ttl_ms.reset();
  store.Create(task, kNow);
  const auto got = store.Get("t-1");
  REQUIRE(got);
  CHECK_FALSE(got->ttl_ms.has_value());
  CHECK(got->idempotency_key.empty());
  CHECK_FALSE(got->Expired(kNow + 100LL * 365 * 24 * 3600 * 1000));
  CHECK(store.List(0, 10, kNow + 100LL * 365 * 24 * 3600 * 1000).tasks.size() == 1);
  keel::Statement row = db->Prepare(
      "SELECT ttl_ms IS NULL, expires_ms IS NULL, idempotency_key IS NULL, fingerprint IS NULL "
      "FROM tasks");
  REQUIRE(row.Step());
  for (int column = 0; column < 4; ++column) CHECK(row.Int64(column) == 1);
}

TEST_CASE("a finished task keeps its result or its error as JSON", "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  store.Create(NewTask("ok"), kNow);
  store.Create(NewTask("bad"), kNow);
  const Json error = {{"code", -32603}, {"message", "backend down"}, {"data", {{"retry", true}}}};
  REQUIRE(store.Finish("ok", TaskStatus::kCompleted, "", kResult, nullptr, kNow + 10));
  REQUIRE(store.Finish("bad", TaskStatus::kFailed, "backend down", nullptr, error, kNow + 20));

  const auto ok = store.Get("ok");
  CHECK(ok->status == TaskStatus::kCompleted);
  CHECK(ok->result == kResult);
  CHECK(ok->error.is_null());
  CHECK(ok->updated_ms == kNow + 10);
  CHECK(ok->created_ms == kNow);
  const auto bad = store.Get("bad");
  CHECK(bad->status == TaskStatus::kFailed);
  CHECK(bad->status_message == "backend down");
  CHECK(bad->result.is_null());
  CHECK(bad->error == error);
}

TEST_CASE("a stored task result nested deeper than 128 levels reads as null, not a crash",
          "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  store.Create(NewTask("deep"), kNow);
  REQUIRE(store.Finish("deep", TaskStatus::kCompleted, "", kResult, nullptr, kNow + 10));
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  db->Prepare("UPDATE tasks SET result = ?1, request = ?1 WHERE task_id = 'deep'")
      .Bind(1, deep)
      .Run();
  const auto task = store.Get("deep");
  REQUIRE(task.has_value());
  CHECK(task->status == TaskStatus::kCompleted);
  CHECK(task->result.is_null());
  CHECK(task->request.is_null());
}

TEST_CASE("each created task gets a larger seq, even after the newest was swept", "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  const int64_t first = store.Create(NewTask("t-1"), kNow).task.seq;
  const int64_t second = store.Create(NewTask("t-2"), kNow).task.seq;
  CHECK(second > first);
  REQUIRE(store.SweepExpired(kNow + kTtl) == 2);
  // A reused seq would make an old list cursor skip the new task.
  CHECK(store.Create(NewTask("t-3", kNow + kTtl), kNow + kTtl).task.seq > second);
}

TEST_CASE("Finish is compare-and-set: a second Finish fails and changes nothing", "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  store.Create(NewTask("t-1"), kNow);
  CHECK(store.Finish("t-1", TaskStatus::kCompleted, "first", kResult, nullptr, kNow + 1));
  CHECK_FALSE(store.Finish("t-1", TaskStatus::kFailed, "second", nullptr,
                           {{"code", -1}, {"message", "late"}}, kNow + 2));
  const auto got = store.Get("t-1");
  CHECK(got->status == TaskStatus::kCompleted);
  CHECK(got->status_message == "first");
  CHECK(got->result == kResult);
  CHECK(got->error.is_null());
  CHECK(got->updated_ms == kNow + 1);
  CHECK_FALSE(store.Finish("missing", TaskStatus::kCompleted, "", kResult, nullptr, kNow));
}

TEST_CASE("Cancel of a finished task fails and leaves it finished", "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  store.Create(NewTask("t-1"), kNow);
  REQUIRE(store.Finish("t-1", TaskStatus::kCompleted, "", kResult, nullptr, kNow + 1));
  CHECK_FALSE(store.Cancel("t-1", "too late", kNow + 2));
  const auto got = store.Get("t-1");
  CHECK(got->status == TaskStatus::kCompleted);
  CHECK(got->cancel_phase == CancelPhase::kNone);
  CHECK_FALSE(store.Cancel("missing", "", kNow));
}

TEST_CASE("Finish after Cancel fails and the task stays cancelled", "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  store.Create(NewTask("t-1"), kNow);
  REQUIRE(store.Cancel("t-1", "cancelled by the client", kNow + 1));
  CHECK_FALSE(store.Finish("t-1", TaskStatus::kCompleted, "", kResult, nullptr, kNow + 2));
  CHECK_FALSE(store.Cancel("t-1", "again", kNow + 3));
  const auto got = store.Get("t-1");
  CHECK(got->status == TaskStatus::kCancelled);
  CHECK(got->cancel_phase == CancelPhase::kRequested);
  CHECK(got->status_message == "cancelled by the client");
  CHECK(got->result.is_null());
  CHECK(got->updated_ms == kNow + 1);
}

TEST_CASE("RecordAfterCancel is refused for a task that was not cancelled", "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  store.Create(NewTask("working"), kNow);
  store.Create(NewTask("done"), kNow);
  REQUIRE(store.Finish("done", TaskStatus::kCompleted, "", kResult, nullptr, kNow));
  CHECK_FALSE(store.RecordAfterCancel("working", CancelPhase::kObserved, "", nullptr, kNow));
  CHECK_FALSE(
      store.RecordAfterCancel("done", CancelPhase::kFinishedAfterCancel, "", kResult, kNow));
  CHECK_FALSE(store.RecordAfterCancel("missing", CancelPhase::kObserved, "", nullptr, kNow));
  CHECK(store.Get("working")->cancel_phase == CancelPhase::kNone);
  CHECK(store.Get("done")->late_outcome.is_null());
}

TEST_CASE("TASK-1 a worker that stopped at a checkpoint records the cancel as observed",
          "[task_store][TASK-1]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  store.Create(NewTask("t-1"), kNow);
  REQUIRE(store.Cancel("t-1", "cancelled", kNow + 1));
  CHECK(store.RecordAfterCancel("t-1", CancelPhase::kObserved, "stopped at a checkpoint", kResult,
                                kNow + 2));
  const auto got = store.Get("t-1");
  CHECK(got->status == TaskStatus::kCancelled);
  CHECK(got->cancel_phase == CancelPhase::kObserved);
  CHECK(got->status_message == "stopped at a checkpoint");
  CHECK(got->late_outcome.is_null());  // only work that finished has an outcome
  CHECK(got->updated_ms == kNow + 2);
  // The work ends once: a second report is refused.
  CHECK_FALSE(
      store.RecordAfterCancel("t-1", CancelPhase::kFinishedAfterCancel, "", kResult, kNow + 3));
  CHECK(store.Get("t-1")->cancel_phase == CancelPhase::kObserved);
}

TEST_CASE("TASK-1 work that finished after its cancel keeps what it returned",
          "[task_store][TASK-1]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  store.Create(NewTask("t-1"), kNow);
  REQUIRE(store.Cancel("t-1", "cancelled", kNow + 1));
  CHECK(store.RecordAfterCancel("t-1", CancelPhase::kFinishedAfterCancel,
                                "the work completed after the cancel", kResult, kNow + 2));
  const auto got = store.Get("t-1");
  CHECK(got->status == TaskStatus::kCancelled);
  CHECK(got->cancel_phase == CancelPhase::kFinishedAfterCancel);
  CHECK(got->late_outcome == kResult);
  CHECK(got->result.is_null());  // the task's outcome is still "cancelled"
}

TEST_CASE("creating with a used key and the same fingerprint returns the existing task",
          "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  const auto first = store.Create(Keyed(NewTask("t-1"), "key-1", "print-1"), kNow);
  const auto again = store.Create(Keyed(NewTask("t-2"), "key-1", "print-1"), kNow + 1);
  CHECK(again.outcome == CreateOutcome::kExisting);
  CHECK(again.task.task_id == "t-1");
  CHECK(again.task.seq == first.task.seq);
  CHECK_FALSE(store.Get("t-2").has_value());
  CHECK(CountTasks(*db) == 1);
}

TEST_CASE("creating with a used key and other arguments is a key mismatch", "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  store.Create(Keyed(NewTask("t-1"), "key-1", "print-1"), kNow);
  REQUIRE(store.Finish("t-1", TaskStatus::kCompleted, "", kResult, nullptr, kNow + 1));
  const auto other = store.Create(Keyed(NewTask("t-2"), "key-1", "print-2"), kNow + 2);
  CHECK(other.outcome == CreateOutcome::kKeyMismatch);
  CHECK(other.task.task_id == "t-1");
  CHECK(other.task.fingerprint == "print-1");  // the first intent keeps the key
  CHECK(other.task.status == TaskStatus::kCompleted);
  CHECK(CountTasks(*db) == 1);
}

TEST_CASE("a key names one task per tool, keyless tasks never collide", "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  TaskRecord other_tool = Keyed(NewTask("t-2"), "key-1", "print-2");
  other_tool.tool = "charge";
  CHECK(store.Create(Keyed(NewTask("t-1"), "key-1", "print-1"), kNow).outcome ==
        CreateOutcome::kCreated);
  CHECK(store.Create(other_tool, kNow).outcome == CreateOutcome::kCreated);
  CHECK(store.Create(NewTask("t-3"), kNow).outcome == CreateOutcome::kCreated);
  CHECK(store.Create(NewTask("t-4"), kNow).outcome == CreateOutcome::kCreated);
  CHECK(CountTasks(*db) == 4);
}

TEST_CASE("an expired task under a key is replaced by the new one", "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  store.Create(Keyed(NewTask("t-1"), "key-1", "print-1"), kNow);
  const int64_t later = kNow + kTtl;  // t-1 expires exactly now
  const auto replaced = store.Create(Keyed(NewTask("t-2", later), "key-1", "print-2"), later);
  CHECK(replaced.outcome == CreateOutcome::kCreated);
  CHECK(replaced.task.task_id == "t-2");
  CHECK(replaced.task.fingerprint == "print-2");
  CHECK_FALSE(store.Get("t-1").has_value());
  CHECK(CountTasks(*db) == 1);
}

TEST_CASE("List pages through unexpired tasks in creation order", "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  store.Create(NewTask("old", kNow - kTtl), kNow - kTtl);  // expired at kNow
  for (const char* id : {"a", "b", "c", "d", "e"}) store.Create(NewTask(id), kNow);

  const auto first = store.List(0, 2, kNow);
  REQUIRE(first.tasks.size() == 2);
  CHECK(first.tasks[0].task_id == "a");
  CHECK(first.tasks[1].task_id == "b");
  REQUIRE(first.next_after);
  const auto second = store.List(*first.next_after, 2, kNow);
  REQUIRE(second.tasks.size() == 2);
  CHECK(second.tasks[0].task_id == "c");
  CHECK(second.tasks[1].task_id == "d");
  REQUIRE(second.next_after);
  const auto last = store.List(*second.next_after, 2, kNow);
  REQUIRE(last.tasks.size() == 1);
  CHECK(last.tasks[0].task_id == "e");
  CHECK_FALSE(last.next_after);  // an exactly full page would say so too
  CHECK_FALSE(store.List(0, 5, kNow).next_after);
  CHECK(store.List(0, 10, kNow + kTtl).tasks.empty());  // all expired
}

TEST_CASE("Get returns an expired task, which reports itself expired", "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  store.Create(NewTask("t-1"), kNow);
  const auto fresh = store.Get("t-1");
  REQUIRE(fresh);
  CHECK_FALSE(fresh->Expired(kNow + kTtl - 1));
  CHECK(fresh->Expired(kNow + kTtl));
  CHECK(store.List(0, 10, kNow + kTtl).tasks.empty());
  const auto expired = store.Get("t-1");
  REQUIRE(expired);
  CHECK(expired->Expired(kNow + kTtl));
}

TEST_CASE("SweepExpired deletes only the expired tasks", "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  store.Create(NewTask("expired", kNow - kTtl), kNow - kTtl);
  store.Create(NewTask("fresh"), kNow);
  TaskRecord unlimited = NewTask("unlimited", kNow - 10 * kTtl);
  unlimited.ttl_ms.reset();
  store.Create(unlimited, kNow);
  CHECK(store.SweepExpired(kNow) == 1);
  CHECK_FALSE(store.Get("expired").has_value());
  CHECK(store.Get("fresh").has_value());
  CHECK(store.Get("unlimited").has_value());
  CHECK(store.SweepExpired(kNow) == 0);
}

TEST_CASE("RenewLeases extends only the owner's unfinished tasks", "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  store.Create(NewTask("mine"), kNow);
  store.Create(NewTask("mine-done"), kNow);
  REQUIRE(store.Finish("mine-done", TaskStatus::kCompleted, "", kResult, nullptr, kNow));
  TaskRecord theirs = NewTask("theirs");
  theirs.owner = "p2";
  store.Create(theirs, kNow);
  CHECK(store.RenewLeases("p1", kNow + 99'000) == 1);
  CHECK(store.Get("mine")->lease_until_ms == kNow + 99'000);
  CHECK(store.Get("mine-done")->lease_until_ms == kNow + 5'000);
  CHECK(store.Get("theirs")->lease_until_ms == kNow + 5'000);
  CHECK(store.Get("mine")->updated_ms == kNow);  // a lease is not a status change
}

TEST_CASE("Unfinished lists other owners' unfinished tasks only", "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  TaskStore store(*db);
  store.Create(NewTask("mine"), kNow);
  for (const char* id : {"orphan-1", "orphan-2", "theirs-done", "theirs-cancelled"}) {
    TaskRecord task = NewTask(id);
    task.owner = "p2";
    store.Create(task, kNow);
  }
  REQUIRE(store.Finish("theirs-done", TaskStatus::kFailed, "", nullptr,
                       {{"code", -1}, {"message", "x"}}, kNow));
  REQUIRE(store.Cancel("theirs-cancelled", "", kNow));
  const auto orphans = store.Unfinished("p1");
  REQUIRE(orphans.size() == 2);
  CHECK(orphans[0].task_id == "orphan-1");
  CHECK(orphans[1].task_id == "orphan-2");
  CHECK(store.Unfinished("p2").size() == 1);
}

TEST_CASE("a second connection sees committed tasks and their updates", "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db1 = file.Open();
  auto db2 = file.Open();
  TaskStore one(*db1);
  TaskStore two(*db2);
  one.Create(Keyed(NewTask("t-1"), "key-1", "print-1"), kNow);
  REQUIRE(two.Get("t-1"));
  CHECK(two.Create(Keyed(NewTask("t-2"), "key-1", "print-1"), kNow).outcome ==
        CreateOutcome::kExisting);
  REQUIRE(two.Finish("t-1", TaskStatus::kCompleted, "", kResult, nullptr, kNow + 1));
  CHECK(one.Get("t-1")->result == kResult);
  CHECK_FALSE(one.Cancel("t-1", "", kNow + 2));
}

TEST_CASE("a write while another connection holds the write lock throws SQLITE_BUSY",
          "[task_store]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto holder = file.Open();
  auto db = file.Open();
  TaskStore store(*db);
  db->SetBusyTimeout(0ms);
  {
    keel::WriteTransaction lock(*holder);
    CHECK_THROWS_AS(store.Create(NewTask("t-1"), kNow), keel::SqliteError);
    CHECK(store.List(0, 10, kNow).tasks.empty());  // reads still work under WAL
  }
  CHECK(store.Create(NewTask("t-1"), kNow).outcome == CreateOutcome::kCreated);
}

TEST_CASE("task statuses are stored under their MCP names", "[task_store]") {
  for (TaskStatus status : {TaskStatus::kWorking, TaskStatus::kInputRequired,
                            TaskStatus::kCompleted, TaskStatus::kFailed, TaskStatus::kCancelled}) {
    CHECK(keel::ParseTaskStatus(keel::TaskStatusName(status)) == status);
  }
  CHECK(keel::TaskStatusName(TaskStatus::kInputRequired) == "input_required");
  CHECK_FALSE(keel::ParseTaskStatus("done").has_value());
  CHECK_FALSE(keel::IsTerminal(TaskStatus::kWorking));
  CHECK_FALSE(keel::IsTerminal(TaskStatus::kInputRequired));
  CHECK(keel::IsTerminal(TaskStatus::kCompleted));
  CHECK(keel::IsTerminal(TaskStatus::kFailed));
  CHECK(keel::IsTerminal(TaskStatus::kCancelled));
  CHECK(keel::CancelPhaseName(CancelPhase::kFinishedAfterCancel) == "finished_after_cancel");
}

}  // namespace task_store_test
