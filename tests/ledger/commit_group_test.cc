// Unit tests for ledger/commit_group.h: group commit with a savepoint per write (IDEM-3).
// Batches are forced without sleeps: a first write holds the transaction open on a latch
// until the writes under test are queued behind it (CommitGroup::queued()).
#include "ledger/commit_group.h"

#include <atomic>
#include <functional>
#include <future>
#include <latch>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "ledger/fingerprint.h"
#include "ledger/mutation_ledger.h"
#include "ledger_fixture.h"

using keel::ChargeEffect;
using keel::CommitGroup;
using keel::CountCharges;
using keel::Database;
using keel::LedgerFile;
using keel::MutationLedger;
using keel::SqliteError;
using Keep = CommitGroup::Keep;
using Status = MutationLedger::Status;
using namespace std::chrono_literals;

namespace commit_group_test {

namespace {

void InsertCharge(Database& db, const std::string& id) {
  db.Prepare("INSERT INTO charges VALUES(?1, 'acct-1', 500, NULL, 0)").Bind(1, id).Run();
}

bool HasCharge(Database& db, const std::string& id) {
  keel::Statement row = db.Prepare("SELECT 1 FROM charges WHERE charge_id = ?1");
  row.Bind(1, id);
  return row.Step();
}

void SpinUntilQueued(const CommitGroup& group, size_t n) {
  while (group.queued() < n) std::this_thread::yield();
}

// A first write that holds its transaction open until Release(): what is queued meanwhile
// goes into the next transaction together.
class HeldTransaction {
 public:
  HeldTransaction(CommitGroup& group, LedgerFile& file)
      : db_(file.Open()), thread_([this, &group] {
          group.Run(*db_, 10s, [this](Database& db) {
            InsertCharge(db, "held");
            entered_.count_down();
            release_.wait();
            return Keep::kKeep;
          });
        }) {
    entered_.wait();
  }
  ~HeldTransaction() {
    Release();
    thread_.join();
  }
  void Release() {
    if (!released_.exchange(true)) release_.count_down();
  }

 private:
  std::unique_ptr<Database> db_;
  std::latch entered_{1};
  std::latch release_{1};
  std::atomic<bool> released_{false};
  std::thread thread_;
};

// Starts a write on a thread of its own, with its own connection, once the ones before it
// are queued: queue order is start order.
std::future<Keep> StartWrite(CommitGroup& group, LedgerFile& file, size_t queued_before,
                             std::function<Keep(Database&)> body,
                             std::chrono::milliseconds budget = 10s) {
  SpinUntilQueued(group, queued_before);
  auto future = std::async(std::launch::async, [&group, &file, body, budget] {
    std::string error;
    auto db = Database::Open(file.path(), &error);
    if (!db) throw std::runtime_error("cannot open the ledger: " + error);
    return group.Run(*db, budget, body);
  });
  SpinUntilQueued(group, queued_before + 1);
  return future;
}

}  // namespace

TEST_CASE("IDEM-3 writes queued while a transaction is written commit together in the next one",
          "[ledger][IDEM-3][DIST-4]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  CommitGroup group(nullptr, file.Open());
  std::vector<std::future<Keep>> writes;
  {
    HeldTransaction held(group, file);
    for (size_t i = 0; i < 3; ++i) {
      writes.push_back(StartWrite(group, file, i, [i](Database& db) {
        InsertCharge(db, "w" + std::to_string(i));
        return Keep::kKeep;
      }));
    }
  }
  for (auto& write : writes) CHECK(write.get() == Keep::kKeep);
  CHECK(group.transactions() == 2);  // the held one, then the three together
  CHECK(group.units() == 4);
  auto reader = file.Open();
  CHECK(CountCharges(*reader) == 4);
}

TEST_CASE(
    "IDEM-3 a write that throws is rolled back alone and the others of its transaction "
    "commit",
    "[ledger][IDEM-3][DIST-4]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  CommitGroup group;
  std::future<Keep> before;
  std::future<Keep> failing;
  std::future<Keep> after;
  {
    HeldTransaction held(group, file);
    before = StartWrite(group, file, 0, [](Database& db) {
      InsertCharge(db, "before");
      return Keep::kKeep;
    });
    failing = StartWrite(group, file, 1, [](Database& db) -> Keep {
      InsertCharge(db, "failing");
      throw std::runtime_error("the effect broke");
    });
    after = StartWrite(group, file, 2, [](Database& db) {
      InsertCharge(db, "after");
      return Keep::kKeep;
    });
  }
  CHECK(before.get() == Keep::kKeep);
  CHECK_THROWS_WITH(failing.get(), "the effect broke");
  CHECK(after.get() == Keep::kKeep);
  CHECK(group.transactions() == 2);
  auto reader = file.Open();
  CHECK(HasCharge(*reader, "before"));
  CHECK_FALSE(HasCharge(*reader, "failing"));
  CHECK(HasCharge(*reader, "after"));
}

TEST_CASE("IDEM-3 a write that asks to be undone leaves nothing and the others commit",
          "[ledger][IDEM-3][DIST-4]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  CommitGroup group;
  std::future<Keep> undone;
  std::future<Keep> kept;
  {
    HeldTransaction held(group, file);
    undone = StartWrite(group, file, 0, [](Database& db) {
      InsertCharge(db, "undone");
      return Keep::kUndo;
    });
    kept = StartWrite(group, file, 1, [](Database& db) {
      InsertCharge(db, "kept");
      return Keep::kKeep;
    });
  }
  CHECK(undone.get() == Keep::kUndo);
  CHECK(kept.get() == Keep::kKeep);
  auto reader = file.Open();
  CHECK_FALSE(HasCharge(*reader, "undone"));
  CHECK(HasCharge(*reader, "kept"));
}

TEST_CASE(
    "IDEM-3 a write that loses the shared transaction fails the writes before it, and the "
    "ones after commit in the next",
    "[ledger][IDEM-3][DIST-4]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  CommitGroup group;
  std::future<Keep> before;
  std::future<Keep> losing;
  std::future<Keep> after;
  {
    HeldTransaction held(group, file);
    before = StartWrite(group, file, 0, [](Database& db) {
      InsertCharge(db, "before");
      return Keep::kKeep;
    });
    // What SQLite does on its own after SQLITE_FULL or an I/O error: the whole
    // transaction is rolled back.
    losing = StartWrite(group, file, 1, [](Database& db) {
      InsertCharge(db, "losing");
      (void)db.Exec("ROLLBACK");  // checked below: "losing" is not in the file
      return Keep::kKeep;
    });
    after = StartWrite(group, file, 2, [](Database& db) {
      InsertCharge(db, "after");
      return Keep::kKeep;
    });
  }
  CHECK_THROWS_AS(before.get(), SqliteError);
  CHECK_THROWS_AS(losing.get(), SqliteError);
  CHECK(after.get() == Keep::kKeep);
  auto reader = file.Open();
  CHECK(HasCharge(*reader, "held"));
  CHECK_FALSE(HasCharge(*reader, "before"));
  CHECK_FALSE(HasCharge(*reader, "losing"));
  CHECK(HasCharge(*reader, "after"));
  CHECK(group.units() == 2);  // held and after: the lost ones were not committed
}

TEST_CASE("IDEM-3 a write still queued when its budget runs out fails busy and runs nothing",
          "[ledger][IDEM-3][DIST-4]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  CommitGroup group;
  HeldTransaction held(group, file);
  auto db = file.Open();
  bool ran = false;
  try {
    group.Run(*db, 0ms, [&ran](Database&) {
      ran = true;
      return Keep::kKeep;
    });
    FAIL("no busy error");
  } catch (const SqliteError& e) {
    CHECK((e.code & 0xff) == 5);  // SQLITE_BUSY
  }
  CHECK_FALSE(ran);
  CHECK(group.queued() == 0);
}

TEST_CASE("IDEM-3 the same key twice in one shared transaction runs its effect once",
          "[ledger][IDEM-3][DIST-4]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  CommitGroup group(nullptr, file.Open());
  auto first_db = file.Open();
  auto second_db = file.Open();
  auto options = [&](const std::string& owner) {
    MutationLedger::Options o = file.OptionsFor(owner);
    o.group = &group;
    return o;
  };
  MutationLedger first(*first_db, options("p1"));
  MutationLedger second(*second_db, options("p1"));
  const std::string print = keel::Fingerprint("charge", {{"cents", 500}});
  ChargeEffect effect;
  std::future<MutationLedger::Outcome> a;
  std::future<MutationLedger::Outcome> b;
  {
    HeldTransaction held(group, file);
    a = std::async(std::launch::async, [&] {
      return first.RunInDatabase("charge", "k-1", print, 10s, std::ref(effect));
    });
    SpinUntilQueued(group, 1);
    b = std::async(std::launch::async, [&] {
      return second.RunInDatabase("charge", "k-1", print, 10s, std::ref(effect));
    });
    SpinUntilQueued(group, 2);
  }
  const auto ra = a.get();
  const auto rb = b.get();
  CHECK(ra.status == Status::kExecuted);
  CHECK(rb.status == Status::kReplayed);
  CHECK(rb.result == ra.result);
  CHECK(effect.runs == 1);
  CHECK(group.transactions() == 2);
  CHECK(CountCharges(*first_db) == 2);  // the held write's and the effect's
}

TEST_CASE("IDEM-3 ledgers racing new keys through one group run each effect once",
          "[ledger][IDEM-3][DIST-4]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  CommitGroup group(nullptr, file.Open());
  constexpr int kThreads = 8;
  constexpr int kKeys = 40;
  const std::string print = keel::Fingerprint("charge", {{"cents", 500}});
  ChargeEffect effect;
  std::atomic<int> executed{0};
  std::atomic<int> other{0};  // neither executed nor replayed (Catch2 is not for threads)
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      std::string error;
      auto db = Database::Open(file.path(), &error);
      if (!db) {
        other += kKeys;
        return;
      }
      MutationLedger::Options o = file.OptionsFor("p1");
      o.group = &group;
      MutationLedger ledger(*db, o);
      for (int k = 0; k < kKeys; ++k) {
        // Every thread presents every key: one execution each, the rest replays.
        const auto out =
            ledger.RunInDatabase("charge", "k-" + std::to_string(k), print, 30s, std::ref(effect));
        if (out.status == Status::kExecuted) {
          ++executed;
        } else if (out.status != Status::kReplayed) {
          ++other;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(other == 0);
  CHECK(executed == kKeys);
  CHECK(effect.runs == kKeys);
  auto reader = file.Open();
  CHECK(CountCharges(*reader) == kKeys);
  CHECK(group.transactions() <= group.units());
}

}  // namespace commit_group_test

namespace commit_group_test {

TEST_CASE("a script runs its statements in order and stops at the first that fails",
          "[ledger][IDEM-3]") {
  LedgerFile file(GENERATE(Catch::Generators::from_range(keel::LedgerBackends())));
  auto db = file.Open();
  db->BeginImmediate();
  const std::string_view good[] = {"SAVEPOINT s1",
                                   "INSERT INTO charges VALUES('a', 'acct-1', 1, NULL, 0)",
                                   "RELEASE SAVEPOINT s1"};
  db->RunScript(good);
  const std::string_view bad[] = {"INSERT INTO charges VALUES('b', 'acct-1', 1, NULL, 0)",
                                  "INSERT INTO charges VALUES('a', 'acct-1', 1, NULL, 0)",
                                  "INSERT INTO charges VALUES('c', 'acct-1', 1, NULL, 0)"};
  CHECK_THROWS_AS(db->RunScript(bad), SqliteError);  // 'a' twice: a unique violation
  if (db->dialect() == Database::Dialect::kSqlite) {
    // SQLite keeps what ran before the failure, and the transaction.
    CHECK(HasCharge(*db, "b"));
    CHECK_FALSE(HasCharge(*db, "c"));
    db->Commit();
    CHECK(CountCharges(*db) == 2);
  } else {
    // PostgreSQL's transaction is aborted by the error: nothing of it commits.
    db->Rollback();
    CHECK(CountCharges(*db) == 0);
  }
}

}  // namespace commit_group_test
