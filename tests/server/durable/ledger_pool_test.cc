// LedgerService's pool of connections (--db-connections, DIST-3): connections open as load
// needs and never beyond the limit; a job that borrows again gets its own connection back;
// with every connection lent a borrower waits, then gets SQLITE_BUSY, and a keyed call then
// answers ledger_busy having run nothing; a lease follows its job across a Suspend(). On
// SQLite and, with KEEL_TEST_POSTGRES_URL, on PostgreSQL. The waiting side of each race is
// forced with blocked-thread checks and latches, never with sleeps.
#include <atomic>
#include <chrono>
#include <latch>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <catch2/catch.hpp>
#include <sqlite3.h>

#include "fakes/blocked_thread.h"
#include "ledger/ledger_fixture.h"
#include "server/durable/ledger_service.h"
#include "server/runtime/suspend.h"
#include "server/runtime/worker_pool.h"

namespace keel::ledger_pool_test {
namespace {

using Millis = std::chrono::milliseconds;

std::unique_ptr<LedgerService> OpenPool(const LedgerFile& file, size_t connections) {
  LedgerService::Options options;
  options.path = file.path();
  options.owner = "keel-pool-test";
  options.connections = connections;
  std::string error;
  int exit_code = 0;
  std::unique_ptr<LedgerService> service = LedgerService::Open(options, &error, &exit_code);
  INFO(error);
  REQUIRE(service != nullptr);
  return service;
}

// A lease held on a thread of its own until Release().
class Holder {
 public:
  explicit Holder(LedgerService& service) {
    thread_ = std::thread([this, &service] {
      {
        const LedgerService::Lease lease = service.Borrow();
        db_ = &lease.db();
        held_.count_down();
        release_.wait();
      }
      returned_.count_down();
    });
    held_.wait();
  }
  ~Holder() {
    Release();
    thread_.join();
  }
  void Release() {
    if (!released_) release_.count_down();
    released_ = true;
  }
  void WaitReturned() { returned_.wait(); }
  const Database* db() const { return db_; }

 private:
  std::latch held_{1};
  std::latch release_{1};
  std::latch returned_{1};
  bool released_ = false;
  const Database* db_ = nullptr;
  std::thread thread_;
};

}  // namespace

TEST_CASE("a job that borrows while it holds a connection gets the same one and never waits",
          "[ledger-pool][DIST-3]") {
  const std::string backend = GENERATE(from_range(LedgerBackends()));
  LedgerFile file(backend);
  std::unique_ptr<LedgerService> service = OpenPool(file, 1);
  const LedgerService::Lease outer = service->Borrow();
  const LedgerService::Lease inner = service->Borrow(Millis(0));
  CHECK(&inner.db() == &outer.db());
  CHECK(service->connections_open() == 1);
  CHECK(service->connections_lent() == 1);
}

TEST_CASE("connections open as borrowers need them and are kept for the next",
          "[ledger-pool][DIST-3]") {
  const std::string backend = GENERATE(from_range(LedgerBackends()));
  LedgerFile file(backend);
  std::unique_ptr<LedgerService> service = OpenPool(file, 3);
  CHECK(service->connections_open() == 1);  // the one that migrated
  {
    Holder first(*service);
    Holder second(*service);
    CHECK(first.db() != second.db());
    CHECK(service->connections_open() == 2);
    CHECK(service->connections_lent() == 2);
  }
  CHECK(service->connections_lent() == 0);
  const LedgerService::Lease again = service->Borrow(Millis(0));
  CHECK(service->connections_open() == 2);
}

TEST_CASE("with every connection lent, a borrower waits and gets the first one returned",
          "[ledger-pool][DIST-3]") {
  const std::string backend = GENERATE(from_range(LedgerBackends()));
  LedgerFile file(backend);
  std::unique_ptr<LedgerService> service = OpenPool(file, 1);
  Holder holder(*service);
  std::atomic<pid_t> tid{0};
  std::atomic<const Database*> got{nullptr};
  std::thread borrower([&] {
    tid = CurrentThreadId();
    const LedgerService::Lease lease = service->Borrow(std::chrono::seconds(30));
    got = &lease.db();
  });
  while (tid.load() == 0) std::this_thread::yield();
  REQUIRE(WaitUntilAsleep(tid.load()));
  CHECK(got.load() == nullptr);
  holder.Release();
  borrower.join();
  CHECK(got.load() == holder.db());
  CHECK(service->connections_open() == 1);
}

TEST_CASE("with every connection lent past the wait, Borrow fails busy naming --db-connections",
          "[ledger-pool][DIST-3]") {
  const std::string backend = GENERATE(from_range(LedgerBackends()));
  LedgerFile file(backend);
  std::unique_ptr<LedgerService> service = OpenPool(file, 1);
  Holder holder(*service);
  try {
    (void)service->Borrow(Millis(0));
    FAIL("Borrow returned with every connection lent");
  } catch (const SqliteError& e) {
    CHECK((e.code & 0xff) == SQLITE_BUSY);
    CHECK_THAT(e.what(), Catch::Contains("--db-connections"));
  }
  CHECK(service->connections_open() == 1);
}

TEST_CASE("a keyed call that finds no connection free answers ledger_busy and runs nothing",
          "[ledger-pool][DIST-3][IDEM-3]") {
  const std::string backend = GENERATE(from_range(LedgerBackends()));
  LedgerFile file(backend);
  std::unique_ptr<LedgerService> service = OpenPool(file, 1);
  Holder holder(*service);
  bool ran = false;
  const Json answer = service->RunKeyed(
      "charge", "k1", Json{{"amount", 1}}, Millis(0),
      [&](Database&) {
        ran = true;
        return EffectOutcome{Json{{"content", Json::array()}}};
      },
      [](const KillSwitchState&) {
        return Json{{"blocked", true}};
      });
  CHECK_FALSE(ran);
  CHECK(answer["isError"] == true);
  CHECK(answer["structuredContent"]["error"]["type"] == "ledger_busy");
  holder.Release();
  holder.WaitReturned();
  // The key was never taken: the same call runs once a connection is free.
  const Json later = service->RunKeyed(
      "charge", "k1", Json{{"amount", 1}}, Millis(5000),
      [&](Database&) {
        ran = true;
        return EffectOutcome{Json{{"content", Json::array()}}};
      },
      [](const KillSwitchState&) {
        return Json{{"blocked", true}};
      });
  CHECK(ran);
  CHECK_FALSE(later.contains("isError"));
}

TEST_CASE(
    "a lease kept across a suspension follows its job, and a job meanwhile gets another connection",
    "[ledger-pool][DIST-3][pool][fiber]") {
  LedgerFile file("sqlite");
  std::unique_ptr<LedgerService> service = OpenPool(file, 2);
  // Two workers: a suspended job keeps its slot, so one would never start the second job.
  // Whichever thread each runs on, the lease belongs to the job.
  WorkerPool pool(2);
  std::latch suspended{1};
  ResumeFn resume_first;
  std::atomic<const Database*> before{nullptr}, after{nullptr}, other{nullptr};
  pool.Submit([&] {
    const LedgerService::Lease lease = service->Borrow();
    before = &lease.db();
    Suspend([&](ResumeFn resume) {
      resume_first = std::move(resume);
      suspended.count_down();
    });
    after = &service->Borrow(Millis(0)).db();  // the job's own, again: no wait
  });
  suspended.wait();
  std::latch second_done{1};
  pool.Submit([&] {
    other = &service->Borrow(Millis(0)).db();
    second_done.count_down();
  });
  second_done.wait();
  resume_first();
  REQUIRE(pool.WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(30)));
  CHECK(after.load() == before.load());
  CHECK(other.load() != nullptr);
  CHECK(other.load() != before.load());
  CHECK(service->connections_lent() == 0);
}

}  // namespace keel::ledger_pool_test
