// Keels on several machines sharing one PostgreSQL database (DIST-2): the registry of live
// instances judges "is that keel alive" by the server's clock and its heartbeat, never by a
// pid or a boot id this machine cannot see; a claim of a live keel elsewhere is never
// adopted; an attempt started on another machine "may still run"; an orphaned task is
// settled by exactly one survivor. Silence is made by ageing a heartbeat in SQL, never by
// sleeping. Skipped without KEEL_TEST_POSTGRES_URL (scripts/test sets it).
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>

#include <catch2/catch.hpp>

#include "fakes/stub_tool.h"
#include "ledger/fingerprint.h"
#include "ledger/instance_registry.h"
#include "ledger/ledger_fixture.h"
#include "ledger/task_store.h"
#include "server/durable/instance_heartbeat.h"
#include "server/durable/ledger_service.h"
#include "server/durable/remote_write.h"
#include "server/runtime/process_attempt.h"
#include "server/tasks/task_recovery.h"

namespace keel::instances_test {
namespace {

bool HavePostgres() {
  const char* url = std::getenv("KEEL_TEST_POSTGRES_URL");
  return url != nullptr && *url != '\0';
}

// A pid no process has on this machine (above any pid_max), so that the pid rule would call
// its keel dead.
constexpr int64_t kForeignPid = 99'999'999;

InstanceInfo Remote(const std::string& owner) {
  InstanceInfo info;
  info.owner = owner;
  info.host = "other-machine";
  info.pid = kForeignPid;
  info.boot_id = "00000000-0000-0000-0000-000000000000";
  return info;
}

// Makes `owner` silent for `ms` longer than it is (no sleep: its heartbeat is moved back).
void Age(Database& db, const std::string& owner, int64_t ms) {
  db.Prepare("UPDATE keel_instances SET heartbeat_ms = heartbeat_ms - ?2 WHERE owner = ?1")
      .Bind(1, owner)
      .Bind(2, ms)
      .Run();
}

std::shared_ptr<LedgerService> Service(const LedgerFile& file, const std::string& owner) {
  std::string error;
  int exit_code = 0;
  std::shared_ptr<LedgerService> service =
      LedgerService::Open({file.path(), 3'600'000, owner}, &error, &exit_code);
  INFO(error);
  REQUIRE(service != nullptr);
  return service;
}

}  // namespace

TEST_CASE(
    "a registered keel is alive until it deregisters or is silent longer than kGoneAfterMs "
    "by the server's clock",
    "[instances][DIST-2]") {
  if (!HavePostgres()) return;
  LedgerFile file("postgres");
  auto db = file.Open();
  InstanceRegistry registry(*db);
  CHECK(registry.Gone("keel-1-never"));
  InstanceInfo a = Remote("keel-5-a");
  a.heartbeat_ms = 1;  // ignored: the server's clock writes the heartbeat
  registry.Register(a);
  CHECK_FALSE(registry.Gone("keel-5-a"));
  const std::vector<InstanceInfo> listed = registry.List();
  REQUIRE(listed.size() == 1);
  CHECK(listed[0].host == "other-machine");
  CHECK(std::llabs(listed[0].heartbeat_ms - db->ClockMs()) < 60'000);

  Age(*db, "keel-5-a", InstanceRegistry::kGoneAfterMs - 5'000);
  CHECK_FALSE(registry.Gone("keel-5-a"));  // a few beats missed is not a death
  Age(*db, "keel-5-a", 10'000);
  CHECK(registry.Gone("keel-5-a"));
  registry.Heartbeat(a);
  CHECK_FALSE(registry.Gone("keel-5-a"));
  registry.Deregister("keel-5-a");
  CHECK(registry.Gone("keel-5-a"));
  registry.Heartbeat(a);  // pruned or removed while it could not reach the database
  CHECK_FALSE(registry.Gone("keel-5-a"));
}

TEST_CASE("Prune forgets only instances silent for longer than it is told", "[instances][DIST-2]") {
  if (!HavePostgres()) return;
  LedgerFile file("postgres");
  auto db = file.Open();
  InstanceRegistry registry(*db);
  registry.Register(Remote("keel-6-old"));
  registry.Register(Remote("keel-7-new"));
  Age(*db, "keel-6-old", InstanceRegistry::kForgetAfterMs + 1'000);
  CHECK(registry.Prune() == 1);
  REQUIRE(registry.List().size() == 1);
  CHECK(registry.List()[0].owner == "keel-7-new");
}

TEST_CASE(
    "a serving keel is in the registry while it runs and leaves it when it closes, and keel "
    "admin never joins",
    "[instances][DIST-2]") {
  if (!HavePostgres()) return;
  LedgerFile file("postgres");
  auto db = file.Open();
  {
    std::shared_ptr<LedgerService> admin = Service(file, "admin");
    CHECK(InstanceRegistry(*db).List().empty());
    std::shared_ptr<LedgerService> serving = Service(file, "keel-42-serving");
    REQUIRE(serving->JoinInstances().empty());
    const std::vector<InstanceInfo> listed = InstanceRegistry(*db).List();
    REQUIRE(listed.size() == 1);
    CHECK(listed[0].owner == "keel-42-serving");
    CHECK(listed[0].pid == getpid());
    CHECK(listed[0].boot_id == BootId());
  }
  CHECK(InstanceRegistry(*db).Gone("keel-42-serving"));
}

TEST_CASE(
    "on PostgreSQL a claimant is alive while the registry says so, whatever this machine's "
    "pids say",
    "[instances][DIST-2]") {
  if (!HavePostgres()) return;
  LedgerFile file("postgres");
  std::shared_ptr<LedgerService> b = Service(file, "keel-2-b");
  auto db = file.Open();
  InstanceRegistry(*db).Register(Remote("keel-99999999-a"));
  // The pid rule would call it dead (no such pid here); the registry says it runs.
  CHECK(LedgerOwnerGone("keel-99999999-a", "keel-2-b"));
  CHECK_FALSE(b->OwnerGone("keel-99999999-a"));
  // pid 1 runs here, but a keel of that name never registered: gone.
  CHECK_FALSE(LedgerOwnerGone("keel-1-x", "keel-2-b"));
  CHECK(b->OwnerGone("keel-1-x"));
  CHECK_FALSE(b->OwnerGone("keel-2-b"));  // never ourselves
}

TEST_CASE("on PostgreSQL a claim's lease is written and judged by the server's clock",
          "[instances][ledger][DIST-2]") {
  if (!HavePostgres()) return;
  LedgerFile file("postgres");
  auto db = file.Open();
  MutationLedger::Options options;
  options.owner = "keel-3-c";
  options.lease_ms = 5'000;  // no now_ms: the database's clock
  MutationLedger ledger(*db, options);
  const int64_t before = db->ClockMs();
  const MutationLedger::Outcome claim =
      ledger.Claim("restart", "k", "fp", std::chrono::milliseconds(2000));
  const int64_t after = db->ClockMs();
  REQUIRE(claim.status == MutationLedger::Status::kExecuted);
  CHECK(claim.record.lease_until_ms >= before + 5'000);
  CHECK(claim.record.lease_until_ms <= after + 5'000);
}

TEST_CASE(
    "a keyed write claimed by a live keel on another machine is never adopted here, but once "
    "that keel is silent, its claim is adopted and looked up, and a command it started "
    "there may still run",
    "[instances][IDEM-5][DIST-2]") {
  if (!HavePostgres()) return;
  LedgerFile file("postgres");
  auto db = file.Open();
  InstanceRegistry registry(*db);
  registry.Register(Remote("keel-99999999-a"));
  {
    // Keel A (another machine) claims the key for a command it starts there.
    MutationLedger::Options options;
    options.owner = "keel-99999999-a";
    options.lease_ms = 3'600'000;
    MutationLedger a(*db, options);
    LedgerAttempt there;
    there.boot_id = Remote("").boot_id;
    there.pgid = kForeignPid;
    REQUIRE(a.Claim("restart", "k1", Fingerprint("restart", Json{{"job", "web"}}),
                    std::chrono::milliseconds(2000), std::nullopt, there)
                .status == MutationLedger::Status::kExecuted);
  }
  std::shared_ptr<LedgerService> b = Service(file, "keel-2-b");
  int runs = 0;
  int lookups = 0;
  RemoteWriteCall call;
  call.tool = "restart";
  call.key = "k1";
  call.intent_arguments = Json{{"job", "web"}};
  RemoteWriteOps ops;
  ops.run = [&] {
    ++runs;
    return TextResult("restarted");
  };
  ops.lookup = [&] {
    ++lookups;
    return Reconciled{Reconciled::Outcome::kDidNotHappen, Json()};
  };

  const Json live = RunRemoteWrite(*b, call, ops);
  CHECK(live["structuredContent"]["error"]["type"] == "idempotency_in_progress");
  CHECK(runs == 0);
  CHECK(lookups == 0);
  CHECK(b->Borrow().ledger().Lookup("restart", "k1")->owner == "keel-99999999-a");

  Age(*db, "keel-99999999-a", InstanceRegistry::kGoneAfterMs + 1'000);
  const Json silent = RunRemoteWrite(*b, call, ops);
  CHECK(lookups == 1);  // adopted and looked up
  CHECK(runs == 0);     // "did not happen" means nothing while its command may still run
  CHECK(silent["structuredContent"]["error"]["type"] == "idempotency_in_progress");
  const std::optional<LedgerRecord> row = b->Borrow().ledger().Lookup("restart", "k1");
  REQUIRE(row);
  CHECK(row->owner == "keel-2-b");
  CHECK(row->state == LedgerState::kNeedsReconciliation);
}

TEST_CASE(
    "an attempt recorded on another machine may still run, and one of this boot is judged by "
    "its process group",
    "[instances][IDEM-5][DIST-2]") {
  LedgerAttempt elsewhere;
  elsewhere.boot_id = "00000000-0000-0000-0000-000000000000";
  elsewhere.pgid = kForeignPid;
  CHECK(AttemptGone(elsewhere));  // on one machine, another boot id means a reboot
  CHECK_FALSE(AttemptGoneHere(elsewhere));
  LedgerAttempt unknown;
  CHECK_FALSE(AttemptGoneHere(unknown));
  if (BootId().empty()) return;
  LedgerAttempt here;
  here.boot_id = BootId();
  here.pgid = kForeignPid;
  CHECK(AttemptGoneHere(here));  // no such process group on this boot
}

TEST_CASE(
    "on PostgreSQL a task whose keel is registered is left alone whatever its pid and "
    "lease, and a gone keel's task is settled by exactly one survivor",
    "[instances][tasks][TASK-2][DIST-2]") {
  if (!HavePostgres()) return;
  LedgerFile file("postgres");
  auto db = file.Open();
  InstanceRegistry(*db).Register(Remote("keel-99999999-a"));
  TaskStore store(*db);
  const int64_t now = db->ClockMs();
  auto add = [&](const std::string& id, const std::string& owner) {
    TaskRecord task;
    task.task_id = id;
    task.tool = "job";
    task.created_ms = now;
    task.updated_ms = now;
    task.ttl_ms = 3'600'000;
    task.request = {{"name", "job"}, {"arguments", Json::object()}};
    task.owner = owner;
    task.owner_pid = kForeignPid;
    task.lease_until_ms = now - 1;  // expired by any clock
    REQUIRE(store.Create(task, now).outcome == TaskStore::CreateOutcome::kCreated);
  };
  add("alive", "keel-99999999-a");
  add("orphan", "keel-88888888-gone");
  ToolRegistry tools;
  REQUIRE(
      tools.Register(MakeStubTool(StubSpec("job"), [](ToolContext&) { return TextResult("ran"); }))
          .empty());
  auto survivor = [&](const std::string& owner) {
    auto own = file.Open();
    TaskStore mine(*own);
    RecoveryOptions options;
    options.owner = owner;
    options.pid = 1;
    options.registry = true;
    return RecoverOrphanedTasks(mine, tools, options, now);
  };
  CHECK(survivor("keel-2-b") == 1);
  CHECK(survivor("keel-3-c") == 0);  // taken over and settled already
  CHECK(store.Get("alive")->status == TaskStatus::kWorking);
  const TaskRecord orphan = *store.Get("orphan");
  CHECK(orphan.status == TaskStatus::kFailed);
  CHECK(orphan.owner == "keel-2-b");
}

TEST_CASE("TakeOver gives a working task to exactly one of two keels",
          "[instances][tasks][TASK-2][DIST-2]") {
  const std::string backend = GENERATE(Catch::Generators::from_range(LedgerBackends()));
  LedgerFile file(backend);
  auto db = file.Open();
  TaskStore store(*db);
  TaskRecord task;
  task.task_id = "t1";
  task.tool = "job";
  task.created_ms = 1;
  task.updated_ms = 1;
  task.request = {{"name", "job"}};
  task.owner = "keel-9-dead";
  task.owner_pid = 9;
  REQUIRE(store.Create(task, 1).outcome == TaskStore::CreateOutcome::kCreated);
  auto other = file.Open();
  TaskStore second(*other);
  CHECK(store.TakeOver("t1", "keel-9-dead", "keel-2-b", 2));
  CHECK_FALSE(second.TakeOver("t1", "keel-9-dead", "keel-3-c", 3));
  CHECK(second.Get("t1")->owner == "keel-2-b");
  CHECK(second.Get("t1")->owner_pid == 2);
}

}  // namespace keel::instances_test
