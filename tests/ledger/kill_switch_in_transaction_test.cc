// Unit tests for the kill switch as MutationLedger::RunInDatabase decides it (OPS-2): inside
// the new key's write transaction, read once per group transaction. The race is forced
// without sleeps: a first write holds the group's transaction open on a latch while the
// mutation under test queues behind it (CommitGroup::queued()).
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <latch>
#include <memory>
#include <string>
#include <thread>

#include <catch2/catch.hpp>

#include "ledger/commit_group.h"
#include "ledger/kill_switch.h"
#include "ledger/mutation_ledger.h"
#include "ledger_fixture.h"

namespace keel::kill_switch_in_transaction_test {
namespace {

using Catch::Generators::from_range;
using Keep = CommitGroup::Keep;
using Status = MutationLedger::Status;
using namespace std::chrono_literals;

void TurnOn(Database& db) {
  db.Prepare(
        "INSERT INTO settings(name, value, updated_ms, updated_by) "
        "VALUES('block_writes', 'on', 1, 'test') "
        "ON CONFLICT(name) DO UPDATE SET value = excluded.value")
      .Run();
}

// A mutation ledger on its own connection, sharing `group` and `memo` as a process's do.
struct Writer {
  Writer(LedgerFile& file, CommitGroup& group, KillSwitchMemo& memo) : db(file.Open()) {
    MutationLedger::Options options = file.OptionsFor("keel-1-me");
    options.group = &group;
    options.kill_switch = &memo;
    ledger = std::make_unique<MutationLedger>(*db, options);
  }
  MutationLedger::Outcome Charge(const std::string& key, ChargeEffect& effect) {
    return ledger->RunInDatabase("charge", key, "fp-" + key, 10s, std::ref(effect));
  }
  std::unique_ptr<Database> db;
  std::unique_ptr<MutationLedger> ledger;
};

// A first group transaction held open until Release(): what queues meanwhile goes into the
// next transaction. `before_commit` runs in it once released.
class HeldTransaction {
 public:
  HeldTransaction(CommitGroup& group, LedgerFile& file,
                  std::function<void(Database&)> before_commit = nullptr)
      : db_(file.Open()), thread_([this, &group, before_commit] {
          group.Run(*db_, 10s, [this, &before_commit](Database& db) {
            entered_.count_down();
            release_.wait();
            if (before_commit) before_commit(db);
            return Keep::kKeep;
          });
        }) {
    entered_.wait();
  }
  ~HeldTransaction() { Release(); }
  void Release() {
    if (thread_.joinable()) {
      release_.count_down();
      thread_.join();
    }
  }

 private:
  std::unique_ptr<Database> db_;
  std::latch entered_{1};
  std::latch release_{1};
  std::thread thread_;
};

}  // namespace

TEST_CASE("OPS-2 a switch turned on while a new key waits for the write lock stops its effect",
          "[ledger][OPS-2]") {
  LedgerFile file(GENERATE(from_range(LedgerBackends())));
  CommitGroup group;
  KillSwitchMemo memo;
  // The first transaction: it turns the switch on, but only once the mutation is queued.
  HeldTransaction holder(group, file, TurnOn);
  ChargeEffect charge;
  auto mutation = std::async(std::launch::async, [&] {
    Writer writer(file, group, memo);
    return writer.Charge("k1", charge);
  });
  while (group.queued() < 1) std::this_thread::yield();  // it has decided nothing yet
  holder.Release();
  const MutationLedger::Outcome out = mutation.get();
  CHECK(out.status == Status::kBlocked);
  CHECK(out.kill_switch.blocked);
  CHECK(charge.runs == 0);
  auto db = file.Open();
  CHECK(CountCharges(*db) == 0);
  CHECK_FALSE(MutationLedger(*db, file.OptionsFor("reader")).Lookup("charge", "k1"));
}

TEST_CASE("OPS-2 the switch read by one transaction is not reused by the next", "[ledger][OPS-2]") {
  LedgerFile file(GENERATE(from_range(LedgerBackends())));
  CommitGroup group;
  KillSwitchMemo memo;
  Writer writer(file, group, memo);
  ChargeEffect charge;
  REQUIRE(writer.Charge("k1", charge).status == Status::kExecuted);
  auto shell = file.Open();  // `keel admin block-writes on`, from another connection
  SetWritesBlocked(*shell, true, 2, "keel admin (test)");
  const MutationLedger::Outcome blocked = writer.Charge("k2", charge);
  CHECK(blocked.status == Status::kBlocked);
  CHECK(blocked.kill_switch.updated_by == "keel admin (test)");
  // A finished key is still replayed: a replay changes nothing.
  CHECK(writer.Charge("k1", charge).status == Status::kReplayed);
  SetWritesBlocked(*shell, false, 3, "keel admin (test)");
  CHECK(writer.Charge("k2", charge).status == Status::kExecuted);
  CHECK(charge.runs == 2);
}

TEST_CASE("OPS-2 the units of one transaction share one read of the switch", "[ledger][OPS-2]") {
  LedgerFile file(GENERATE(from_range(LedgerBackends())));
  CommitGroup group;
  KillSwitchMemo memo;
  HeldTransaction holder(group, file);
  ChargeEffect first, second;
  second.charge_id = "ch-2";
  auto one = std::async(std::launch::async, [&] {
    Writer writer(file, group, memo);
    return writer.Charge("k1", first);
  });
  while (group.queued() < 1) std::this_thread::yield();
  auto two = std::async(std::launch::async, [&] {
    Writer writer(file, group, memo);
    return writer.Charge("k2", second);
  });
  while (group.queued() < 2) std::this_thread::yield();
  holder.Release();
  CHECK(one.get().status == Status::kExecuted);
  CHECK(two.get().status == Status::kExecuted);
  CHECK(group.transactions() == 2);  // the holder's, then both mutations' together
  CHECK(memo.group == &group);
  CHECK(memo.serial == group.transaction_serial());
}

TEST_CASE(
    "a replay the finished-row cache does not hold is read in the write transaction, "
    "writes nothing and is kept",
    "[ledger][IDEM-2][DIST-4]") {
  LedgerFile file(GENERATE(from_range(LedgerBackends())));
  // Another process executed the key: this one's cache has never seen it.
  auto other_db = file.Open();
  MutationLedger other(*other_db, file.OptionsFor("keel-2-other"));
  ChargeEffect charge;
  REQUIRE(other.RunInDatabase("charge", "k1", "fp", 10s, std::ref(charge)).status ==
          Status::kExecuted);
  auto db = file.Open();
  FinishedRows finished;
  MutationLedger::Options options = file.OptionsFor("keel-1-me");
  options.finished = &finished;
  MutationLedger ledger(*db, options);
  const MutationLedger::Outcome replay =
      ledger.RunInDatabase("charge", "k1", "fp", 10s, std::ref(charge));
  CHECK(replay.status == Status::kReplayed);
  CHECK(replay.record.attempts == 1);  // a replay is not counted: nothing was written
  CHECK(finished.size() == 1);
  CHECK(ledger.RunInDatabase("charge", "k1", "fp2", 10s, std::ref(charge)).status ==
        Status::kMismatch);
  CHECK(charge.runs == 1);
}

}  // namespace keel::kill_switch_in_transaction_test
