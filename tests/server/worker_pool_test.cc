// WorkerPool: inline mode for deterministic tests; threads run every job once; WaitIdle
// reports a job that does not finish. Latches, not sleeps, hold jobs in place.
#include <catch2/catch.hpp>

#include <atomic>

#include "server/cancellation.h"
#include "server/worker_pool.h"

namespace keel {
namespace {

TEST_CASE("a pool of zero threads runs each job inline, inside Submit") {
  WorkerPool pool(0);
  int ran = 0;
  pool.Submit([&] { ++ran; });
  CHECK(ran == 1);
  CHECK(pool.pending() == 0);
}

TEST_CASE("every submitted job runs exactly once") {
  std::atomic<int> ran{0};
  {
    WorkerPool pool(2);
    for (int i = 0; i < 1000; ++i) pool.Submit([&] { ran.fetch_add(1); });
    CHECK(pool.WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(30)));
  }
  CHECK(ran.load() == 1000);
}

TEST_CASE("WaitIdle reports a job still running at the deadline") {
  WorkerPool pool(1);
  CancellationToken release;
  pool.Submit([release] { release.WaitUntil(TimePoint::max()); });
  CHECK_FALSE(pool.WaitIdle(std::chrono::steady_clock::now()));
  CHECK(pool.pending() == 1);
  release.Cancel();
  CHECK(pool.WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(30)));
}

TEST_CASE("a cancellation callback registered after the cancel runs at once") {
  CancellationToken token;
  token.Cancel();
  bool ran = false;
  auto registration = token.OnCancel([&] { ran = true; });
  CHECK(ran);
  CHECK(token.WaitUntil(TimePoint::max()));  // returns at once: already cancelled
}

TEST_CASE("a dropped registration never runs its callback") {
  CancellationToken token;
  bool ran = false;
  { auto registration = token.OnCancel([&] { ran = true; }); }
  token.Cancel();
  CHECK_FALSE(ran);
}

}  // namespace
}  // namespace keel
